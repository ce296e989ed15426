"""Asked when the learner leaves the built-in editor (tutor.ui.widgets.code_editor) with text not saved:
keep editing (the default: Esc, or Enter on the first button) or discard the changes."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tutor.texts import say


class UnsavedChanges(ModalScreen[bool]):
    """Dismissed with True to discard the changes, False to keep editing."""

    DEFAULT_CSS = """
    UnsavedChanges { align: center middle; }
    UnsavedChanges > Vertical {
        width: 64; max-width: 100%; height: auto;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    UnsavedChanges .unsaved-title { text-style: bold; margin-bottom: 1; }
    UnsavedChanges Horizontal { height: auto; margin-top: 1; }
    UnsavedChanges Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "keep", show=False)]
    AUTO_FOCUS = "#keep"  # Enter keeps editing

    def __init__(self, file_name: str, lang: str) -> None:
        super().__init__()
        self.file_name = file_name
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(say("ex.editor.unsaved_title", self.lang), classes="unsaved-title")
            yield Static(say("ex.editor.unsaved_body", self.lang, file=self.file_name))
            with Horizontal():
                yield Button(say("ex.editor.keep", self.lang), id="keep", variant="primary")
                yield Button(say("ex.editor.discard", self.lang), id="discard", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "discard")

    def action_keep(self) -> None:
        self.dismiss(False)
