"""Results in the terminal with Rich (the CLI; the Textual UI has its own widgets): tables,
heatmaps as coloured cells labelled with the characters, series as small tables or sparklines."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from tutor.experiments.base import fmt
from tutor.experiments.result import HeatmapPanel, Result, SeriesPanel, TablePanel, TextPanel

_STOPS = [(13, 27, 42), (33, 145, 140), (253, 231, 37)]  # dark blue -> teal -> yellow (viridis-like)
_SPARKS = "▁▂▃▄▅▆▇█"


def _colour(t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0) * (len(_STOPS) - 1)
    i = min(int(t), len(_STOPS) - 2)
    f = t - i
    a, b = _STOPS[i], _STOPS[i + 1]
    return tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))  # type: ignore[return-value]


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return fmt(value)
    return str(value)


def render_table(panel: TablePanel) -> RenderableType:
    table = Table(title=panel.title, title_justify="left", header_style="bold")
    for col in panel.columns:
        table.add_column(col)
    for row in panel.rows:
        table.add_row(*(_cell(v) for v in row))
    return table


def render_heatmap(panel: HeatmapPanel) -> RenderableType:
    finite = [v for row in panel.values for v in row if v is not None]
    lo = panel.vmin if panel.vmin is not None else min(finite, default=0.0)
    hi = panel.vmax if panel.vmax is not None else max(finite, default=1.0)
    span = (hi - lo) or 1.0
    small = all(abs(v) <= 1 for v in finite)
    table = Table(title=panel.title, title_justify="left", show_lines=False, padding=(0, 0), box=None)
    table.add_column("", justify="right", style="bold")
    for label in panel.col_labels:
        table.add_column(label, justify="right", min_width=5)
    for label, row in zip(panel.row_labels, panel.values, strict=True):
        cells = []
        for v in row:
            if v is None:
                cells.append(Text("    ·", style="dim"))
                continue
            r, g, b = _colour((v - lo) / span)
            fg = "black" if (r * 299 + g * 587 + b * 114) / 1000 > 128 else "white"
            text = _heat_text(v, small)
            cells.append(Text(f" {text:>4}", style=f"{fg} on rgb({r},{g},{b})"))
        table.add_row(label, *cells)
    return table


def _heat_text(v: float, small: bool) -> str:
    """Four characters at most: .42, -.05, 1.00, -3.5; tiny values as 0."""
    if abs(v) < (0.005 if small else 0.05):
        return "0"
    if small:
        return f"{v:.2f}".replace("0.", ".", 1)
    return f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def _sparkline(ys: list[float | None], width: int = 32) -> str:
    vals = [y for y in ys if y is not None]
    if not vals:
        return ""
    if len(ys) > width:  # keep the shape: one point per column
        ys = [ys[round(i * (len(ys) - 1) / (width - 1))] for i in range(width)]
    lo, hi = min(vals), max(vals)
    span = (hi - lo) or 1.0
    return "".join(" " if y is None else _SPARKS[round((y - lo) / span * (len(_SPARKS) - 1))] for y in ys)


def render_series(panel: SeriesPanel) -> RenderableType:
    xs = [s.x for s in panel.series]
    shared = all(x == xs[0] for x in xs)
    if shared and len(xs[0]) <= 16:
        table = Table(title=panel.title, title_justify="left", header_style="bold")
        table.add_column(panel.x_label or "x")
        for s in panel.series:
            table.add_column(s.name)
        for i, x in enumerate(xs[0]):
            table.add_row(fmt(x), *(_cell(s.y[i]) for s in panel.series))
        return table
    table = Table(title=panel.title, title_justify="left", header_style="bold")
    for col in ("line", "min", "max"):
        table.add_column(col)
    table.add_column(f"{panel.y_label} over {panel.x_label}".strip(), no_wrap=True, min_width=32)
    for s in panel.series:
        vals = [y for y in s.y if y is not None]
        table.add_row(s.name, fmt(min(vals)) if vals else "", fmt(max(vals)) if vals else "", _sparkline(s.y))
    return table


def render_result(result: Result) -> RenderableType:
    parts: list[RenderableType] = [
        Text(f"{result.experiment}  ({result.duration_s * 1000:.0f} ms)", style="bold")
    ]
    for panel in result.panels:
        if isinstance(panel, TablePanel):
            parts.append(render_table(panel))
        elif isinstance(panel, HeatmapPanel):
            parts.append(render_heatmap(panel))
        elif isinstance(panel, SeriesPanel):
            parts.append(render_series(panel))
        elif isinstance(panel, TextPanel):
            parts.append(Text.assemble((panel.title + "\n", "bold"), panel.text))
        parts.append(Text(""))
    metrics = Table(title="metrics", title_justify="left", header_style="bold")
    metrics.add_column("name")
    metrics.add_column("value", justify="right")
    for name, value in result.metrics.items():
        metrics.add_row(name, str(value) if isinstance(value, int) else fmt(value, 6))
    parts.append(metrics)
    return Group(*parts)


def print_result(result: Result, console: Console | None = None) -> None:
    (console or Console()).print(render_result(result))
