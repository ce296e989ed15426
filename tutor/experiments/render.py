"""An experiment's Result as Rich renderables, in the learner's language: the one renderer of tables,
heatmaps, headline numbers and notes, for the CLI (`print_result`) and the app (its result view
wraps these in widgets and draws line plots with plotext; here a line plot is a small table or a
sparkline). Numbers go through tutor.texts.number, so 262,656 reads the same everywhere.
"""

from __future__ import annotations

import math
import re
from functools import cache

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
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
from tutor.texts import catalogue, has, marked, number, say

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


def table(panel: TablePanel, lang: str) -> FittedTable:
    columns = [
        _one_precision([cell(v, lang) for v in col], col, lang) for col in zip(*panel.rows, strict=True)
    ]
    return FittedTable(
        words(panel.title, lang),
        [words(c, lang) for c in panel.columns],
        [list(row) for row in zip(*columns, strict=True)] if panel.rows else [],
        [
            all(v is None or isinstance(v, int | float | Num) for v in col)
            for col in zip(*panel.rows, strict=True)
        ]
        if panel.rows
        else [False] * len(panel.columns),
    )


def _one_precision(texts: list[str], values: tuple[Cell, ...], lang: str) -> list[str]:
    """A column's numbers shown to significant digits (floats, Nums without fixed decimals), each with
    as many decimals as the column's most precise number of its size (the same power of ten), within
    its own digits: 0.330 beside 0.434, 5.720 beside 5.693 (`number` drops trailing zeros: 0.33, 5.72);
    numbers of other sizes, and exact ones (a slope of 0.25), are left as they are."""
    figures: dict[int, tuple[float, int]] = {}  # row -> (value, significant digits)
    for i, v in enumerate(values):
        if isinstance(v, Num) and v.decimals is None:
            figures[i] = (v.value, v.digits)
        elif isinstance(v, float):
            figures[i] = (v, 4)
    figures = {i: f for i, f in figures.items() if f[0] != 0 and "e" not in number(f[0], "en", f[1])}
    most: dict[int, int] = {}  # power of ten -> the most decimals a number of that size is shown with
    for value, digits in figures.values():
        size = math.floor(math.log10(abs(value)))
        most[size] = max(most.get(size, 0), len(number(value, "en", digits).partition(".")[2]))
    out = list(texts)
    for i, (value, digits) in figures.items():
        if float(number(value, "en", digits).replace(",", "")) == value:
            continue  # exact as shown (a slope of 0.0625): no zero to add
        decimals = most[math.floor(math.log10(abs(value)))]
        fixed, significant = f"{value:.{decimals}f}", f"{value:#.{digits}g}".rstrip(".")
        # the fewer decimals: never more significant digits than the number has
        out[i] = marked(min(fixed, significant, key=lambda t: len(t.partition(".")[2])), lang)
    return out


SHY = "\u00ad"  # a soft hyphen: where a heading's long word may break (German compounds: Satz­zeichen)


def _hyphenated(text: str, width: int) -> str:
    """`text` for a heading `width` cells wide: a word that fits stays whole; a longer one breaks where
    its soft hyphens allow, as few times as it must (`Satz-` `zeichen`), else, a Latin word, inside,
    at the edge (`punctua-` `tion`); each piece but the last ends in a hyphen. Soft hyphens go."""
    from tutor.wrap import wide

    out = []
    for word in text.split(" "):
        if len(word.replace(SHY, "")) <= width or wide(word[:1]):
            out.append(word.replace(SHY, ""))
            continue
        pieces, line = [], ""  # (text, ends at a soft hyphen)
        for syllable in word.split(SHY):
            if line and len(line) + len(syllable) + 1 > width:
                pieces.append((line, True))
                line = ""
            line += syllable
        for piece, soft in [*pieces, (line, False)]:
            while len(piece) + soft > width > 1 and piece[: width - 1].isalpha():
                out.append(piece[: width - 1] + "-")
                piece = piece[width - 1 :]
            out.append(piece + "-" * soft)
    return " ".join(out)


