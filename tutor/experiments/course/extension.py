"""Context extension: RoPE frequencies under none / PI / NTK-aware / YaRN, and what each does to a
RoPE model trained at a short block size when it reads 1×, 2× and 4× that length.

No fine-tuning happens here (that is context-finetune, a long experiment): the shipped short-context
checkpoint is loaded with its frequency table swapped (config overrides), and its loss and attention
entropy on the validation poems are measured as they are (tutor/model/context.py).

The measurement scores most of the validation split (2,048 windows from its start) at three lengths with four tables, which takes minutes on
a CPU, so it is precomputed: `python -m tutor.model.context tutor/model/checkpoints/gpt-rope-short.pt` stores the tables
for scales 2, 4 and 8 at the default window count in the checkpoint's metadata, and the experiment reads
them (a few milliseconds once the model is loaded). Other settings, or a checkpoint without tables, are
measured when asked, on as many windows as the `windows` parameter says.
"""

from __future__ import annotations

import math
import time

from tutor.experiments import cache
from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.params import ContextScalingParams
from tutor.experiments.result import Msg, Num, Result, Series, SeriesPanel, TablePanel, about, reading, result
from tutor.experiments.run_context import RunContext
from tutor.settings import TRAINING_PROGRESS_EVERY_S

METHODS = (
    "none",
    "pi",
    "ntk",
    "yarn",
)  # tutor.model.context.METHODS, kept here so importing stays torch-free
MULTIPLES = (1, 2, 4)

TEXT = "exp.context-scaling."


def val_text() -> str:
    from tutor.experiments.course.course_text import course_texts

    return course_texts()[1]


def measured(p: ContextScalingParams, ctx: RunContext, base) -> tuple[dict, bool]:
    """The loss and entropy tables: stored in the checkpoint for these settings, else measured now.
    Returns (table as tutor.model.context.scaling_table makes it, whether it was stored)."""
    from tutor.model.context import scaling_table, stored_table

    stored = stored_table(base.meta, p.scale, p.windows)
    if stored is not None:
        return stored, True
    L0 = base.model.cfg.block_size

    def model_for(method: str):
        if method == "none":
            return base.model
        stretched = dict(rope_scaling=method, rope_scale=p.scale, rope_original_max=L0)
        return cache.checkpoint(cache.ROPE_SHORT, **stretched).model

    ids = base.tokenizer.encode(val_text(), unknown="unk")
    clock = MeasureClock(p, ctx, base.model, ids, L0)
    try:
        table = scaling_table(
            model_for,
            L0,
            ids,
            p.scale,
            p.windows,
            METHODS,
            ctx.should_stop,
            on_method=lambda _: ctx.check(),
            on_batch=lambda _: clock.tick(),
        )
    except InterruptedError:
        raise Cancelled() from None
    return table, False


class MeasureClock:
    """How long a measurement takes, said before it starts and while it runs: "measuring" events, the first
    with the seconds expected (a batch of each length timed here, after a warm-up batch, times the batches
    every table reads) and, for a long one, how many windows would take about FEWER_S; then at most every
    TRAINING_PROGRESS_EVERY_S seconds the batches done and the time left at the pace measured so far. A
    measurement of a few batches a length is not timed (it takes about as long as its timing would)."""

    FEWER_S = 15.0  # the offer: about this long
    OFFER_FROM_S = 60.0  # offered for a measurement at least this long

    def __init__(self, p: ContextScalingParams, ctx: RunContext, model, ids: list[int], L0: int) -> None:
        from tutor.model.context import BATCH, batches_of

        self.ctx, self.p, self.ids_count = ctx, p, len(ids)
        lengths = [k * L0 for k in MULTIPLES]
        batches = batches_of(len(ids), lengths, p.windows)
        self.cost: dict[int, float] | None = None
        if len(batches) >= 4 * len(lengths):
            self.cost = {length: self._batch_s(model, ids, length, L0) / BATCH for length in lengths}
        self.plan = [n * self.cost[length] for length, n in batches] * len(METHODS) if self.cost else []
        self.done, self.done_s, self.last = 0, 0.0, 0.0
        self.t0 = time.perf_counter()
        if self.cost:
            self._emit(first=True)

    @staticmethod
    def _batch_s(model, ids: list[int], length: int, L0: int) -> float:
        from tutor.model.context import BATCH, measure

        measure(model, ids, [length], BATCH, L0)  # warm-up
        t = time.perf_counter()
        measure(model, ids, [length], BATCH, L0)
        return time.perf_counter() - t

    def seconds(self, windows: int) -> float:
        """The expected seconds of the measurement at `windows` windows."""
        from tutor.model.context import batches_of

        assert self.cost is not None  # asked after the batches were timed
        lengths = sorted(self.cost)
        return sum(n * self.cost[length] for length, n in batches_of(self.ids_count, lengths, windows)) * len(
            METHODS
        )

    def tick(self) -> None:
        if not self.cost:
            return
        self.done_s += self.plan[min(self.done, len(self.plan) - 1)]
        self.done += 1
        if time.perf_counter() - self.last >= TRAINING_PROGRESS_EVERY_S or self.done == len(self.plan):
            self._emit()

    def _emit(self, first: bool = False) -> None:
        self.last = time.perf_counter()
        planned, left = sum(self.plan), sum(self.plan) - self.done_s
        prior = sum(self.plan[:3])  # as the job clocks do: the timing counts as a few batches run at its pace
        pace = (self.last - self.t0 + prior) / (self.done_s + prior)
        event = {
            "event": "measuring",
            "what": Msg(
                f"{TEXT}measuring_what", scale=Num(self.p.scale), windows=self.p.windows
            ).model_dump(),
            "done": self.done,
            "total": len(self.plan),
            "eta_s": left * pace,
            "seconds": planned,
        }
        if first and planned >= self.OFFER_FROM_S:
            fewer = 2 ** max(0, int(math.log2(max(1.0, self.p.windows * self.FEWER_S / planned))))
            if fewer < self.p.windows:
                event["offer"] = Msg(
                    "run.measuring_fewer", windows=fewer, time=about(self.seconds(fewer))
                ).model_dump()
        self.ctx.emit(event)


