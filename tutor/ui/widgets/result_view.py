"""An experiment's Result as widgets: headline numbers, tables, heatmaps, line plots, notes.

Tables and heatmaps are Rich tables in a Static: Rich measures Chinese characters as two cells,
so the labels line up. Heatmap cells are coloured by value (masked cells shown as ·); line plots
use textual-plotext.
"""

from __future__ import annotations

import math

from rich.color import Color
from rich.columns import Columns
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static
from textual_plotext import PlotextPlot

from tutor.experiments.base import fmt
from tutor.experiments.result import HeatmapPanel, Result, SeriesPanel, TablePanel, TextPanel

NEAR_ZERO = 1e-5  # a headline number this small is floating-point noise: say so (≈ 0)
_LOW, _HIGH = (32, 40, 96), (250, 200, 40)  # dark blue -> amber


def metric_text(value: float) -> str:
    """'≈ 0 (3.1e-07)' for noise-sized numbers, so '0' and 'tiny' are both visible."""
    if value == 0:
        return "0"
    if isinstance(value, float) and abs(value) < NEAR_ZERO:
        return f"≈ 0 ({value:.1e})"
    if isinstance(value, int):
        return f"{value:,}"
    return fmt(value)


def metrics_table(result: Result, title: str) -> Table:
    table = Table(title=title, title_justify="left", box=None, show_header=False, padding=(0, 1))
    table.add_column(style="bold")
    table.add_column(justify="right")
    for name, value in result.metrics.items():
        table.add_row(name, metric_text(value))
    return table


def cell_text(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return fmt(value) if math.isfinite(value) else str(value)
    return str(value)


def rich_table(panel: TablePanel) -> Table:
    table = Table(title=panel.title, title_justify="left", show_lines=False, header_style="bold")
    for column in panel.columns:
        table.add_column(column, justify="left")
    for row in panel.rows:
        table.add_row(*(cell_text(c) for c in row))
    return table


def _blend(x: float) -> Color:
    r, g, b = (round(lo + (hi - lo) * x) for lo, hi in zip(_LOW, _HIGH, strict=True))
    return Color.from_rgb(r, g, b)


def heatmap_table(panel: HeatmapPanel) -> Table:
    values = [v for row in panel.values for v in row if v is not None]
    lo = panel.vmin if panel.vmin is not None else (min(values) if values else 0.0)
    hi = panel.vmax if panel.vmax is not None else (max(values) if values else 1.0)
    span = (hi - lo) or 1.0
    numbers = len(panel.col_labels) <= 12  # wider grids are colour only, to fit the screen
    table = Table(title=panel.title, title_justify="left", box=None, padding=0, show_edge=False)
    table.add_column("", justify="right")
    for label in panel.col_labels:
        table.add_column(label, justify="center", min_width=5 if numbers else 2)
    for label, row in zip(panel.row_labels, panel.values, strict=False):
        cells: list[Text] = []
        for v in row:
            if v is None:
                cells.append(Text(" · " if numbers else "·", style="dim"))
                continue
            x = min(max((v - lo) / span, 0.0), 1.0)
            fg = "black" if x > 0.55 else "white"
            v += 0.0  # -0.0 (a zero bias on the diagonal) prints as 0.00
            text = f"{v:5.2f}" if numbers and abs(v) < 100 else (fmt(v, 2) if numbers else "  ")
            cells.append(Text(text, style=Style(color=fg, bgcolor=_blend(x))))
        table.add_row(Text(label + " "), *cells)
    return table


class SeriesPlot(PlotextPlot):
    """A line plot of one SeriesPanel (or of live training curves via `show`)."""

    def __init__(self, panel: SeriesPanel | None = None, **kw) -> None:
        super().__init__(**kw)
        self._panel = panel

    def on_mount(self) -> None:
        if self._panel is not None:
            self.show(self._panel)

    def show(self, panel: SeriesPanel) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(panel.title)
        plt.xlabel(panel.x_label)
        plt.ylabel(panel.y_label)
        if panel.log_y:
            plt.yscale("log")
        for s in panel.series:
            pairs = [(x, y) for x, y in zip(s.x, s.y, strict=False) if y is not None and math.isfinite(y)]
            if panel.log_y:
                pairs = [(x, y) for x, y in pairs if y > 0]
            if pairs:
                plt.plot([p[0] for p in pairs], [p[1] for p in pairs], label=s.name)
        self.refresh()


def panel_widgets(result: Result, metrics_title: str) -> list[Widget]:
    out: list[Widget] = []
    if result.metrics:
        out.append(Static(metrics_table(result, metrics_title), classes="metrics"))
    maps: list[Table] = []  # consecutive heatmaps (e.g. one per head) flow side by side

    def flush() -> None:
        if maps:
            out.append(Static(Columns(list(maps), padding=(0, 3)), classes="heatmap"))
            maps.clear()

    for panel in result.panels:
        if isinstance(panel, HeatmapPanel):
            maps.append(heatmap_table(panel))
            continue
        flush()
        if isinstance(panel, TablePanel):
            out.append(Static(rich_table(panel), classes="result-table"))
        elif isinstance(panel, SeriesPanel):
            out.append(SeriesPlot(panel, classes="plot"))
        elif isinstance(panel, TextPanel):
            out.append(Static(Text(f"{panel.title}\n", style="bold") + Text(panel.text), classes="note"))
    flush()
    return out
