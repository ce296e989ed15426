"""An experiment's Result as plain lines in the learner's language, for a screen reader or a pipe
(`python -m tutor read`): no boxes, no colour, no sparklines. A table row reads "column: value;
column: value", a heatmap row the same under its row's label, a line plot each line's first, last,
lowest and highest value (or its values under their x when the lines share a few x), then the
headline numbers. Cells and numbers are worded as tutor.experiments.render words them.
"""

from __future__ import annotations

from tutor.experiments.render import cell, heading, metric_label, metric_text
from tutor.experiments.result import HeatmapPanel, Result, SeriesPanel, TablePanel, TextPanel, words
from tutor.texts import number, say


def _pairs(names: list[str], values: list[str], lang: str) -> str:
    shown = [
        say("plain.pair", lang, name=n, value=v) if n else v for n, v in zip(names, values, strict=False)
    ]
    return say("plain.sep", lang).join(shown)


def panel_lines(panel, lang: str) -> list[str]:
    out = [words(panel.title, lang)] if words(panel.title, lang) else []
    if isinstance(panel, TablePanel):
        names = [words(c, lang) for c in panel.columns]
        out += [_pairs(names, [cell(v, lang) for v in row], lang) for row in panel.rows]
    elif isinstance(panel, HeatmapPanel):
        for label, row in zip(panel.row_labels, panel.values, strict=False):
            values = _pairs(list(panel.col_labels), [cell(v, lang) for v in row], lang)
            out.append(say("plain.pair", lang, name=label, value=values))
    elif isinstance(panel, SeriesPanel):
        x_label = words(panel.x_label, lang) or "x"
        xs = [s.x for s in panel.series]
        if panel.series and all(x == xs[0] for x in xs) and len(xs[0]) <= 16:
            names = [x_label, *(words(s.name, lang) for s in panel.series)]
            for i, x in enumerate(xs[0]):
                out.append(
                    _pairs(names, [number(x, lang), *(cell(s.y[i], lang) for s in panel.series)], lang)
                )
        else:
            for s in panel.series:
                points = [(x, y) for x, y in zip(s.x, s.y, strict=False) if y is not None]
                if not points:
                    continue
                ys = [y for _, y in points]
                figures = say(
                    "plain.series",
                    lang,
                    first=cell(points[0][1], lang),
                    first_x=number(points[0][0], lang),
                    last=cell(points[-1][1], lang),
                    last_x=number(points[-1][0], lang),
                    low=cell(min(ys), lang),
                    high=cell(max(ys), lang),
                    x=x_label,
                )
                out.append(say("plain.pair", lang, name=words(s.name, lang), value=figures))
    elif isinstance(panel, TextPanel):
        out.append(words(panel.text, lang))
    return out


def result_lines(result: Result, lang: str) -> list[str]:
    """The whole result: its heading, every panel, then the headline numbers."""
    out = [heading(result, lang).plain]
    for panel in result.panels:
        out += ["", *panel_lines(panel, lang)]
    if result.metrics:
        out += ["", say("exp.metrics", lang)]
        for name, value in result.metrics.items():
            label = words(metric_label(result.experiment, name), lang)
            out.append(
                say("plain.pair", lang, name=label, value=metric_text(value, lang, result.experiment, name))
            )
    return out
