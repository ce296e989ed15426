"""An experiment's Result as Rich renderables, in the learner's language: the one renderer of tables,
heatmaps, headline numbers and notes, for the CLI (`print_result`) and the app (its result view
wraps these in widgets and draws line plots with plotext; here a line plot is a small table or a
sparkline). Numbers go through tutor.texts.number, so 262,656 reads the same everywhere.
"""

from __future__ import annotations

import re
from functools import cache

from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tutor.experiments.result import (
    Cell,
    HeatmapPanel,
    Msg,
    Num,
    Result,
    SeriesPanel,
    TablePanel,
    TextPanel,
    Words,
    words,
)
from tutor.texts import catalogue, has, number, say

NEAR_ZERO = 1e-5  # a headline number this small is floating-point noise: say so (≈ 0)
NUMBERED_COLUMNS = 12  # wider heatmaps are colour only, so they fit the screen
_STOPS = [(13, 27, 42), (33, 145, 140), (253, 231, 37)]  # dark blue -> teal -> yellow (viridis-like)
_SPARKS = "▁▂▃▄▅▆▇█"


def cell(value: Cell, lang: str) -> str:
    """A table cell: a dash where there is no value, numbers in the language's way."""
    if value is None:
        return "—"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number(value, lang)
    return words(value, lang)


def table(panel: TablePanel, lang: str) -> Table:
    out = Table(title=words(panel.title, lang), title_justify="left", header_style="bold")
    for column in panel.columns:
        out.add_column(words(column, lang))
    for row in panel.rows:
        out.add_row(*(cell(v, lang) for v in row))
    return out


def _colour(t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0) * (len(_STOPS) - 1)
    i = min(int(t), len(_STOPS) - 2)
    f = t - i
    a, b = _STOPS[i], _STOPS[i + 1]
    return tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))  # type: ignore[return-value]


def _heat_text(v: float, lang: str) -> str:
    """Five characters at most for the usual values: 0.42, -3.50, 12.00; rounding noise as 0."""
    v += 0.0  # -0.0 (a zero bias on the diagonal) prints as 0
    if abs(v) < 0.005:
        return "0"
    return number(round(v), lang) if abs(v) >= 100 else number(v, lang, decimals=2)


def heatmap(panel: HeatmapPanel, lang: str) -> Table:
    """Cells coloured by value on one scale (masked cells as a dim ·), the value printed on each cell
    in a contrasting colour while the grid is narrow enough."""
    finite = [v for row in panel.values for v in row if v is not None]
    lo = panel.vmin if panel.vmin is not None else min(finite, default=0.0)
    hi = panel.vmax if panel.vmax is not None else max(finite, default=1.0)
    span = (hi - lo) or 1.0
    numbers = len(panel.col_labels) <= NUMBERED_COLUMNS
    out = Table(title=words(panel.title, lang), title_justify="left", box=None, padding=0, show_edge=False)
    out.add_column("", justify="right")
    for label in panel.col_labels:
        out.add_column(label, justify="right", min_width=5 if numbers else 2)
    for label, row in zip(panel.row_labels, panel.values, strict=True):
        cells: list[Text] = []
        for v in row:
            if v is None:
                cells.append(Text("·", style="dim"))
                continue
            r, g, b = _colour((v - lo) / span)
            ink = "black" if (r * 299 + g * 587 + b * 114) / 1000 > 128 else "white"
            text = f" {_heat_text(v, lang):>4}" if numbers else "  "
            cells.append(Text(text, style=Style(color=ink, bgcolor=f"rgb({r},{g},{b})")))
        out.add_row(Text(label), *cells)
    return out


@cache
def _patterns(experiment: str) -> list[tuple[re.Pattern[str], str]]:
    """The experiment's metric-name patterns from the catalogue ("gap_L{layers}_{pos}"), most
    specific first, as regular expressions with one group per placeholder."""
    prefix = f"metric.{experiment}."
    found = []
    for key in catalogue("en"):
        name = key[len(prefix) :]
        if key.startswith(prefix) and "{" in name:
            parts = re.split(r"\{(\w+)\}", name)  # literal, placeholder, literal, ...
            regex = "".join(
                re.escape(p) if i % 2 == 0 else f"(?P<{p}>[A-Za-z0-9]+?)" for i, p in enumerate(parts)
            )
            found.append((len("".join(parts[::2])), re.compile(regex), key))
    return [(regex, key) for _, regex, key in sorted(found, key=lambda f: -f[0])]


