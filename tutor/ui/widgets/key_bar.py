"""The bottom bar: the keys that make sense on this screen now, in the learner's language.

One Static redrawn from the screen's active bindings. Textual's Footer rebuilds a widget per key
several times on every screen switch, which made going home and back take ~30 ms longer.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from tutor.texts import say


class KeyBar(Static):
    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self.redraw()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, screen) -> None:
        if self.is_attached and screen is self.screen:
            self.redraw()

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        app = self.app
        accent = app.current_theme.accent or "yellow"
        text = Text(no_wrap=True, overflow="ellipsis")
        ends: list[int] = []  # where each key's entry ends: a narrow bar shows whole entries only
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.show or not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            style = f"bold {accent}" if active.enabled else "dim"
            text.append(f" {app.get_key_display(binding)} ", style=style)
            text.append(f"{binding.description} ", style="" if active.enabled else "dim")
            ends.append(len(text))
        lang = getattr(app, "lang", "en")
        text.append(" ^p ", style=f"bold {accent}")
        text.append(say("key.palette", lang))
        ends.append(len(text))
        width = self.size.width
        if width and text.cell_len > width:
            fits = [end for end in ends if cell_len(text.plain[:end].rstrip()) <= width]
            text = text[: fits[-1]] if fits else text
        self.update(text)
