"""`ProseText`: a Rich Text that breaks its lines the way tutor.wrap does (Chinese between characters,
never before ，。）」 nor after （「; a formula written with spaces kept whole) and strips by cells, so it is
never cut short. Apart from tutor.ui.rich_markdown (Rich's Markdown with it) so that a screen of the app's
first frame (home) can use it without loading Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.measure import Measurement
from rich.text import Lines, Text

from tutor.wrap import breaks, widest_unit

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions


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

    def visualize(self) -> _Drawn:
        """Drawn by Rich in a Textual widget, so its lines break here: Textual makes a Text its own
        Content, which breaks only at spaces (a Chinese line then ends in "d_k =")."""
        return _Drawn(self)

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


class _Drawn:
    """A ProseText as Textual's RichVisual draws it: not a Text, so Textual neither turns it into its
    Content nor measures its height as a plain Text would break (at spaces only)."""

    def __init__(self, text: ProseText) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        yield self.text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return self.text.__rich_measure__(console, options)
