"""Text the learner reads (lesson prose, exercise tasks, hints, grade messages) as Rich renderables
that break lines the way tutor.wrap does: English and German between words, never inside one;
Chinese between characters, never before closing punctuation nor after opening punctuation.

Rich alone breaks only at spaces, so a Chinese paragraph is cut at any cell, "，" may start a line,
and mixed Chinese and Latin text breaks raggedly at its few spaces. It also measures a line's
trailing space in characters rather than cells (Text.rstrip_end), so a line holding a wide character
(Chinese, an emoji) that ends exactly at the edge loses its last word to an ellipsis in a table cell
("slopes … and 2"). `ProseText` wraps with tutor.wrap.breaks and strips by cells instead.

`Prose` is Rich's Markdown with ProseText in paragraphs, headings and table cells, lines at most
`MAX_WIDTH` columns (wider lines are hard to read), code blocks wrapped rather than cut (Rich's
Syntax with word_wrap), numbered items numbered as written ("1."), and emphasis on Chinese text shown
bold: many terminals draw no italics for Chinese characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.markdown import Heading, ListItem, Markdown, Paragraph, TableDataElement
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Lines, Text

from tutor.wrap import breaks, wide, widest_unit

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.markdown import MarkdownContext
    from rich.text import TextType

MAX_WIDTH = 100  # prose lines, in columns, however wide the terminal (the plain quiz keeps to 100 too)

_NOT_ITALIC = Style(italic=False, bold=True)


class ProseText(Text):
    """A Rich Text that breaks its lines at tutor.wrap's places and is never cut short."""

    def wrap(
        self,
        console: Console,
        width: int,
        *,
        justify=None,
        overflow=None,
        tab_size: int = 8,
        no_wrap: bool | None = None,
    ) -> Lines:
        if (no_wrap if no_wrap is not None else bool(self.no_wrap)) or overflow == "ignore":
            return super().wrap(
                console, width, justify=justify, overflow=overflow, tab_size=tab_size, no_wrap=no_wrap
            )
        justify = justify or self.justify or "default"
        lines = Lines()
        for line in self.split(allow_blank=True):
            if "\t" in line.plain:
                line.expand_tabs(tab_size)
            parts = line.divide(breaks(line.plain, width))
            for part in parts:
                part.rstrip()  # the spaces at a break, measured as they are: no word is lost for them
            parts.justify(console, width, justify=justify, overflow="fold")
            lines.extend(parts)
        return lines

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lines = self.plain.split("\n")
        return Measurement(max(map(widest_unit, lines)), max(map(cell_len, lines)))

    def copy(self) -> ProseText:
        return ProseText(
            self.plain,
            style=self.style,
            justify=self.justify,
            overflow=self.overflow,
            no_wrap=self.no_wrap,
            end=self.end,
            tab_size=self.tab_size,
            spans=list(self.spans),
        )


def cjk_safe(style: Style, text: TextType) -> Style:
    """Emphasis on Chinese text is bold, not italic."""
    plain = text if isinstance(text, str) else text.plain
    return style + _NOT_ITALIC if style.italic and any(map(wide, plain)) else style


class _ProseElement:
    text: Text

    def on_text(self, context: MarkdownContext, text: TextType) -> None:
        if isinstance(text, str):
            self.text.append(text, cjk_safe(context.current_style, text))
        else:
            self.text.append(text)


class _Paragraph(_ProseElement, Paragraph):
    def on_enter(self, context: MarkdownContext) -> None:
        super().on_enter(context)
        self.text = ProseText(justify="left")


class _Heading(_ProseElement, Heading):
    def on_enter(self, context: MarkdownContext) -> None:
        super().on_enter(context)
        self.text = ProseText()


class _Cell(TableDataElement):
    def __init__(self, justify) -> None:
        super().__init__(justify)
        self.content = ProseText("", justify=justify)

    def on_text(self, context: MarkdownContext, text: TextType) -> None:
        if isinstance(text, str):
            self.content.append(text, cjk_safe(context.current_style, text))
        else:
            self.content.append_text(text)


class _ListItem(ListItem):
    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        """ "1. " as written, where Rich draws "1 " (quiz choices are typed by these numbers)."""
        width = len(str(last_number)) + 3
        lines = console.render_lines(
            self.elements, options.update(width=options.max_width - width), style=self.style
        )
        style = console.get_style("markdown.item.number", default="none")
        for i, line in enumerate(lines):
            yield Segment(f"{number}. ".rjust(width) if i == 0 else " " * width, style)
            yield from line
            yield Segment("\n")


class Prose(Markdown):
    """Rich Markdown whose lines break at tutor.wrap's places, at most `width` columns wide."""

    elements = {
        **Markdown.elements,
        "paragraph_open": _Paragraph,
        "heading_open": _Heading,
        "list_item_open": _ListItem,
        "td_open": _Cell,
        "th_open": _Cell,
    }

    def __init__(self, markup: str, *, width: int = MAX_WIDTH, **kw) -> None:
        super().__init__(markup, **kw)
        self.width = width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from super().__rich_console__(console, options.update_width(min(options.max_width, self.width)))


def as_prose(text: Text) -> ProseText:
    """A Rich Text (e.g. an experiment's note from tutor.experiments.render) that breaks like prose."""
    return ProseText(text.plain, style=text.style, justify=text.justify, end=text.end, spans=list(text.spans))
