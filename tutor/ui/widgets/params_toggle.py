"""The "▶ Parameters" line of an experiment panel: one widget, where Textual's Collapsible is
three (and every widget of a lesson is restyled each time the learner comes back to it).
Enter, space or a click opens or closes the form under it (the panel mounts the form)."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static


class ParamsToggle(Static, can_focus=True):
    DEFAULT_CSS = """
    ParamsToggle {
        width: auto;
        padding: 0 1;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
        &:hover { background: $block-hover-background; color: $foreground; }
        &:focus {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """
    BINDINGS = [Binding("enter,space", "toggle", show=False)]

    expanded: reactive[bool] = reactive(False)

    class Toggled(Message):
        def __init__(self, toggle: ParamsToggle) -> None:
            super().__init__()
            self.toggle = toggle

    def __init__(self, title: str, **kw) -> None:
        super().__init__(**kw)
        self.title = title

    def set_title(self, title: str) -> None:
        self.title = title
        self._show()

    def on_mount(self) -> None:
        self._show()

    def watch_expanded(self) -> None:
        self._show()

    def _show(self) -> None:
        self.update(f"{'▼' if self.expanded else '▶'} {self.title}")

    def on_click(self) -> None:
        self.action_toggle()

    def action_toggle(self) -> None:  # type: ignore[override]  # replaces DOMNode's action_toggle(attribute): the "toggle" binding means this one
        self.expanded = not self.expanded
        self.post_message(self.Toggled(self))
