"""The first F3 and F4 only show screens made ahead, and a grade's verdict does not wait for its record.

The real app (App.run_test at 80×24), a real progress store and the real warm judge. The quiz's and the
lab's first screens are made behind home once the course has loaded (tutor.ui.first_frame.ScreensAhead), with no
trace: no sitting built, no learner's file, no judge started, home still on screen; the first F3 and F4
show those very screens and only then build the sitting, start the file and the warm judge. A grade is
shown as soon as it is back; the writer thread records it meanwhile (here held behind another
process's lock); a pass's next step is worked out once the progress holds it.
"""

from __future__ import annotations

from pathlib import Path

from tests.ui_helpers import answer_predictions, child_pids, make_app, settle, store_locked, until
from tutor.grading.workspace import workspace_file
from tutor.ui.screens.exercise import ExerciseScreen
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.quiz import QuizScreen
from tutor.ui.widgets.next_step import NextStep
from tutor.ui.widgets.quiz_panel import QuizPanel

SIZE = (80, 24)


def _made(app, kind):
    """The screens of `kind` the app holds in any mode (Textual keeps each mode's stack apart)."""
    return [s for stack in app._screen_stacks.values() for s in stack if isinstance(s, kind)]


async def test_the_first_f3_and_f4_show_screens_made_behind_home_without_a_trace(home: Path) -> None:
    before = child_pids()  # another test's children in this worker are not the app's
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await until(pilot, lambda: _made(app, QuizScreen) and _made(app, ExerciseScreen))
        await pilot.pause()
        (quiz,), (lab,) = _made(app, QuizScreen), _made(app, ExerciseScreen)
        assert isinstance(app.screen, HomeScreen)  # nothing showed
        assert quiz.session is None and not quiz.query(QuizPanel)  # the sitting waits for its F3
        ex = app.tutor.exercise(lab.exercise_id)[1]
        assert lab.file is None and not workspace_file(home, ex).exists()  # the file waits for its F4
        assert not child_pids() - before  # and so does the warm judge
        assert app.tutor.store.last_location() is None

        await pilot.press("f3")
        await until(pilot, lambda: app.screen is quiz and quiz.session is not None and quiz.query(QuizPanel))
        await pilot.press("f1")
        await pilot.pause()
        await pilot.press("f4")
        await until(pilot, lambda: app.screen is lab and lab.file is not None)
        assert workspace_file(home, ex).is_file()
        await until(pilot, lambda: bool(child_pids() - before))  # the warm judge, started from a thread
        await settle(app)


async def test_a_verdict_shows_while_its_record_waits(home: Path) -> None:
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_exercise("head-count")  # graded on stored runs and an answer: no judge to wait for
        screen = app.screen
        await until(pilot, lambda: any(q.session.current is not None for q in screen.query(QuizPanel)))
        await answer_predictions(pilot, screen)  # the predictions come first
        assert screen.unlocked
        store = app.tutor.store
        with store_locked(app):  # another process holds the store's write lock
            await pilot.press("g")
            await until(pilot, lambda: screen.result is not None)
            assert screen.result.saved is None  # on screen already, its record still waiting
            assert not store.submissions("head-count")
        await until(pilot, lambda: screen.result.saved is True)  # the lock gone: recorded
        (submission,) = store.submissions("head-count")
        assert submission.status == screen.result.status
        steps = list(screen.query(NextStep))
        assert all(not s.display for s in steps)  # not a pass: no next step
        await settle(app)
