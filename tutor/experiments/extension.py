"""Context extension: RoPE frequencies under none / PI / NTK-aware / YaRN, and what each does to a
RoPE model trained at a short block size when it reads 1×, 2× and 4× that length.

No fine-tuning happens here: the shipped short-context checkpoint is loaded with its frequency
table swapped (config overrides), and its loss on the validation poems is measured as it is.
"""

from __future__ import annotations

from tutor.experiments import cache
from tutor.experiments.base import RunContext, fmt
from tutor.experiments.errors import ExperimentError
from tutor.experiments.params import ContextScalingParams
from tutor.experiments.result import Result, Series, SeriesPanel, TablePanel, TextPanel

METHODS = ("none", "pi", "ntk", "yarn")
MULTIPLES = (1, 2, 4)


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
    freq_rows = [[i, *(fmt(float(tables[m][0][i]), 4) for m in METHODS)] for i in range(d // 2)]
    freq_rows.append(["attention factor", *(fmt(tables[m][1], 5) for m in METHODS)])

    ids = base.tokenizer.encode(val_text(), unknown="unk")
    metrics: dict[str, float] = {}
    loss_rows = []
    by_position: dict[str, list[float]] = {}
    for method in METHODS:
        row: list = [method]
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
            row.append(fmt(loss, 4))
            if k == MULTIPLES[-1]:
                per_pos = token_loss.mean(0)
                by_position[method] = [float(c.mean()) for c in per_pos.split(p.bucket)]
        loss_rows.append(row)
    metrics["loss_1x"] = metrics["loss_1x_none"]
    metrics["trained_length"] = L0

    longest = MULTIPLES[-1] * L0
    xs = [float(s) for s in range(0, longest, p.bucket)]
    fixes = {m: metrics[f"loss_4x_{m}"] for m in METHODS[1:]}
    best = min(fixes, key=fixes.get)
    helped = [m for m, v in fixes.items() if v < metrics["loss_4x_none"]]
    verdict = (
        f"Here {', '.join(helped)} beat{'s' if len(helped) == 1 else ''} plain RoPE at 4×, best {best} "
        f"({fmt(fixes[best], 4)} vs {fmt(metrics['loss_4x_none'], 4)})."
        if helped
        else (
            f"Here none of PI, NTK and YaRN beats plain RoPE at 4× ({fmt(metrics['loss_4x_none'], 4)}; best "
            f"{best} {fmt(fixes[best], 4)}): without fine-tuning, a model this small may not profit from them."
        )
    )
    return Result(
        experiment="context-scaling",
        params=p.model_dump(mode="json"),
        metrics=metrics,
        panels=[
            TablePanel(
                title=f"inv_freq per pair, head dim {d}, scale {p.scale:g}, trained length {L0}",
                columns=["pair i", *METHODS],
                rows=freq_rows,
            ),
            TablePanel(
                title=f"Validation loss of the RoPE model trained at {L0} positions (no fine-tuning)",
                columns=["method", *(f"{k}× = {k * L0}" for k in MULTIPLES)],
                rows=loss_rows,
            ),
            SeriesPanel(
                title=f"Loss by position when reading {longest} characters (buckets of {p.bucket})",
                x_label="position",
                y_label="cross-entropy",
                series=[Series(name=m, x=xs, y=v) for m, v in by_position.items()],
            ),
            TextPanel(
                title="Reading the tables",
                text=(
                    f"The model saw at most {L0} positions in training. Plain RoPE at {MULTIPLES[-1]}× scores "
                    f"{fmt(metrics['loss_4x_none'], 4)} against {fmt(metrics['loss_1x'], 4)} at 1×. {verdict} "
                    f"At 1× the stretched tables cost: PI {fmt(metrics['loss_1x_pi'], 4)}, NTK "
                    f"{fmt(metrics['loss_1x_ntk'], 4)}, YaRN {fmt(metrics['loss_1x_yarn'], 4)}. "
                    "Published gains of these methods usually include a short fine-tuning run at the new length."
                ),
            ),
        ],
    )
