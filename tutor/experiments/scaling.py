"""Why attention divides by √d_k: score variance and softmax saturation, sampled live."""

from __future__ import annotations

import math

from tutor.experiments.base import RunContext, fmt
from tutor.experiments.params import DkScalingParams
from tutor.experiments.result import Result, Series, SeriesPanel, TablePanel, TextPanel


def run_dk_scaling(p: DkScalingParams, ctx: RunContext) -> Result:
    import torch

    gen = torch.Generator().manual_seed(p.seed)
    dims = sorted(set(p.dims) | {64})
    rows, metrics = [], {}
    ent_unscaled, ent_scaled = [], []
    for d in dims:
        ctx.check()
        # q, k with unit-variance entries, like the output of a well-initialised projection
        q = torch.randn(p.samples, d, generator=gen)
        k = torch.randn(p.samples, d, generator=gen)
        dots = (q * k).sum(-1)
        var_raw = float(dots.var())
        var_scaled = float((dots / math.sqrt(d)).var())
        # one query against T keys: how peaked is the softmax?
        rows_q = torch.randn(256, 1, d, generator=gen)
        keys = torch.randn(256, p.T, d, generator=gen)
        s = (rows_q * keys).sum(-1)
        stats = {}
        for tag, scores in (("unscaled", s), ("scaled", s / math.sqrt(d))):
            w = scores.softmax(-1)
            entropy = float(-(w * w.clamp_min(1e-30).log()).sum(-1).mean()) / math.log(p.T)
            stats[tag] = (float(w.max(-1).values.mean()), entropy)
        ent_unscaled.append(stats["unscaled"][1])
        ent_scaled.append(stats["scaled"][1])
        metrics[f"var_unscaled_d{d}"] = var_raw
        metrics[f"var_scaled_d{d}"] = var_scaled
        metrics[f"max_weight_unscaled_d{d}"] = stats["unscaled"][0]
        metrics[f"max_weight_scaled_d{d}"] = stats["scaled"][0]
        rows.append(
            [
                d,
                fmt(var_raw, 4),
                fmt(var_scaled, 4),
                fmt(stats["unscaled"][0], 3),
                fmt(stats["scaled"][0], 3),
                fmt(stats["unscaled"][1], 3),
                fmt(stats["scaled"][1], 3),
            ]
        )
    return Result(
        experiment="dk-scaling",
        params=p.model_dump(mode="json"),
        metrics=metrics,
        panels=[
            TablePanel(
                title=f"q·k for random unit-variance q, k ({p.samples:,} pairs each); softmax over {p.T} keys",
                columns=[
                    "d_k",
                    "var q·k",
                    "var q·k/√d_k",
                    "top weight, unscaled",
                    "top weight, scaled",
                    "entropy, unscaled",
                    "entropy, scaled",
                ],
                rows=rows,
            ),
            SeriesPanel(
                title="Softmax entropy (1 = uniform, 0 = one key takes all)",
                x_label="d_k",
                y_label="normalised entropy",
                series=[
                    Series(name="unscaled", x=[float(d) for d in dims], y=ent_unscaled),
                    Series(name="scaled by 1/√d_k", x=[float(d) for d in dims], y=ent_scaled),
                ],
            ),
            TextPanel(
                title="Reading the table",
                text=(
                    "A dot product of d_k unit-variance terms has variance d_k, so scores spread wider as heads get "
                    "wider, and an unscaled softmax puts almost all weight on one key (its gradient vanishes). "
                    "Dividing by √d_k brings the variance back to about 1 at every width."
                ),
            ),
        ],
    )
