"""Text the learner reads (lesson prose, exercise tasks, hints, grade messages) as Rich renderables
that break lines the way tutor.wrap does: English and German between words, never inside one;
Chinese between characters, never before closing punctuation nor after opening punctuation.

Rich alone breaks only at spaces, so a Chinese paragraph is cut at any cell, "，" may start a line,
and mixed Chinese and Latin text breaks raggedly at its few spaces. It also measures a line's
trailing space in characters rather than cells (Text.rstrip_end), so a line holding a wide character
(Chinese, an emoji) that ends exactly at the edge loses its last word to an ellipsis in a table cell
("slopes … and 2"). `ProseText` (tutor.ui.prose_text) wraps with tutor.wrap.breaks and strips by
cells instead.

`Prose` is Rich's Markdown with ProseText in paragraphs, headings and table cells, lines at most
`MAX_WIDTH` columns (wider lines are hard to read), code blocks wrapped rather than cut, a long line
of code going on under its own indentation after "↪" (tutor.wrap.code_breaks; Rich's Syntax would
start it at column 0), numbered items numbered as written ("1."), and emphasis on Chinese text shown
bold: many terminals draw no italics for Chinese characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markdown import CodeBlock, Heading, ListItem, Markdown, Paragraph, TableDataElement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from tutor.ui.prose_text import ProseText
from tutor.wrap import CONTINUED, MAX_WIDTH, code_breaks, wide

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.markdown import MarkdownContext
    from rich.text import TextType


_NOT_ITALIC = Style(italic=False, bold=True)


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


class _CodeBlock(CodeBlock):
    """Highlighted code whose long lines go on under their own indentation after "↪"."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        width = max(options.max_width - 2, 1)  # a column of padding on each side, as Rich's Syntax has
        shown = Text()
        for line in Syntax(code, self.lexer_name, theme=self.theme).highlight(code).split("\n"):
            prefix, starts = code_breaks(line.plain, width)
            for i, piece in enumerate(line.divide(starts)):
                if i:
                    shown.append(prefix.removesuffix(CONTINUED))
                    shown.append(CONTINUED, "dim")
                shown.append_text(piece)
                shown.append("\n")
        shown.rstrip()
        yield Padding(shown, 1, style=Syntax.get_theme(self.theme).get_background_style(), expand=True)


class Prose(Markdown):
    """Rich Markdown whose lines break at tutor.wrap's places, at most `width` columns wide."""

    elements = {
        **Markdown.elements,
        "paragraph_open": _Paragraph,
        "heading_open": _Heading,
        "list_item_open": _ListItem,
        "td_open": _Cell,
        "th_open": _Cell,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, markup: str, *, width: int = MAX_WIDTH, **kw) -> None:
        super().__init__(markup, **kw)
        self.width = width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from super().__rich_console__(console, options.update_width(min(options.max_width, self.width)))


def as_prose(text: Text) -> ProseText:
    """A Rich Text (e.g. an experiment's note from tutor.experiments.render) that breaks like prose."""
    return ProseText(text.plain, style=text.style, justify=text.justify, end=text.end, spans=list(text.spans))
