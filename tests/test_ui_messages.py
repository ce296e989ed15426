"""The app's state reaches the screens as reactives, and the screens reach the app with Messages:
a language message relabels the screen on show at once and every other screen when it is shown
again; home and lesson keys post navigation messages that the app turns into screens."""

from __future__ import annotations

from textual.widgets import Static

from tests.ui_helpers import make_app, settle
from tutor.i18n import pick
from tutor.texts import say
from tutor.ui.app import TutorApp
from tutor.ui.messages import ContinueLast, OpenExercise, OpenLesson, OpenQuiz, SetLanguage
from tutor.ui.screens.exercise import ExerciseScreen
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.screens.quiz import QuizScreen
from tutor.ui.widgets.key_bar import KeyBar


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).content)


async def test_a_language_message_relabels_this_screen_now_and_the_others_when_shown(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await settle(app)
        lesson_screen = app.screen
        lesson = app.tutor.lesson("positions")
        app.switch_mode("home")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)

        app.screen.post_message(SetLanguage("de"))  # as the palette's language command does
        await pilot.pause()
        assert (app.lang, app.tutor.lang) == ("de", "de")
        assert _text(app.screen, "#home-title") == say("app.title", "de")
        assert say("key.continue", "de") in str(app.screen.query_one(KeyBar).content)

        app.switch_mode("lesson")  # the lesson screen kept its widgets and now speaks German
        await pilot.pause()
        assert app.screen is lesson_screen
        assert _text(app.screen, "#lesson-title") == pick(lesson.title, "de")
        titles = [str(w.content) for w in app.screen.query(".section-title").results(Static)]
        assert titles == [pick(s.title, "de") for s in lesson.sections]
        assert say("key.quiz", "de") in str(app.screen.query_one(KeyBar).content)


class RecordingApp(TutorApp):
    """The real app, also keeping every navigation message it handles (its own handlers still run)."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.asked: list = []

    def on_open_lesson(self, message: OpenLesson) -> None:
        self.asked.append(message)

    def on_open_exercise(self, message: OpenExercise) -> None:
        self.asked.append(message)

    def on_open_quiz(self, message: OpenQuiz) -> None:
        self.asked.append(message)

    def on_continue_last(self, message: ContinueLast) -> None:
        self.asked.append(message)


async def test_keys_on_the_screens_post_messages_that_the_app_turns_into_screens(home):
    from tutor.settings import shipped_lessons_dir

    app = RecordingApp(lang="en", lessons_dir=shipped_lessons_dir(), home=home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        await pilot.press("x")  # home, first lesson: its first exercise in course order
        await settle(app)
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise_id == "split-heads"
        await pilot.press("escape")  # back to the lesson, at the exercise's section
        await settle(app)
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson_id == "multi-head"
        await pilot.press("q")
        await settle(app)
        assert isinstance(app.screen, QuizScreen) and app.screen.lesson.id == "multi-head"
        app.switch_mode("home")
        await pilot.pause()
        await pilot.press("c")  # continue: the quiz was the last place
        await settle(app)
        assert isinstance(app.screen, QuizScreen)
    assert [type(m).__name__ for m in app.asked] == ["OpenExercise", "OpenLesson", "OpenQuiz", "ContinueLast"]
    exercise, back, quiz, _continue = app.asked
    assert exercise.exercise_id == "split-heads" and quiz.lesson_id == "multi-head"
    assert (back.lesson_id, back.section) == ("multi-head", "split-heads")
