"""Asked when the learner quits while a training run goes: quit and lose the run in progress, or keep
training (the default: Esc, or Enter on the first button). Finished runs of the job are in the store
already (the child records each as it ends), so the question names only what would be lost."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tutor.texts import say
from tutor.ui.messages import Training


class QuitTraining(ModalScreen[bool]):
    """Dismissed with True to quit, False to keep training."""

    DEFAULT_CSS = """
    QuitTraining { align: center middle; }
    QuitTraining > Vertical {
        width: 64; max-width: 100%; height: auto;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    QuitTraining .quit-title { text-style: bold; margin-bottom: 1; }
    QuitTraining Horizontal { height: auto; margin-top: 1; }
    QuitTraining Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "keep", show=False)]
    AUTO_FOCUS = "#keep"  # Enter keeps training

    def __init__(self, training: Training, lang: str) -> None:
        super().__init__()
        self.training = training
        self.lang = lang

    def compose(self) -> ComposeResult:
        t, lang = self.training, self.lang
        with Vertical():
            yield Static(say("run.quit_title", lang), classes="quit-title")
            yield Static(
                say(
                    "run.quit_body",
                    lang,
                    title=say(f"exp.{t.experiment}.title", lang),
                    run=t.run,
                    runs=t.runs,
                    step=t.step,
                    steps=t.steps,
                    done=t.run - 1,
                )  # fmt: skip
            )
            with Horizontal():
                yield Button(say("run.quit_keep", lang), id="keep", variant="primary")
                yield Button(say("run.quit_lose", lang), id="lose", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "lose")

    def action_keep(self) -> None:
        self.dismiss(False)
