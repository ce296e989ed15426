"""The bottom bar: the keys that make sense on this screen now, in the learner's language.

One Static redrawn from the screen's active bindings. Textual's Footer rebuilds a widget per key
several times on every screen switch, which made going home and back take ~30 ms longer.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tutor.ui.strings import t


class KeyBar(Static):
    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self.redraw()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, screen) -> None:
        if self.is_attached and screen is self.screen:
            self.redraw()

    def redraw(self) -> None:
        app = self.app
        accent = app.current_theme.accent or "yellow"
        text = Text(no_wrap=True, overflow="ellipsis")
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.show or not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            style = f"bold {accent}" if active.enabled else "dim"
            text.append(f" {app.get_key_display(binding)} ", style=style)
            text.append(f"{binding.description} ", style="" if active.enabled else "dim")
        lang = getattr(app, "lang", "en")
        text.append(" ^p ", style=f"bold {accent}")
        text.append(t("key.palette", lang))
        self.update(text)
