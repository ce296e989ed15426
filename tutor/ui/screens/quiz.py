"""The quiz screen: a lesson's questions, or a review: what is due across the lessons, then a few new ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from tutor.content.schema import Lesson
from tutor.i18n import pick
from tutor.texts import say
from tutor.ui.messages import OpenLesson
from tutor.ui.prose_text import ProseText
from tutor.ui.screens.base import TutorScreen
from tutor.ui.state import Tutor
from tutor.ui.widgets.key_bar import KeyBar
from tutor.ui.widgets.next_step import NextStep
from tutor.ui.widgets.quiz_panel import QuizPanel

if TYPE_CHECKING:
    from tutor.quiz.session import QuizSession


class QuizScreen(TutorScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self, make_session: Callable[[Tutor], QuizSession], lesson: Lesson | None) -> None:
        super().__init__()
        self.make_session = make_session
        self.lesson = lesson  # None: review-due mode
        self.session: QuizSession | None = None

    @classmethod
    def for_review(cls, tutor: Tutor) -> QuizScreen:
        def make(tu: Tutor) -> QuizSession:
            from tutor.quiz.session import QuizSession

            assert tu.store is not None  # made once the store is open (refresh_content)
            return QuizSession.for_review(tu.store, tu.lessons, lang=tu.lang)

        return cls(make, None)

    @classmethod
    def for_lesson(cls, tutor: Tutor, lesson: Lesson) -> QuizScreen:
        def make(tu: Tutor) -> QuizSession:
            from tutor.quiz.session import QuizSession

            assert tu.store is not None  # made once the store is open (refresh_content)
            return QuizSession.for_lesson(tu.store, lesson, lang=tu.lang)

        return cls(make, lesson)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="quiz-box"):
            yield Static(id="quiz-title", classes="title")
        yield KeyBar()

    @property
    def panel(self) -> QuizPanel | None:
        return next(iter(self.query(QuizPanel)), None)

    def _title(self) -> str:
        if self.lesson is not None:
            return self.t("quiz.title", title=pick(self.lesson.title, self.lang))
        plan = self.session.plan if self.session is not None else None
        title = say("quiz.review", self.lang)
        if plan is None:
            return title
        return f"{title} · {say('quiz.plan', self.lang, due=len(plan.due), new=len(plan.new))}"

    def refresh_content(self) -> None:
        title = self.query_one("#quiz-title", Static)
        if self.session is None:
            # the sitting is built when the screen is first shown, not when it is made ahead behind home
            # (tutor.ui.first_frame.ScreensAhead): what is due then, with every answer given until then
            if self.tutor.store is None or self.made_ahead or not self.is_current:
                title.update(Text(self.t("home.loading") if self.tutor.course is None else self._title()))
                return
            self.session = self.make_session(self.tutor)
            self.query_one("#quiz-box").mount(QuizPanel(self.session, self.lang, on_finished=self._finished))
        else:
            self.session.lang = self.lang
            if self.panel is not None:
                self.panel.refresh_content(self.lang)
        title.update(Text(self._title()))
        self._show_stats()

    def on_screen_resume(self) -> None:
        if self.session is None and self.tutor.store is not None:
            self.draw()

    def _show_stats(self) -> None:
        """Under a review: today's work against the daily cap, retention, the questions by stage, the next
        seven days' load and the intervals (tutor.progress.review_stats; `progress` prints the same)."""
        if self.lesson is not None or self.tutor.store is None:
            return
        from tutor.progress.review_stats import review_stats, stats_lines
        from tutor.quiz.fit import fit_note

        store = self.tutor.store
        try:
            lines = stats_lines(
                review_stats(store, self.tutor.lessons, store.now()), self.lang, fit_note(store, self.lang)
            )
        except Exception:  # statistics are extra: the review goes on without them
            return
        box = next(iter(self.query("#quiz-stats").results(Static)), None)
        if box is None:
            box = Static(id="quiz-stats", classes="hint")
            self.query_one("#quiz-box").mount(box)
        box.update(ProseText("\n".join(lines)))

    def on_quiz_panel_answered(self) -> None:
        self._show_stats()  # today's counts move with every answer, not only when the sitting is done

    def _finished(self) -> None:
        """The sitting is over: what next (n does it), and the statistics as they are now."""
        step = NextStep(id="quiz-next")
        stats = next(iter(self.query("#quiz-stats")), None)
        self.query_one("#quiz-box").mount(step, before=stats)
        step.suggest()
        self._show_stats()

    def action_back(self) -> None:
        if self.lesson is not None:
            self.post_message(OpenLesson(self.lesson.id))  # as the exercise screen's back: the app opens it
        else:
            self.app.switch_mode("home")