def _buckets(values: list[float], size: int) -> list[float]:
    return [sum(values[i : i + size]) / len(values[i : i + size]) for i in range(0, len(values), size)]


def run_context_scaling(p: ContextScalingParams, ctx: RunContext) -> Result:
    base = cache.checkpoint(cache.ROPE_SHORT)
    cfg = base.model.cfg
    if cfg.pos != "rope":
        raise ExperimentError("err.experiment.not_rope", name=cache.ROPE_SHORT, pos=cfg.pos)
    L0 = cfg.block_size
    freq_rows = _frequency_rows(p, cfg)
    table, stored = measured(p, ctx, base)
    metrics, loss_rows, entropy_rows = _scores(table, L0, stored)
    # along the longest length, in buckets of positions
    loss_by_position, entropy_by_position = (
        {m: _buckets(table["methods"][m][-1][f"{kind}_by_position"], p.bucket) for m in METHODS}
        for kind in ("loss", "entropy")
    )
    longest = MULTIPLES[-1] * L0
    xs = [float(s) for s in range(0, longest, p.bucket)]
    evenly = _buckets([math.log(i + 1) for i in range(longest)], p.bucket)
    methods = [Msg(f"term.method.{m}") for m in METHODS]
    lengths = [f"{k}× = {k * L0}" for k in MULTIPLES]
    panels = [
        TablePanel(
            title=Msg(f"{TEXT}freqs", d=cfg.head_dim, scale=Num(p.scale), length=L0),
            columns=[Msg("exp.col.pair"), *methods],
            rows=freq_rows,
        ),
        TablePanel(
            title=Msg(f"{TEXT}losses", length=L0), columns=[Msg("exp.col.method"), *lengths], rows=loss_rows
        ),
        TablePanel(
            title=Msg(f"{TEXT}entropies", length=L0),
            columns=[Msg("exp.col.method"), *lengths],
            rows=entropy_rows,
        ),
        SeriesPanel(
            title=Msg(f"{TEXT}plot", n=longest, bucket=p.bucket),
            x_label=Msg("exp.col.position"),
            y_label=Msg(f"{TEXT}loss"),
            series=[Series(name=Msg(f"term.method.{m}"), x=xs, y=v) for m, v in loss_by_position.items()],
        ),
        TablePanel(
            title=Msg(f"{TEXT}bands", n=longest, bucket=p.bucket),
            columns=[Msg("exp.col.position"), *methods, Msg(f"{TEXT}lowest")],
            rows=_band_rows(loss_by_position, xs, p.bucket, longest),
        ),
        SeriesPanel(
            title=Msg(f"{TEXT}entropy_plot", n=longest, bucket=p.bucket),
            x_label=Msg("exp.col.position"),
            y_label=Msg(f"{TEXT}entropy"),
            series=[
                *(Series(name=Msg(f"term.method.{m}"), x=xs, y=v) for m, v in entropy_by_position.items()),
                Series(name=Msg(f"{TEXT}uniform"), x=xs, y=evenly),
            ],
        ),
        reading(_note(metrics, L0, stored), tables=True),
    ]
    return result("context-scaling", p, metrics, panels)


