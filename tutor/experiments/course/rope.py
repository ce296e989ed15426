"""RoPE and ALiBi experiments, computed with the model's own functions in tutor/model/positions.py."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tutor.experiments.params import AlibiParams, RopeFrequenciesParams, RopeRelativeParams
from tutor.experiments.result import (
    HeatmapPanel,
    Msg,
    Num,
    Series,
    SeriesPanel,
    TablePanel,
    TextPanel,
    columns,
    finite_or_none,
    reading,
    result,
)
from tutor.experiments.run_context import RunContext

if TYPE_CHECKING:
    from tutor.experiments.result import Result

RELATIVE, FREQUENCIES = "exp.rope-relative.", "exp.rope-frequencies."  # their texts in tutor.texts


def run_rope_relative(p: RopeRelativeParams, ctx: RunContext) -> Result:
    import torch

    from tutor.model.positions import apply_rope, rope_cos_sin, rope_inv_freq

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
        rows.append([off, len(vals), Num(float(vals[0]), 5), Num(float(vals.mean()), 5), Num(spread, 2)])
        metrics[f"score_off{off}"] = float(vals.mean())
        metrics[f"spread_off{off}"] = spread
    metrics["max_spread"] = max(spreads)
    norm_err = float(((Q.norm(dim=-1) - q.norm()) / q.norm()).abs().max())
    metrics["max_norm_rel_error"] = norm_err
    curve = scores[0].double().tolist()  # query at 0, key at offset n
    panels = [
        TablePanel(
            title=Msg(f"{RELATIVE}table", d=p.d, dtype=p.dtype),
            columns=columns(f"{RELATIVE}col.", "offset", "pairs", "first", "mean", "spread"),
            rows=rows,
        ),
        SeriesPanel(
            title=Msg(f"{RELATIVE}plot"),
            x_label=Msg(f"{RELATIVE}offset"),
            y_label="⟨R_m q, R_n k⟩",
            series=[Series(name=Msg(f"{RELATIVE}curve"), x=list(range(p.max_pos)), y=curve)],
        ),
        reading(
            Msg(f"{RELATIVE}note", spread=Num(metrics["max_spread"], 2), dtype=p.dtype, norm=Num(norm_err, 2))
        ),
    ]
    return result("rope-relative", p, metrics, panels)


def run_rope_frequencies(p: RopeFrequenciesParams, ctx: RunContext) -> Result:
    from tutor.model.positions import rope_inv_freq

    inv_freq, _ = rope_inv_freq(p.d, p.base)
    theta = inv_freq.tolist()
    periods = [2 * math.pi / t for t in theta]
    rows = [
        [i, Num(t), Num(math.degrees(t)), Num(period), Num((1000 * t) % (2 * math.pi), 3)]
        for i, (t, period) in enumerate(zip(theta, periods, strict=True))
    ]
    metrics = {
        "period_pair0": periods[0],
        "period_longest": max(periods),
        "theta_last": theta[-1],
        "pairs": len(theta),
    }
    panels = [
        TablePanel(
            title=Msg(f"{FREQUENCIES}table", base=f"{p.base:g}", d=p.d, pairs=len(theta)),
            columns=[
                Msg("exp.col.pair"),
                *columns(f"{FREQUENCIES}col.", "theta", "degrees", "period", "angle"),
            ],
            rows=rows,
        ),
        SeriesPanel(
            title=Msg(f"{FREQUENCIES}plot"),
            x_label=Msg("exp.col.pair"),
            y_label=Msg(f"{FREQUENCIES}period_axis"),
            log_y=True,
            series=[Series(name=Msg(f"{FREQUENCIES}period"), x=list(range(len(theta))), y=periods)],
        ),
        reading(Msg(f"{FREQUENCIES}note", first=Num(periods[0], decimals=4), last=round(periods[-1]))),
    ]
    return result("rope-frequencies", p, metrics, panels)


def run_alibi(p: AlibiParams, ctx: RunContext) -> Result:
    from tutor.model.positions import alibi_bias, alibi_slopes

    slopes = alibi_slopes(p.n_head)
    bias = alibi_bias(p.n_head, p.T)
    power_of_two = math.log2(p.n_head).is_integer()
    low = 2 ** math.floor(math.log2(p.n_head))
    rule = (
        Msg("exp.alibi.power_of_two", n=p.n_head)
        if power_of_two
        else Msg("exp.alibi.other", n=p.n_head, low=low, high=2 * low)
    )
    labels = [str(i) for i in range(p.T)]
    shown = list(range(min(p.n_head, 8)))
    panels: list = [
        TablePanel(
            title=Msg("exp.alibi.table", n=p.n_head),
            columns=[Msg("exp.col.head"), Msg("exp.alibi.col.slope"), "log2 m"],
            rows=[[h + 1, Num(m, 5), Num(math.log2(m))] for h, m in enumerate(slopes)],
        ),
        TextPanel(title=Msg("exp.alibi.rule_title"), text=Msg("exp.alibi.rule", rule=rule)),
    ]
    for h in shown:
        panels.append(
            HeatmapPanel(
                title=Msg("exp.alibi.map", head=h + 1, m=Num(slopes[h])),
                row_labels=labels,
                col_labels=labels,
                values=[[finite_or_none(v) for v in row] for row in bias[h].tolist()],
            )
        )
    if len(shown) < p.n_head:
        more = Msg("exp.alibi.more_text", shown=len(shown), n=p.n_head)
        panels.append(TextPanel(title=Msg("exp.alibi.more"), text=more))
    metrics = {
        "slope_first": slopes[0],
        "slope_last": slopes[-1],
        "slope_min": min(slopes),
        "slope_max": max(slopes),
    }
    return result("alibi", p, metrics, panels)
