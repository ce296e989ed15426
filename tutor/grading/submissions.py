"""A learner's file graded and recorded: what `python -m tutor grade`, `exercise check` and the app do
with it. The file is read once (safe_read), so the graded text is the hashed text; the grade comes from
a judge (runner); with a store, the submission is recorded (time, sha256, verdict, checks). A file
that passes can also train the model it builds (`exercise train`).

result = grade_file(ex, path, lang="de", store=Store(home), on_event=print)
run = train_own_model(ex, path, steps=100, lang="de", on_event=print)
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from tutor.content.schema import Exercise
from tutor.grading.result import GradeResult
from tutor.grading.runner import (
    JudgeSource,
    Limits,
    OnEvent,
    OwnTraining,
    error_result,
    grade_code,
    run_judge,
    training_result,
)
from tutor.grading.safe_read import read_submission
from tutor.settings import GRADE_SAVE_TRIES, TRAIN_OWN_TIMEOUT_S


def grade_source(
    ex: Exercise,
    source: bytes,
    display_name: str,
    *,
    lang: str = "en",
    store=None,
    on_event: OnEvent | None = None,
    limits: Limits | None = None,
    warm: JudgeSource | None = None,
    cancel: threading.Event | None = None,
    seed: str | None = None,
) -> GradeResult:
    """Grade bytes (already read, so the graded text is the hashed text); forked by `warm` when given;
    with `seed`, the checks draw from it (a grade replayed) instead of this process's secret one."""
    if ex.kind == "runs":
        from tutor.grading.runs import grade_runs, stored_runs

        return grade_runs(ex, source, display_name, stored_runs(store), lang=lang)
    from tutor.errors import TutorError
    from tutor.grading.safe_read import decode_source

    try:
        text = decode_source(source, display_name, lang)
    except TutorError as err:
        return error_result(ex, str(err), lang)
    return grade_code(
        ex,
        text,
        display_name,
        lang=lang,
        on_event=on_event,
        limits=limits,
        warm=warm,
        cancel=cancel,
        seed=seed,
    )


def grade_file(
    ex: Exercise,
    path: Path,
    *,
    lang: str = "en",
    store=None,
    record: bool = True,
    on_event: OnEvent | None = None,
    limits: Limits | None = None,
    warm: JudgeSource | None = None,
    cancel: threading.Event | None = None,
    seed: str | None = None,
) -> GradeResult:
    """Grade the file at `path` (with `seed`: as grade_source); with a store, record the submission (time, sha256, verdict, checks).
    A store that stays busy does not cost the verdict: `result.saved` is False and says why."""
    source = read_submission(path, lang=lang)
    result = grade_source(
        ex,
        source,
        str(path),
        lang=lang,
        store=store,
        on_event=on_event,
        limits=limits,
        warm=warm,
        cancel=cancel,
        seed=seed,
    )
    if store is not None and record:
        result.saved = save_submission(store, ex, source, result)
    return result


def train_own_model(
    ex: Exercise,
    path: Path,
    *,
    steps: int | None = None,
    lang: str = "en",
    on_event: OnEvent | None = None,
    warm: JudgeSource | None = None,
    cancel: threading.Event | None = None,
) -> OwnTraining:
    """Train the model the file at `path` builds (the exercise's `[train]`) in the grading box, beside
    the course GPT with the comparison's positions; the file is read as `grade_file` reads it. Progress
    through `on_event` ("training", "validated" events). For a file that passes the exercise's checks."""
    from tutor.grading.judging.own_model import settings

    if ex.train is None:
        raise ValueError(f"exercise {ex.id!r} has no [train] table: there is no model of yours to train")
    text = read_submission(path, lang=lang).decode("utf-8", "replace").removeprefix("\ufeff")
    run = settings(ex.train.model_dump(), steps)
    limits = Limits(timeout_s=TRAIN_OWN_TIMEOUT_S)
    per_file, stopped = run_judge(
        ex, [(text, str(path))], limits, on_event=on_event, lang=lang, warm=warm, cancel=cancel, train=run
    )
    return training_result(per_file[0], stopped, run["compare"], lang)


# what the store's check record (tutor.progress.records.GradedCheck) does not keep: the exercise's title and
# points for the check, which the course gives again whenever a recorded grade is shown
STORE_LEAVES_OUT = {"title", "max_points"}


def save_submission(store, ex: Exercise, source: bytes, result: GradeResult) -> bool:
    """Record the grade of `source` (time, sha256, verdict, checks, hints seen so far); False when
    the store stayed busy through every try (the app calls it in its writer thread)."""
    from tutor.progress.db import StoreBusy

    for _ in range(GRADE_SAVE_TRIES):
        try:
            store.record_submission(
                ex.id,
                sha256=hashlib.sha256(source).hexdigest(),
                status=result.status,
                score=result.score,
                max_score=result.max_score,
                checks=[c.model_dump(mode="json", exclude=STORE_LEAVES_OUT) for c in result.checks],
                hints_revealed=len({h.hint for h in store.hint_reveals(ex.id)}),
            )
            return True
        except StoreBusy:
            continue
    return False
