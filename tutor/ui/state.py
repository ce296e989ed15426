"""What every screen shares: the course, the progress store, the language. No Textual here.

Loading the course and opening the store take a few hundred milliseconds (pydantic, SQLite), so
the app does it in a worker after the first screen is up; `load()` is that work.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from tutor.content.index import Index
    from tutor.content.loader import Course
    from tutor.content.schema import Exercise, Lesson
    from tutor.errors import TutorError
    from tutor.grading.judges import WarmJudge
    from tutor.progress.db import Held
    from tutor.progress.store import Store
    from tutor.texts import Said


T = TypeVar("T")

WRITER_THREAD = "tutor-writer"  # the one thread that writes the store, in order


@dataclass
class Loaded:
    course: Course | None
    store: Store | None
    error: TutorError | None = None  # the course or the store could not be opened at all
    notices: list[Said] = field(default_factory=list)  # worded where shown: notice.in_lang(lang)


def saved_index(lessons_dir: Path) -> Index | None:
    """The cards kept by the last start, if no lesson file has changed since (a few ms: the
    first frame lists the lessons with them)."""
    from tutor.content.index import saved_cards

    return saved_cards(lessons_dir)


def load(lessons_dir: Path, home: Path, held: Held | None = None) -> Loaded:
    """Course + store; every failure becomes a message, never an exception (the app must start).
    The course parsed last time is reused while its files are unchanged (tutor.course). `held`: the
    progress file held open since the app started, written back first if it was deleted since."""
    from tutor.course import open_course_cached
    from tutor.errors import TutorError

    try:
        course = open_course_cached(lessons_dir)
    except TutorError as err:  # e.g. the folder does not exist
        return Loaded(None, None, error=err)
    except Exception as err:  # a loader bug: shown in the app, which keeps running
        return Loaded(
            None, None, error=TutorError("err.app.load_bug", kind=type(err).__name__, detail=str(err))
        )
    restored: list[Said] = []
    try:
        from tutor.progress.store import Store

        if held is not None and (notice := held.written_back()) is not None:
            restored.append(notice)
        home.mkdir(parents=True, exist_ok=True)
        store = Store(home)
    except Exception as err:
        return Loaded(course, None, error=TutorError("err.app.no_store", home=str(home), error=err))
    finally:
        if held is not None:
            held.close()  # the store holds the file from here on
    return Loaded(course, store, notices=restored + list(store.notices))


@dataclass
class Tutor:
    """The app's model: the course once loaded, the store, the language, where the learner is."""

    lessons_dir: Path
    home: Path
    lang: str
    course: Course | None = None
    store: Store | None = None
    error: TutorError | None = None  # worded where shown: error.in_lang(lang)
    where: dict[str, str] = field(default_factory=dict)  # the last remember(): where the learner is
    index: Index | None = None  # what home lists: saved cards at first, the loaded course's after
    # told, in the writer thread, what the store has to say after a write (its file written back)
    on_notice: Callable[[Said], None] | None = field(default=None, repr=False)
    # the progress file, held open from the start until the store opens (tutor.progress.db.Held)
    held: Held | None = field(default=None, repr=False)
    _writer: ThreadPoolExecutor | None = field(default=None, repr=False)
    _warm: WarmJudge | None = field(default=None, repr=False)
    _warm_lock: threading.Lock = field(
        default_factory=threading.Lock, repr=False
    )  # started once, closed once

    def __post_init__(self) -> None:
        from tutor.progress.db import Held

        self.held = Held(self.home)  # from the first frame, which shows the progress, on

    @property
    def lessons(self) -> list[Lesson]:
        return self.course.lessons if self.course else []

    def lesson(self, lesson_id: str) -> Lesson | None:
        return next((x for x in self.lessons if x.id == lesson_id), None)

    def exercises(self) -> list[tuple[Lesson, Exercise]]:
        return [(lesson, ex) for lesson in self.lessons for ex in lesson.exercises]

    def exercise(self, exercise_id: str) -> tuple[Lesson, Exercise] | None:
        return next(((x, ex) for x, ex in self.exercises() if ex.id == exercise_id), None)

    def remember(self, **location: str | None) -> None:
        """Where the learner is, for "continue where I left off" (kept here, and in the store for
        the next start); a store error never stops the app."""
        where = {k: v for k, v in location.items() if v is not None}
        if where == self.where:
            return  # nothing new to write (screen switches ask often)
        self.where = where
        self.write(lambda store: store.set_last_location(where))  # lost if the store fails: no matter

    def write(
        self, action: Callable[[Store], object], on_error: Callable[[Exception], None] | None = None
    ) -> None:
        """`action(store)` in the writer thread: a write takes a few ms (tens on a busy disk, or while
        another process writes), never on the UI thread; one at a time, in order; all done before the
        app ends (close). `on_error` is called in the writer thread."""
        if self.store is not None:
            self._pool().submit(self._write, action, on_error)

    async def written(self, action: Callable[[Store], T]) -> T:
        """`action(store)` in the writer thread, after the writes queued before it, awaited: for a
        write whose outcome the screen shows (a quiz answer's feedback). The UI keeps running
        meanwhile, also while another process holds the store's lock; `action`'s exception is raised
        here. Only with a store (the caller checks)."""
        assert self.store is not None  # the caller checks
        return await asyncio.wrap_future(self._pool().submit(self._told, action, self.store))

    def _told(self, action: Callable[[Store], T], store: Store) -> T:
        """`action(store)`, then what the store has to say about it (a notice goes to on_notice)."""
        try:
            return action(store)
        finally:
            news = store.db.take_news() if store is not None else []
            for notice in news:
                if self.on_notice is not None:
                    self.on_notice(notice)

    def _pool(self) -> ThreadPoolExecutor:
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=WRITER_THREAD)
        return self._writer

    def _write(self, action: Callable[[Store], object], on_error: Callable[[Exception], None] | None) -> None:
        try:
            assert self.store is not None  # write() submits only with a store
            self._told(action, self.store)
        except Exception as err:  # a busy or read-only store must not break the app
            if on_error is not None:
                on_error(err)

    def warm_judge(self) -> WarmJudge:
        """The app's warm judge, started the first time an exercise asks (a child process that imports
        torch: the app never waits for it) and kept until the app ends. Thread-safe: the lab starts it
        from a thread of its own (start_warm_judge), a grade asks for it in another."""
        with self._warm_lock:
            if self._warm is None or not self._warm.server.alive:
                from tutor.grading.judges import WarmJudge

                self._warm = WarmJudge()
            return self._warm

    def start_warm_judge(self) -> None:
        """warm_judge() in a thread: forking the app's large process for the judge costs the UI's
        thread nothing."""
        threading.Thread(target=self.warm_judge, name="warm-judge-start", daemon=True).start()

    def close(self) -> None:
        """Stop the warm judge, finish the writes still queued, then close the store."""
        with self._warm_lock:
            if self._warm is not None:
                self._warm.close()
                self._warm = None
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        if self.held is not None:
            self.held.close()
        if self.store is not None:
            self.store.close()
