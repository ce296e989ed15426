"""What an experiment returns: headline metrics plus panels, serialised to DESIGN.md's JSON.

    {"experiment", "params", "metrics": {name: number}, "panels": [...], "duration_s"}

A panel is one of four kinds; the UI and the CLI render them, tests read `metrics`.
Masked cells of a heatmap (e.g. the −inf above a causal diagonal) are `null`, because JSON has no
infinity.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Cell = str | int | float | None


class _Panel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str


class TablePanel(_Panel):
    kind: Literal["table"] = "table"
    columns: list[str]
    rows: list[list[Cell]]


class HeatmapPanel(_Panel):
    """A grid of numbers: rows are e.g. query characters, columns key characters."""

    kind: Literal["heatmap"] = "heatmap"
    row_labels: list[str]
    col_labels: list[str]
    values: list[list[float | None]]
    vmin: float | None = None  # colour scale; None = the data's own min/max
    vmax: float | None = None


class Series(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    x: list[float]
    y: list[float | None]


class SeriesPanel(_Panel):
    kind: Literal["series"] = "series"
    x_label: str = ""
    y_label: str = ""
    log_y: bool = False
    series: list[Series]


class TextPanel(_Panel):
    kind: Literal["text"] = "text"
    text: str


Panel = Annotated[TablePanel | HeatmapPanel | SeriesPanel | TextPanel, Field(discriminator="kind")]


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")
    experiment: str
    params: dict[str, Any]
    metrics: dict[str, int | float]
    panels: list[Panel] = []
    duration_s: float = 0.0

    @field_validator("metrics")
    @classmethod
    def _finite(cls, value: dict[str, int | float]) -> dict[str, int | float]:
        bad = [k for k, v in value.items() if not math.isfinite(v)]
        if bad:
            raise ValueError(f"metrics must be finite numbers; not finite: {', '.join(bad)}")
        return value

    def to_json(self) -> str:
        return self.model_dump_json()


def finite_or_none(x: float) -> float | None:
    """A float for JSON: None for ±inf/NaN (masked cells)."""
    return float(x) if math.isfinite(x) else None
