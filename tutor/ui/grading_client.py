"""Grading the learner's file from the app, through the app's warm judge (no Textual here), and
training the model a passing file builds (exercise train).

The grade runs in a thread: the file is read, a judge is forked from the warm judge (Tutor.warm_judge),
the judge builds the worker's box; then the app's writer thread records the submission (Tutor.written) as
`python -m tutor grade` records it (tutor.grading.submissions.save_submission). Cancelling the awaiting
task (the learner left, or quit) stops the judge, and its box dies with it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.judges import WarmJudge
from tutor.grading.result import GradeResult
from tutor.grading.runner import OwnTraining

if TYPE_CHECKING:
    from tutor.ui.state import Tutor

T = TypeVar("T")


class GradeFailed(TutorError):
    """The grader itself could not produce a verdict (not: the learner's code failed)."""


async def _in_thread(work: Callable[[threading.Event], T]) -> T:
    """`work(cancel)` in a thread; cancelling the awaiting task sets `cancel`, which stops its judge.
    GradeFailed when the grader could not run at all."""
    from tutor.proc.child import ChildCancelled

    cancel = threading.Event()
    try:
        return await asyncio.to_thread(work, cancel)
    except asyncio.CancelledError:
        cancel.set()  # the thread stops the judge and ends
        raise
    except ChildCancelled:
        raise asyncio.CancelledError() from None
    except TutorError as err:
        raise GradeFailed(err.key, **err.values) from None
    except OSError as err:  # the system's own words
        raise GradeFailed(str(err)) from None


async def grade_in_thread(
    tutor: Tutor,
    ex: Exercise,
    file: Path,
    lang: str,
    record: bool = True,
    on_recorded: Callable[[bool], None] | None = None,
) -> GradeResult:
    """Grade `file` with a judge forked from the app's warm judge; GradeFailed when no verdict comes back.
    The submission is recorded by the app's writer thread once the grade is back, while it is shown (also
    when the learner leaves meanwhile); then `result.saved` is True, or False if the store stayed busy,
    and `on_recorded(saved)` is called in the event loop. `record=False`: the same
    grade worded in another language, not a new submission."""
    from tutor.grading.safe_read import read_submission
    from tutor.grading.submissions import grade_source, save_submission

    warm, store = tutor.warm_judge(), tutor.store

    def work(cancel: threading.Event) -> tuple[bytes, GradeResult]:
        source = read_submission(file, lang=lang)  # read once: the graded text is the recorded one
        return source, grade_source(ex, source, str(file), lang=lang, store=store, warm=warm, cancel=cancel)

    source, result = await _in_thread(work)
    if record and store is not None:
        # recorded after the verdict is back, not before it is shown: the write (its turn in the writer
        # thread, the SQLite commit) goes on while the screen draws the result, and ends also when the
        # learner leaves meanwhile; then result.saved says how it went, and on_recorded is told
        result.saved = None
        save = asyncio.ensure_future(
            tutor.written(lambda writing: save_submission(writing, ex, source, result))
        )
        _saving.add(save)

        def done(task: asyncio.Future) -> None:
            _saving.discard(task)
            result.saved = False if task.cancelled() or task.exception() else task.result()
            if on_recorded is not None:
                on_recorded(result.saved)

        save.add_done_callback(done)
    return result


_saving: set[asyncio.Future] = set()  # the records of grades under way (a task nobody holds may be collected)


async def train_in_thread(ex: Exercise, file: Path, lang: str, warm: WarmJudge, on_event) -> OwnTraining:
    """Train the model `file` builds, in a judge forked from `warm` (submissions.train_own_model); `on_event`
    gets the progress events in the calling thread's event loop. GradeFailed when the file cannot be read."""
    from tutor.grading.submissions import train_own_model

    loop = asyncio.get_running_loop()

    def work(cancel: threading.Event) -> OwnTraining:
        return train_own_model(
            ex,
            file,
            lang=lang,
            warm=warm,
            cancel=cancel,
            on_event=lambda e: loop.call_soon_threadsafe(on_event, e),
        )

    return await _in_thread(work)
