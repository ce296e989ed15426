"""RoPE and ALiBi experiments, computed with the model's own functions in models/positions.py."""

from __future__ import annotations

import math

from tutor.experiments.base import RunContext, fmt
from tutor.experiments.params import AlibiParams, RopeFrequenciesParams, RopeRelativeParams
from tutor.experiments.result import (
    HeatmapPanel,
    Result,
    Series,
    SeriesPanel,
    TablePanel,
    TextPanel,
    finite_or_none,
)


def run_rope_relative(p: RopeRelativeParams, ctx: RunContext) -> Result:
    import torch

    from models.positions import apply_rope, rope_cos_sin, rope_inv_freq

    dtype = getattr(torch, p.dtype)
    gen = torch.Generator().manual_seed(p.seed)
    q, k = torch.randn(2, p.d, generator=gen, dtype=torch.float64).to(dtype)
    inv_freq, _ = rope_inv_freq(p.d, p.base)
    cos, sin = rope_cos_sin(torch.arange(p.max_pos), inv_freq, dtype=dtype)
    # the same q and k placed at every position 0 … max_pos−1
    Q = apply_rope(q.expand(p.max_pos, p.d), cos, sin)
    K = apply_rope(k.expand(p.max_pos, p.d), cos, sin)
    scores = Q @ K.T  # scores[m, n] = ⟨R_m q, R_n k⟩
    rows, metrics, spreads = [], {}, []
    for off in p.offsets:
        vals = scores.diagonal(off)  # every pair (m, m + off)
        spread = float(vals.max() - vals.min())
        spreads.append(spread)
        rows.append([off, len(vals), fmt(float(vals[0]), 5), fmt(float(vals.mean()), 5), fmt(spread, 2)])
        metrics[f"score_off{off}"] = float(vals.mean())
        metrics[f"spread_off{off}"] = spread
    metrics["max_spread"] = max(spreads)
    norm_err = float(((Q.norm(dim=-1) - q.norm()) / q.norm()).abs().max())
    metrics["max_norm_rel_error"] = norm_err
    curve = scores[0].double().tolist()  # query at 0, key at offset n
    return Result(
        experiment="rope-relative",
        params=p.model_dump(mode="json"),
        metrics=metrics,
        panels=[
            TablePanel(
                title=f"⟨R_m q, R_(m+Δ) k⟩ over all m (d = {p.d}, {p.dtype})",
                columns=["offset Δ", "pairs", "at m = 0", "mean", "spread max − min"],
                rows=rows,
            ),
            SeriesPanel(
                title="Score against offset",
                x_label="offset n − m",
                y_label="⟨R_m q, R_n k⟩",
                series=[Series(name="q at 0, k at n", x=list(range(p.max_pos)), y=curve)],
            ),
            TextPanel(
                title="Reading the table",
                text=(
                    f"At every offset the score is the same wherever the pair sits: the largest spread is "
                    f"{fmt(metrics['max_spread'], 2)}, rounding error of {p.dtype}. Different offsets give different "
                    f"scores, so attention can tell distances apart. Rotations keep lengths: the largest relative "
                    f"change of a norm is {fmt(norm_err, 2)}."
                ),
            ),
        ],
    )


def run_rope_frequencies(p: RopeFrequenciesParams, ctx: RunContext) -> Result:
    from models.positions import rope_inv_freq

    inv_freq, _ = rope_inv_freq(p.d, p.base)
    theta = inv_freq.tolist()
    periods = [2 * math.pi / t for t in theta]
    rows = [
        [i, fmt(t, 4), fmt(math.degrees(t), 4), fmt(period, 4), fmt((1000 * t) % (2 * math.pi), 3)]
        for i, (t, period) in enumerate(zip(theta, periods, strict=True))
    ]
    return Result(
        experiment="rope-frequencies",
        params=p.model_dump(mode="json"),
        metrics={
            "period_pair0": periods[0],
            "period_longest": max(periods),
            "theta_last": theta[-1],
            "pairs": len(theta),
        },
        panels=[
            TablePanel(
                title=f"θ_i = {p.base:g}^(−2i/{p.d}) for the {len(theta)} pairs",
                columns=[
                    "pair i",
                    "θ_i (rad per position)",
                    "degrees per position",
                    "period (positions)",
                    "angle at 1000 mod 2π",
                ],
                rows=rows,
            ),
            SeriesPanel(
                title="Period of each pair",
                x_label="pair i",
                y_label="period in positions",
                log_y=True,
                series=[Series(name="period", x=list(range(len(theta))), y=periods)],
            ),
            TextPanel(
                title="Reading the table",
                text=(
                    f"Pair 0 turns one radian per position and repeats every 2π ≈ {periods[0]:.4f} positions: it "
                    f"resolves neighbours. The last pair needs {periods[-1]:,.0f} positions for one turn: it changes "
                    "slowly and can tell far distances apart. The frequencies fall geometrically in between."
                ),
            ),
        ],
    )


def run_alibi(p: AlibiParams, ctx: RunContext) -> Result:
    from models.positions import alibi_bias, alibi_slopes

    slopes = alibi_slopes(p.n_head)
    bias = alibi_bias(p.n_head, p.T)
    power_of_two = math.log2(p.n_head).is_integer()
    rule = (
        f"{p.n_head} is a power of two: the slopes start at 2^(−8/{p.n_head}) and fall by that ratio."
        if power_of_two
        else (
            f"{p.n_head} is not a power of two: the slopes for {2 ** math.floor(math.log2(p.n_head))} heads come "
            f"first, then every other slope of the {2 ** (math.floor(math.log2(p.n_head)) + 1)}-head sequence."
        )
    )
    labels = [str(i) for i in range(p.T)]
    shown = list(range(min(p.n_head, 8)))
    panels: list = [
        TablePanel(
            title=f"ALiBi slopes for {p.n_head} heads",
            columns=["head", "slope m", "log2 m"],
            rows=[[h + 1, fmt(m, 5), fmt(math.log2(m), 4)] for h, m in enumerate(slopes)],
        ),
        TextPanel(
            title="The rule",
            text=rule + " Bias for query i and key j ≤ i is −m·(i − j); keys j > i are masked.",
        ),
    ]
    for h in shown:
        panels.append(
            HeatmapPanel(
                title=f"head {h + 1}, m = {fmt(slopes[h], 4)}",
                row_labels=labels,
                col_labels=labels,
                values=[[finite_or_none(v) for v in row] for row in bias[h].tolist()],
            )
        )
    if len(shown) < p.n_head:
        panels.append(
            TextPanel(title="More heads", text=f"Bias maps shown for heads 1–{len(shown)} of {p.n_head}.")
        )
    return Result(
        experiment="alibi",
        params=p.model_dump(mode="json"),
        metrics={
            "slope_first": slopes[0],
            "slope_last": slopes[-1],
            "slope_min": min(slopes),
            "slope_max": max(slopes),
        },
        panels=panels,
    )