def _frequency_rows(p: ContextScalingParams, cfg) -> list[list]:
    """Each method's RoPE frequency per pair of dimensions, and its attention factor."""
    from tutor.model.positions import rope_inv_freq

    d = cfg.head_dim
    tables = {m: rope_inv_freq(d, cfg.rope_base, m, p.scale, cfg.block_size) for m in METHODS}
    rows = [[i, *(Num(float(tables[m][0][i])) for m in METHODS)] for i in range(d // 2)]
    rows.append([Msg(f"{TEXT}factor"), *(Num(tables[m][1], 5) for m in METHODS)])
    return rows


def _scores(table: dict, L0: int, stored: bool) -> tuple[dict[str, float], list[list], list[list]]:
    """The metrics, and the loss and entropy rows per method at each length."""
    metrics: dict[str, float] = {}
    loss_rows, entropy_rows = [], []
    for method in METHODS:
        # every method stretches by the chosen scale at every length: the 1× column shows its cost
        # where the model needs no stretching at all
        scores = table["methods"][method]
        for k, score in zip(MULTIPLES, scores, strict=True):
            metrics[f"loss_{k}x_{method}"] = score["loss"]
            metrics[f"entropy_{k}x_{method}"] = score["entropy"]
            metrics[f"uniform_{k}x"] = score["uniform"]
        loss_rows.append([Msg(f"term.method.{method}"), *(Num(s["loss"]) for s in scores)])
        entropy_rows.append([Msg(f"term.method.{method}"), *(Num(s["entropy"], 3) for s in scores)])
    entropy_rows.append([Msg(f"{TEXT}uniform"), *(Num(s["uniform"], 3) for s in table["methods"]["none"])])
    metrics["loss_1x"] = metrics["loss_1x_none"]
    metrics["trained_length"] = L0
    metrics["windows"] = table["methods"]["none"][-1]["windows"]
    metrics["stored"] = int(stored)
    for method in METHODS:  # over the last trained_length positions: where stretching matters most
        last = table["methods"][method][-1]["loss_by_position"][-L0:]
        metrics[f"loss_far_{method}"] = sum(last) / len(last)
    return metrics, loss_rows, entropy_rows


def _band_rows(
    loss_by_position: dict[str, list[float]], xs: list[float], bucket: int, longest: int
) -> list[list]:
    """Per band of positions each method's loss and the method with the lowest."""
    return [
        [
            f"{x:.0f}–{min(x + bucket, longest) - 1:.0f}",
            *(Num(loss_by_position[m][i], 4) for m in METHODS),
            Msg(f"term.method.{min(METHODS, key=lambda m: loss_by_position[m][i])}"),
        ]
        for i, x in enumerate(xs)
    ]


def _note(metrics: dict[str, float], L0: int, stored: bool) -> Msg:
    """What the tables say: how loss and entropy move past the trained length, and which stretched table,
    if any, beats plain RoPE at the longest length."""
    k = MULTIPLES[-1]
    plain = Num(metrics[f"loss_{k}x_none"])
    fixes = {m: metrics[f"loss_{k}x_{m}"] for m in METHODS[1:]}
    best = min(fixes, key=fixes.__getitem__)
    helped = [Msg(f"term.method.{m}") for m, v in fixes.items() if v < metrics[f"loss_{k}x_none"]]
    says = dict(best=Msg(f"term.method.{best}"), loss=Num(fixes[best]), plain=plain)
    verdict = Msg(f"{TEXT}helped", methods=helped, **says) if helped else Msg(f"{TEXT}none_helped", **says)
    far = {m: metrics[f"loss_far_{m}"] for m in METHODS}
    far_best = min(far, key=far.__getitem__)
    far_out = Msg(
        f"{TEXT}far",
        start=(k - 1) * L0,
        end=k * L0 - 1,
        best=Msg(f"term.method.{far_best}"),
        loss=Num(far[far_best]),
        plain=Num(far["none"]),
    )
    windows = int(metrics["windows"])  # of the longest length, from the start of the validation split
    source = Msg(
        f"{TEXT}stored" if stored else f"{TEXT}measured", windows=windows, characters=windows * k * L0
    )
    return Msg(
        f"{TEXT}note",
        length=L0,
        k=k,
        plain=plain,
        plain_1x=Num(metrics["loss_1x"]),
        entropy=Num(metrics[f"entropy_{k}x_none"], 3),
        entropy_1x=Num(metrics["entropy_1x_none"], 3),
        uniform=Num(metrics[f"uniform_{k}x"], 3),
        uniform_1x=Num(metrics["uniform_1x"], 3),
        verdict=verdict,
        far=far_out,
        source=source,
        finetune=Msg("exp.context-finetune.title"),
        **{m: Num(metrics[f"loss_1x_{m}"]) for m in METHODS[1:]},
    )
