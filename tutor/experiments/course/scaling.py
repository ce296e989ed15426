"""Why attention divides by √d_k: score variance and softmax saturation, sampled live."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tutor.experiments.params import DkScalingParams
from tutor.experiments.result import Msg, Num, Series, SeriesPanel, TablePanel, columns, reading, result
from tutor.experiments.run_context import RunContext

if TYPE_CHECKING:
    from tutor.experiments.result import Result

TEXT = "exp.dk-scaling."  # its texts in tutor.texts


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
        top, entropies = zip(stats["unscaled"], stats["scaled"], strict=True)
        rows.append([d, Num(var_raw), Num(var_scaled), *(Num(v, 3) for v in (*top, *entropies))])
    xs = [float(d) for d in dims]
    panels = [
        TablePanel(
            title=Msg(f"{TEXT}table", pairs=p.samples, keys=p.T),
            columns=columns(
                f"{TEXT}col.",
                "=d_k",
                "var",
                "var_scaled",
                "top_unscaled",
                "top_scaled",
                "entropy_unscaled",
                "entropy_scaled",
            ),
            rows=rows,
        ),
        SeriesPanel(
            title=Msg(f"{TEXT}plot"),
            x_label="d_k",
            y_label=Msg(f"{TEXT}entropy"),
            series=[
                Series(name=Msg(f"{TEXT}unscaled"), x=xs, y=ent_unscaled),
                Series(name=Msg(f"{TEXT}scaled"), x=xs, y=ent_scaled),
            ],
        ),
        reading(Msg(f"{TEXT}note")),
    ]
    return result("dk-scaling", p, metrics, panels)