def metric_label(experiment: str, name: str) -> Words:
    """The words for a metric name (the name itself where the catalogue has none)."""
    if has(key := f"metric.{experiment}.{name}"):
        return Msg(key)
    for regex, key in _patterns(experiment):
        if match := regex.fullmatch(name):
            args: dict = {}
            for part, value in match.groupdict().items():
                term = f"term.{part}.{value}"
                # a count is a number ("4 heads"); a seed is a name, shown as written (1337, not 1,337)
                args[part] = (
                    int(value) if value.isdigit() and part != "seed" else Msg(term) if has(term) else value
                )
            return Msg(key, **args)
    return name


def metric_text(value: float, lang: str) -> str:
    """'≈ 0 (3.1e-07)' for noise-sized numbers, so '0' and 'tiny' are both visible."""
    if isinstance(value, float) and value != 0 and abs(value) < NEAR_ZERO:
        return say("exp.near_zero", lang, value=Num(value, 2))
    return number(value, lang)


def metrics(result: Result, lang: str) -> Table:
    out = Table(
        title=say("exp.metrics", lang), title_justify="left", box=None, show_header=False, padding=(0, 1)
    )
    out.add_column(style="bold")
    out.add_column(justify="right")
    for name, value in result.metrics.items():
        out.add_row(words(metric_label(result.experiment, name), lang), metric_text(value, lang))
    return out


def note(panel: TextPanel, lang: str) -> Text:
    return Text(words(panel.title, lang) + "\n", style="bold") + Text(words(panel.text, lang))


def _sparkline(ys: list[float | None], width: int = 32) -> str:
    vals = [y for y in ys if y is not None]
    if not vals:
        return ""
    if len(ys) > width:  # keep the shape: one point per column
        ys = [ys[round(i * (len(ys) - 1) / (width - 1))] for i in range(width)]
    lo, hi = min(vals), max(vals)
    span = (hi - lo) or 1.0
    return "".join(" " if y is None else _SPARKS[round((y - lo) / span * (len(_SPARKS) - 1))] for y in ys)


def series_table(panel: SeriesPanel, lang: str) -> Table:
    """A line plot in text: the values under their x when the lines share a few x, else one sparkline
    per line with its range."""
    out = Table(title=words(panel.title, lang), title_justify="left", header_style="bold")
    x_label, y_label = words(panel.x_label, lang) or "x", words(panel.y_label, lang)
    xs = [s.x for s in panel.series]
    if all(x == xs[0] for x in xs) and len(xs[0]) <= 16:
        out.add_column(x_label)
        for s in panel.series:
            out.add_column(words(s.name, lang))
        for i, x in enumerate(xs[0]):
            out.add_row(number(x, lang), *(cell(s.y[i], lang) for s in panel.series))
        return out
    for key in ("line", "min", "max"):
        out.add_column(say(f"exp.series.{key}", lang))
    out.add_column(say("exp.series.over", lang, y=y_label, x=x_label), no_wrap=True, min_width=32)
    for s in panel.series:
        vals = [y for y in s.y if y is not None]
        low, high = (cell(min(vals), lang), cell(max(vals), lang)) if vals else ("", "")
        out.add_row(words(s.name, lang), low, high, _sparkline(s.y))
    return out


def heading(result: Result, lang: str) -> Text:
    title = Msg(f"exp.{result.experiment}.title") if has(f"exp.{result.experiment}.title") else ""
    ms = round(result.duration_s * 1000)
    return Text(say("exp.header", lang, title=title, name=result.experiment, ms=ms), style="bold")


def render_result(result: Result, lang: str) -> RenderableType:
    parts: list[RenderableType] = [heading(result, lang)]
    for panel in result.panels:
        if isinstance(panel, TablePanel):
            parts.append(table(panel, lang))
        elif isinstance(panel, HeatmapPanel):
            parts.append(heatmap(panel, lang))
        elif isinstance(panel, SeriesPanel):
            parts.append(series_table(panel, lang))
        elif isinstance(panel, TextPanel):
            parts.append(note(panel, lang))
        parts.append(Text(""))
    parts.append(metrics(result, lang))
    return Group(*parts)


def print_result(result: Result, lang: str, console: Console | None = None) -> None:
    (console or Console()).print(render_result(result, lang))
