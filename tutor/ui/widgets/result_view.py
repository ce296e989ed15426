"""An experiment's Result as widgets: headline numbers, tables, heatmaps, line plots, notes.

Tables, heatmaps, headline numbers and notes are tutor.experiments.render's Rich renderables (the
same as the CLI prints) in Statics: Rich measures Chinese characters as two cells, so the labels line
up. Line plots use textual-plotext, with our ticks (round values, in the language's numbers) and our
legend above the plot, right-aligned and measured in terminal cells (plotext's own sits top-left, on
the start of every loss curve, and counts a Chinese character as one cell).
"""

from __future__ import annotations

import math

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static
from textual_plotext import PlotextPlot

from tutor.experiments import render
from tutor.experiments.result import HeatmapPanel, Result, SeriesPanel, TablePanel, TextPanel, words
from tutor.ui.rich_markdown import as_prose


class SeriesPlot(PlotextPlot):
    """A line plot of one SeriesPanel (or of live training curves via `show`), in the learner's language."""

    def __init__(self, panel: SeriesPanel | None = None, lang: str = "en", **kw) -> None:
        super().__init__(**kw)
        self._panel = panel
        self.lang = lang
        self._names: list[str] = []  # the lines' names, for the legend

    def render(self) -> RenderableType:
        """The legend's rows, then the plot in the lines left."""
        width, height = self.size.width, self.size.height
        top = render.legend(self._names, render.LINE_COLOURS, width) if self._names else Text()
        rows = len(top.plain.split("\n")) if self._names else 0
        self.plt.plotsize(width, max(height - rows, 1))
        self.plt._set_size(width, max(height - rows, 1))  # as PlotextPlot.render does (textual-plotext#5)
        self.plt.theme(self._get_plotext_theme_name(self.app.theme))
        plot = Text.from_ansi(self.plt.build())
        return Group(top, plot) if rows else plot

    def on_mount(self) -> None:
        if self._panel is not None:
            self.show(self._panel)

    def show(self, panel: SeriesPanel) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(words(panel.title, self.lang))
        plt.xlabel(words(panel.x_label, self.lang))
        plt.ylabel(words(panel.y_label, self.lang))
        if panel.log_y:
            plt.yscale("log")
        self._names = []
        xs: list[float] = []
        ys: list[float] = []
        for s in panel.series:
            pairs = [(x, y) for x, y in zip(s.x, s.y, strict=True) if y is not None and math.isfinite(y)]
            if panel.log_y:
                pairs = [(x, y) for x, y in pairs if y > 0]
            if pairs:
                colour = render.LINE_COLOURS[len(self._names) % len(render.LINE_COLOURS)]
                plt.plot([p[0] for p in pairs], [p[1] for p in pairs], color=colour)
                self._names.append(words(s.name, self.lang))
                xs += [p[0] for p in pairs]
                ys += [p[1] for p in pairs]
        if xs:
            ticks = render.nice_ticks(min(xs), max(xs))
            plt.xticks(ticks, render.tick_labels(ticks, self.lang))
            if panel.log_y:
                ticks = render.log_ticks(min(ys), max(ys))
                labels = [render.tick_labels([t], self.lang)[0] for t in ticks]  # 0.1 0.01 0.001
                plt.yticks(ticks, labels)  # plotext takes their logarithms
            else:
                ticks = render.nice_ticks(min(ys), max(ys))
                plt.yticks(ticks, render.tick_labels(ticks, self.lang))
        self.refresh()


def panel_widgets(result: Result, lang: str) -> list[Widget]:
    out: list[Widget] = []
    if result.metrics:
        out.append(Static(render.metrics(result, lang), classes="metrics"))
    maps: list[Table] = []  # consecutive heatmaps (e.g. one per head) flow side by side

    def flush() -> None:
        if maps:
            out.append(Static(Columns(list(maps), padding=(0, 3)), classes="heatmap"))
            maps.clear()

    for panel in result.panels:
        if isinstance(panel, HeatmapPanel):
            maps.append(render.heatmap(panel, lang))
            continue
        flush()
        if isinstance(panel, TablePanel):
            out.append(Static(render.table(panel, lang), classes="result-table"))
        elif isinstance(panel, SeriesPanel):
            out.append(SeriesPlot(panel, lang, classes="plot"))
        elif isinstance(panel, TextPanel):
            out.append(Static(as_prose(render.note(panel, lang)), classes="note"))  # Chinese breaks as prose
    flush()
    return out
