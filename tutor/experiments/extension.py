"""Context extension: RoPE frequencies under none / PI / NTK-aware / YaRN, and what each does to a
RoPE model trained at a short block size when it reads 1×, 2× and 4× that length.

No fine-tuning happens here: the shipped short-context checkpoint is loaded with its frequency
table swapped (config overrides), and its loss on the validation poems is measured as it is.
"""

from __future__ import annotations

from tutor.experiments import cache
from tutor.experiments.base import RunContext
from tutor.experiments.errors import ExperimentError
from tutor.experiments.params import ContextScalingParams
from tutor.experiments.result import Msg, Num, Result, Series, SeriesPanel, TablePanel, reading, result

METHODS = ("none", "pi", "ntk", "yarn")
MULTIPLES = (1, 2, 4)
TEXT = "exp.context-scaling."


def val_text() -> str:
    from models.corpus import corpus_text, load_poems, split_poems

    return corpus_text(split_poems(load_poems())[1])


def _windows(ids: list[int], length: int, most: int):
    """Consecutive, non-overlapping windows of `length` inputs (+1 target) from the start of the
    validation text: every character is scored once per length, up to `most` windows."""
    import torch

    count = min((len(ids) - 1) // length, most)
    if count < 1:
        raise ExperimentError(f"the validation text ({len(ids)} characters) is shorter than {length + 1}")
    data = torch.tensor(ids)
    starts = torch.arange(count) * length
    w = data[starts[:, None] + torch.arange(length + 1)[None, :]]
    return w[:, :-1], w[:, 1:]


def run_context_scaling(p: ContextScalingParams, ctx: RunContext) -> Result:
    import torch
    import torch.nn.functional as F

    from models.positions import rope_inv_freq

    base = cache.checkpoint(cache.ROPE_SHORT)
    cfg = base.model.cfg
    if cfg.pos != "rope":
        raise ExperimentError(f"{cache.ROPE_SHORT} must be a RoPE model, it uses {cfg.pos!r} positions")
    L0, d = cfg.block_size, cfg.head_dim

    tables = {m: rope_inv_freq(d, cfg.rope_base, m, p.scale, L0) for m in METHODS}
    freq_rows = [[i, *(Num(float(tables[m][0][i])) for m in METHODS)] for i in range(d // 2)]
    freq_rows.append([Msg(f"{TEXT}factor"), *(Num(tables[m][1], 5) for m in METHODS)])

    ids = base.tokenizer.encode(val_text(), unknown="unk")
    metrics: dict[str, float] = {}
    loss_rows = []
    by_position: dict[str, list[float]] = {}
    for method in METHODS:
        row: list = [Msg(f"term.method.{method}")]
        # every method stretches by the chosen scale at every length: the 1× column shows its cost
        # where the model needs no stretching at all
        model = (
            base.model
            if method == "none"
            else cache.checkpoint(
                cache.ROPE_SHORT, rope_scaling=method, rope_scale=p.scale, rope_original_max=L0
            ).model
        )
        for k in MULTIPLES:
            ctx.check()
            x, y = _windows(ids, k * L0, p.windows)
            with torch.no_grad():
                logits, _ = model(x)
            token_loss = F.cross_entropy(logits.transpose(1, 2), y, reduction="none")  # (windows, T)
            loss = float(token_loss.mean())
            metrics[f"loss_{k}x_{method}"] = loss
            row.append(Num(loss))
            if k == MULTIPLES[-1]:
                per_pos = token_loss.mean(0)
                by_position[method] = [float(c.mean()) for c in per_pos.split(p.bucket)]
        loss_rows.append(row)
    metrics["loss_1x"] = metrics["loss_1x_none"]
    metrics["trained_length"] = L0

    longest = MULTIPLES[-1] * L0
    xs = [float(s) for s in range(0, longest, p.bucket)]
    methods = [Msg(f"term.method.{m}") for m in METHODS]
    panels = [
        TablePanel(
            title=Msg(f"{TEXT}freqs", d=d, scale=Num(p.scale), length=L0),
            columns=[Msg("exp.col.pair"), *methods],
            rows=freq_rows,
        ),
        TablePanel(
            title=Msg(f"{TEXT}losses", length=L0),
            columns=[Msg("exp.col.method"), *(f"{k}× = {k * L0}" for k in MULTIPLES)],
            rows=loss_rows,
        ),
        SeriesPanel(
            title=Msg(f"{TEXT}plot", n=longest, bucket=p.bucket),
            x_label=Msg("exp.col.position"),
            y_label=Msg(f"{TEXT}loss"),
            series=[Series(name=Msg(f"term.method.{m}"), x=xs, y=v) for m, v in by_position.items()],
        ),
        reading(_note(metrics, L0), tables=True),
    ]
    return result("context-scaling", p, metrics, panels)


def _note(metrics: dict[str, float], L0: int) -> Msg:
    """What the losses say: which stretched table, if any, beats plain RoPE at the longest length."""
    plain = Num(metrics["loss_4x_none"])
    fixes = {m: metrics[f"loss_4x_{m}"] for m in METHODS[1:]}
    best = min(fixes, key=fixes.get)
    helped = [Msg(f"term.method.{m}") for m, v in fixes.items() if v < metrics["loss_4x_none"]]
    says = dict(best=Msg(f"term.method.{best}"), loss=Num(fixes[best]), plain=plain)
    verdict = Msg(f"{TEXT}helped", methods=helped, **says) if helped else Msg(f"{TEXT}none_helped", **says)
    return Msg(
        f"{TEXT}note",
        length=L0,
        k=MULTIPLES[-1],
        plain=plain,
        plain_1x=Num(metrics["loss_1x"]),
        verdict=verdict,
        **{m: Num(metrics[f"loss_1x_{m}"]) for m in METHODS[1:]},
    )
