"""The predictions asked before the task shows (an exercise's `predict` questions, in a QuizPanel): the
task, the file and the keys that act on it stay locked until they are answered (tutor.quiz.session)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tutor.ui.widgets.quiz_panel import QuizPanel

if TYPE_CHECKING:
    from tutor.content.schema import Exercise, Lesson
    from tutor.ui.screens.exercise import ExerciseScreen


class Predictions:
    def __init__(self, screen: ExerciseScreen) -> None:
        self.screen = screen
        self.unlocked = False  # answered (or none to answer): the task shows

    def locked(self) -> bool:
        """Whether the task still waits for the predictions (and the learner is told so)."""
        if not self.unlocked:
            self.screen.notify(self.screen.t("ex.predict_first"))
            return True
        return False

    def draw(self, lesson: Lesson, ex: Exercise) -> None:
        """The questions, asked until they are answered; nothing once the task is unlocked."""
        screen = self.screen
        box = screen.query_one("#ex-predict", Vertical)
        panel = next(iter(box.query(QuizPanel)), None)
        if self.unlocked:
            box.display = False
            return
        if panel is not None:
            panel.refresh_content(screen.lang)
            return
        store = screen.tutor.store
        if store is None:
            return
        from tutor.quiz.session import QuizSession, predictions_unlocked

        if not ex.predict or predictions_unlocked(store, ex):
            self.unlocked = True
            box.display = False
            return
        session = QuizSession.for_predictions(store, lesson, ex, lang=screen.lang)
        box.mount(Static(screen.t("ex.predict_first"), classes="hint"))
        box.mount(QuizPanel(session, screen.lang, on_finished=self._done))

    def _done(self) -> None:
        screen, pair = self.screen, self.screen.pair
        if pair is None or screen.tutor.store is None:
            return
        from tutor.quiz.session import predictions_unlocked

        if predictions_unlocked(screen.tutor.store, pair[1]):
            self.unlocked = True
            screen.refresh_content()
            box = screen.query_one("#ex-box", VerticalScroll)
            box.focus()  # the answer box is gone: the keys scroll the page
            box.scroll_home(animate=False)
