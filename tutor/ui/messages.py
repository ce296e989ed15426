"""What a screen asks of the app, as Messages: posted on the screen, they bubble up to the app,
which handles them (tutor/ui/app.py). Screens never call the app's methods to navigate; widgets read the
app only through tutor.ui.widgets.host.Host.

The other way round, the app's state travels as reactives that screens watch: `lang`,
`course_loaded` and Textual's own `theme` (tutor/ui/screens/base.py), and `training` (the one
training run, which every screen's key bar shows).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


class OpenLesson(Message):
    """Show a lesson, at a section or at an experiment's panel if given."""

    def __init__(self, lesson_id: str, section: str | None = None, experiment: str | None = None) -> None:
        super().__init__()
        self.lesson_id, self.section, self.experiment = lesson_id, section, experiment


class OpenQuiz(Message):
    """A lesson's quiz; with no lesson, the review of everything due."""

    def __init__(self, lesson_id: str | None) -> None:
        super().__init__()
        self.lesson_id = lesson_id


class OpenExercise(Message):
    def __init__(self, exercise_id: str) -> None:
        super().__init__()
        self.exercise_id = exercise_id


class ContinueLast(Message):
    """Go back to where the learner left off (the last lesson, quiz or exercise)."""


class SetLanguage(Message):
    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang


@dataclass(frozen=True)
class Training:
    """Where the one training job stands, its runs together (several train side by side): shown on every
    screen (the key bar), stoppable from any. `total` is 0 until its first step."""

    experiment: str
    runs: int = 1
    finished: int = 0  # runs ended: read back from the store, or trained and kept
    stored: int = 0  # of them read back from the store, not trained
    done: int = 0  # steps trained, of all its runs (it never goes back)
    total: int = 0  # steps to train in all
    eta_s: float | None = None


class TrainingProgress(Message):
    """A panel's training run started, moved on (`training`), or ended (None)."""

    def __init__(self, training: Training | None) -> None:
        super().__init__()
        self.training = training
