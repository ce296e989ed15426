"""A question asked before something is lost: keep (the default: Esc, or Enter on the first button), lose
it, or (where there is one) a way to keep it and go on. Quitting during a training run
(tutor.ui.screens.quit_training) and leaving the built-in editor with text not saved
(tutor.ui.screens.unsaved: save, keep editing, discard) ask it in their own words."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class KeepOrLose(ModalScreen[str]):
    """Dismissed with the id of the button pressed: "keep" (also Esc), the lose button's, or the other's."""

    DEFAULT_CSS = """
    KeepOrLose { align: center middle; }
    KeepOrLose > Vertical {
        width: 72; max-width: 100%; height: auto;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    KeepOrLose .question-title { text-style: bold; margin-bottom: 1; }
    KeepOrLose Horizontal { height: auto; margin-top: 1; }
    KeepOrLose Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "keep", show=False)]
    AUTO_FOCUS = "#keep"  # Enter keeps

    def __init__(
        self,
        title: str,
        body: str,
        keep: str,
        lose: str,
        lose_id: str = "lose",
        other: tuple[str, str] | None = None,
    ) -> None:
        super().__init__()
        self._texts = title, body, keep, lose
        self._lose_id = lose_id
        self._other = other  # (words, id) of a third answer, shown between keep and lose

    def compose(self) -> ComposeResult:
        title, body, keep, lose = self._texts
        with Vertical():
            yield Static(title, classes="question-title")
            yield Static(body)
            with Horizontal():
                yield Button(keep, id="keep", variant="primary")
                if self._other is not None:
                    yield Button(self._other[0], id=self._other[1], variant="success")
                yield Button(lose, id=self._lose_id, variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id or "keep")

    def action_keep(self) -> None:
        self.dismiss("keep")