def fit_widths(natural: list[int], least: list[int], room: int) -> list[int]:
    """Column widths that fit in `room` cells: the natural ones if they fit, else the widest columns
    narrowed first, none below its least width (the sum may stay above `room`)."""
    widths = list(natural)
    while sum(widths) > room:
        shrinkable = [i for i, w in enumerate(widths) if w > least[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


class FittedTable:
    """A table laid out for the width it is drawn in. A column of numbers is never narrower than its
    widest number, so no number is cut (1.570.816, not 1.570.…); where the natural widths do not fit, the
    widest columns are narrowed first and their headings and texts break as tutor.wrap breaks lines
    (between words; Chinese between characters, never before "。" or "，"), every word whole. Where the
    words do not fit in a boxed table, the table drops its box and padding (columns one space apart);
    where they do not fit even then, the columns are drawn in parts, one below the other, each part with
    the table's leading label columns again (layer, head: whole numbers or words); only a column too wide
    for the width alone breaks a heading inside a word, marked with a hyphen."""

    def __init__(self, title: str, headers: list[str], rows: list[list[str]], numeric: list[bool]) -> None:
        self.title, self.headers, self.rows, self.numeric = title, headers, rows, numeric
        self.parted = False  # a part of a wider table: compact, as its other parts

    def _least(self) -> tuple[list[int], list[int]]:
        """Each column's widest word of a cell, and its widest word of a heading or a cell."""
        from tutor.wrap import widest_unit

        headers = [h.replace(SHY, "") for h in self.headers]
        columns = list(zip(headers, *self.rows, strict=True))
        cells = [
            max((widest_unit(line) for t in col[1:] for line in t.split("\n")), default=1) for col in columns
        ]
        # a heading's words whole, a Chinese one too (前一个字, not 前一个 and 字), where the width allows
        words = [
            max(max(map(cell_len, h.split()), default=0), c) for h, c in zip(headers, cells, strict=True)
        ]
        return cells, words

    def _widths(self, width: int) -> tuple[list[int], bool]:
        """The columns' widths, and whether the table is drawn compact (no box, no padding)."""
        from tutor.wrap import widest_unit

        headers = [h.replace(SHY, "") for h in self.headers]
        columns = list(zip(headers, *self.rows, strict=True))
        natural = [max(max(cell_len(line) for line in text.split("\n")) for text in col) for col in columns]
        cells, words = self._least()
        # then a heading's word breaks where its author marked it (a soft hyphen), Chinese anywhere
        syllables = [
            max(widest_unit(h.replace(SHY, "- ")), c) for h, c in zip(self.headers, cells, strict=True)
        ]
        tries = [(False, words), (True, words), (True, syllables)][1 if self.parted else 0 :]
        for compact, least in tries:
            # boxed: each column's padding and border, and the last border; compact: a space between
            room = width - (len(columns) - 1 if compact else 3 * len(columns) + 1)
            widths = fit_widths(natural, least, room)  # every word whole (a number is one word)
            if sum(widths) <= room:
                return widths, compact
        # then a heading may break inside a word; the cells' words stay whole
        return fit_widths(widths, [max(w, 4) for w in cells], room), True

    def build(self, width: int) -> Table:
        from rich import box

        from tutor.wrap import wrap

        widths, compact = self._widths(width)
        if compact:
            out = Table(
                header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, pad_edge=False
            )
        else:
            out = Table(header_style="bold")
        for header, w in zip(self.headers, widths, strict=True):
            out.add_column("\n".join(wrap(_hyphenated(header, w), w)), width=w, overflow="fold")
        for row in self.rows:
            out.add_row(*("\n".join(wrap(text, w)) for text, w in zip(row, widths, strict=True)))
        return out

    def _parts(self, width: int) -> list[FittedTable]:
        """The table as parts that each fit `width` with every word whole (compact), the leading label
        columns in each; just itself when it fits whole or has no column to part."""
        _, words = self._least()
        if sum(words) + len(words) - 1 <= width:
            return [self]
        keys = 0  # leading columns that name a row: words, or whole numbers (layer 1, head 2)
        while keys < len(self.headers) - 1 and (
            not self.numeric[keys] or all(row[keys].isdigit() for row in self.rows)
        ):
            keys += 1
        room = width - sum(words[:keys]) - keys  # each column after the labels takes its width and a space
        if keys == 0 or keys == len(self.headers) or room <= 0:
            return [self]
        groups: list[list[int]] = [[]]
        used = 0
        for i in range(keys, len(self.headers)):
            if groups[-1] and used + words[i] + 1 > room:
                groups.append([])
                used = 0
            groups[-1].append(i)
            used += words[i] + 1
        if len(groups) == 1:
            return [self]

        def part(columns: list[int]) -> FittedTable:
            pick = [*range(keys), *columns]
            out = FittedTable(
                "",
                [self.headers[i] for i in pick],
                [[row[i] for i in pick] for row in self.rows],
                [self.numeric[i] for i in pick],
            )
            out.parted = True
            return out

        return [part(g) for g in groups]

    def _titled(self, width: int) -> Group:
        """The title above the table, broken by tutor.wrap at the width there is (Rich's own table
        title breaks at the table's width, and Chinese before "，"); the table in parts if it must be."""
        from tutor.wrap import wrap

        shown: list[RenderableType] = []
        if self.title:
            shown.append(Text("\n".join(wrap(self.title, max(width, 1))), style="italic"))
        for i, part in enumerate(self._parts(width)):
            shown.extend([Text("")] if i else [])
            shown.append(part.build(width))
        return Group(*shown)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._titled(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._titled(options.max_width))


def _colour(t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0) * (len(_STOPS) - 1)
    i = min(int(t), len(_STOPS) - 2)
    f = t - i
    a, b = _STOPS[i], _STOPS[i + 1]
    red, green, blue = (round(a[k] + (b[k] - a[k]) * f) for k in range(3))
    return red, green, blue


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


def metric_text(value: float, lang: str, experiment: str = "", name: str = "") -> str:
    """'≈ 0 (3.1e-07)' for noise-sized numbers, so '0' and 'tiny' are both visible; a flag's value in
    words where the catalogue has them (`metric_value.EXPERIMENT.NAME=VALUE`: "measured now", not 0)."""
    if value == int(value) and has(key := f"metric_value.{experiment}.{name}={int(value)}"):
        return say(key, lang)
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
        label = words(metric_label(result.experiment, name), lang)
        out.add_row(label, metric_text(value, lang, result.experiment, name))
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


# --- line plots: ticks at round numbers, a legend measured in terminal cells -------------------------

NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
LINE_COLOURS = [
    (86, 180, 233),
    (230, 159, 0),
    (0, 158, 115),
    (204, 121, 167),
    (240, 228, 66),
    (213, 94, 0),
    (0, 114, 178),
    (170, 170, 170),
]  # (Okabe-Ito: told apart by most eyes)


def nice_ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Ticks at round values inside [lo, hi]: the finest step of 1, 2, 2.5 or 5 times a power of ten
    that gives at most `most` of them (7.71-8.71: 7.75 8.00 8.25 8.50; 1-1000: 200 400 ... 1000)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    lo, hi = min(lo, hi), max(lo, hi)
    if hi - lo < 1e-12 * max(1.0, abs(lo)):
        return [float(f"{lo:.4g}")]  # one value: a tick at it, to 4 digits (8.713, not 8.713486)
    power = 10 ** math.floor(math.log10((hi - lo) / most))
    for step in (nice * power * scale for scale in (1, 10, 100) for nice in NICE_STEPS[:-1]):
        first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
        if last - first + 1 <= most:
            return [round(k * step, 12) + 0.0 for k in range(first, last + 1)]
    return [lo, hi]


def log_ticks(lo: float, hi: float) -> list[float]:
    """The powers of ten inside [lo, hi] (both > 0), for a logarithmic axis."""
    return [10.0**k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]


def tick_labels(ticks: list[float], lang: str) -> list[str]:
    """The ticks as the language writes numbers, all with the decimals the finest one needs (7.5 8.0 8.5)."""
    decimals = 0
    while decimals < 6 and any(abs(t - round(t, decimals)) > 1e-9 * max(1.0, abs(t)) for t in ticks):
        decimals += 1
    return [number(float(t), lang, decimals=decimals) if decimals else number(round(t), lang) for t in ticks]


def legend_rows(names: list[str], width: int, gap: int = 2) -> list[list[int]]:
    """The legend's entries ("── name") packed into rows of at most `width` terminal cells (a Chinese
    character is two), as lists of indexes into `names`; an entry wider than the row gets one to itself."""
    rows: list[list[int]] = []
    used = 0
    for i, name in enumerate(names):
        cells = 3 + cell_len(name)
        if rows and used + gap + cells <= width:
            rows[-1].append(i)
            used += gap + cells
        else:
            rows.append([i])
            used = cells
    return rows


def legend(names: list[str], colours: list[tuple[int, int, int]], width: int) -> Text:
    """The legend as right-aligned lines of coloured entries, to sit above a plot rather than on its lines."""
    lines = []
    for row in legend_rows(names, width):
        line = Text()
        for n, i in enumerate(row):
            if n:
                line.append("  ")
            r, g, b = colours[i % len(colours)]
            line.append("── ", style=f"bold rgb({r},{g},{b})")
            line.append(names[i])
        line.pad_left(max(0, width - line.cell_len))
        lines.append(line)
    return Text("\n").join(lines)


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
