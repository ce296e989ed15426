"""The app and its progress store: every write goes through the one writer thread (Tutor.write,
Tutor.written), and the UI thread's reads never wait for it, also while another process holds the
store's write lock (up to the 5 s busy timeout)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from tests.ui_helpers import answer_predictions, make_app, settle, store_locked, until
from tutor.texts import say
from tutor.ui.screens.exercise import ExerciseScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.screens.quiz import QuizScreen
from tutor.ui.state import WRITER_THREAD
from tutor.ui.widgets.quiz_panel import QuizPanel

SIZE = (80, 24)
LESSON, EXERCISE = "multi-head", "head-count"  # head-count is graded on stored runs: no judge to wait for


def _writer_waiting(store) -> bool:
    """Whether another thread (the app's writer) holds the store's write side."""
    if store.db._lock.acquire(blocking=False):
        store.db._lock.release()
        return False
    return True


async def _opens_at_once(app, pilot, opening, shown) -> None:
    started = time.monotonic()
    await opening
    await until(pilot, shown, timeout=2)
    assert time.monotonic() - started < 2


async def test_screens_open_while_the_writer_waits_and_a_grade_is_recorded_by_the_writer(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        store = app.tutor.store
        with store_locked(app):
            waiting = asyncio.ensure_future(app.tutor.written(lambda s: s.set_value("probe", 1)))
            await until(pilot, lambda: _writer_waiting(store))
            await _opens_at_once(
                app, pilot, app.open_lesson(LESSON), lambda: isinstance(app.screen, LessonScreen)
            )
            await _opens_at_once(
                app,
                pilot,
                app.open_exercise(EXERCISE),
                lambda: isinstance(app.screen, ExerciseScreen) and bool(app.screen.query(QuizPanel)),
            )
            await _opens_at_once(
                app,
                pilot,
                app.open_quiz(LESSON),
                lambda: isinstance(app.screen, QuizScreen) and bool(app.screen.query(QuizPanel)),
            )
            assert not waiting.done()  # every screen opened while the write still waited
        await waiting
        assert store.get_value("probe") == 1

        recorded_in: list[str] = []
        record = store.record_submission

        def record_submission(*args, **kwargs):
            recorded_in.append(threading.current_thread().name)
            return record(*args, **kwargs)

        monkeypatch.setattr(store, "record_submission", record_submission)
        await app.open_exercise(EXERCISE)
        screen = app.screen
        await answer_predictions(pilot, screen)  # the predictions come first
        assert screen.unlocked
        await pilot.press("g")
        await until(pilot, lambda: screen.result is not None)
        await until(pilot, lambda: screen.result.saved is not None)  # recorded while the verdict shows
        await settle(app)
        assert len(recorded_in) == 1 and recorded_in[0].startswith(WRITER_THREAD)
        (submission,) = store.submissions(EXERCISE)
        assert submission.status == screen.result.status and screen.result.saved is True

        first = screen.result
        store.db.conn.execute("PRAGMA busy_timeout = 50")  # each try of the save gives up at once
        with store_locked(app):
            await pilot.press("g")
            await until(pilot, lambda: screen.result is not first)
            await until(pilot, lambda: screen.result.saved is not None)
        assert screen.result.saved is False and len(store.submissions(EXERCISE)) == 1
        assert say("grade.not_saved", "en") in [n.message for n in app._notifications]  # the verdict, unsaved
