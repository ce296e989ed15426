"""The learner's progress: one SQLite file in the tutor home, one transaction per write.

    store = Store(home)                       # opens or creates home/progress.sqlite3
    store.mark_read("01-multi-head", "split-heads")
    store.record_submission("rope", sha256=..., status="pass", score=3, max_score=3, checks=[...])
    store.record_training_run("heads4-rope", config={...}, status="done", final_val_loss=1.9, curve=[...])
    store.set_last_location({"lesson": "01-multi-head", "section": "split-heads"})

Every method takes its time from the injectable `now` clock unless given `at=`.
`store.notices` holds messages to show the learner (e.g. "the old file was corrupt and moved aside"),
worded by `notice.in_lang(lang)`.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from tutor.errors import TutorError
from tutor.progress.db import Database, local_now, to_text
from tutor.progress.records import (
    ExperimentRun,
    GradedSubmission,
    GradedSubmissionRow,
    HintReveal,
    HintRevealRow,
    KvEntry,
    QuizAnswer,
    QuizAnswerRow,
    Record,
    ReviewState,
    SectionRead,
    TrainingRun,
    problems,
    short,
)
from tutor.progress.schema import (
    EXPERIMENT_RUNS,
    HINT_REVEALS,
    KV,
    LAST_LOCATION,
    QUIZ_ANSWERS,
    REVIEW_CARDS,
    SECTION_READS,
    SUBMISSIONS,
    TRAINING_RUNS,
    Table,
)
from tutor.settings import STORE_BUSY_TIMEOUT_S
from tutor.texts import Said

R = TypeVar("R", bound=Record)


class StoreDamaged(TutorError):
    """A row in the file does not read as a valid record (written by an older tutor, or by hand)."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class Store:
    def __init__(
        self, home: Path, *, now: Callable[[], datetime] = local_now, timeout_s: float = STORE_BUSY_TIMEOUT_S
    ):
        self.db = Database(home, now=now, timeout_s=timeout_s)
        self.now = now

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def notices(self) -> list[Said]:
        return self.db.notices

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _at(self, at: datetime | None) -> str:
        return to_text(at or self.now())

    def _by_id(self, model: type[R], table: Table, row_id: int | None) -> R:
        (row,) = self.db.read(f"SELECT * FROM {table} WHERE id = ?", (row_id,))
        return _record(model, table, dict(row))

    # --- sections read -------------------------------------------------------------------

    def mark_read(self, lesson: str, section: str, *, at: datetime | None = None) -> SectionRead:
        """Note that a section was read (the first time is kept, and the latest)."""
        stamp = self._at(at)
        row = _checked(SectionRead, lesson=lesson, section=section, first_at=stamp, last_at=stamp)
        with self.db.write() as c:
            _insert(
                c,
                SECTION_READS,
                row,
                tail=" ON CONFLICT (lesson, section) DO UPDATE SET last_at = excluded.last_at, imported = 0",
            )
        return self.sections_read(lesson, section)[0]

    def sections_read(self, lesson: str | None = None, section: str | None = None) -> list[SectionRead]:
        rows = self.db.read(
            f"SELECT * FROM {SECTION_READS} WHERE (:l IS NULL OR lesson = :l) AND (:s IS NULL OR section = :s) "
            "ORDER BY lesson, first_at",
            {"l": lesson, "s": section},
        )
        return _records(SectionRead, SECTION_READS, rows)

    # --- quiz answers and review state ---------------------------------------------------

    def record_answer(
        self,
        lesson: str,
        question: str,
        answer: str,
        correct: bool | None,
        *,
        rating: int | None = None,
        used_hint: bool = False,
        exercise: str | None = None,
        session: str | None = None,
        card: dict[str, Any] | None = None,
        schedule: Callable[[ReviewState | None], dict[str, Any] | None] | None = None,
        at: datetime | None = None,
    ) -> QuizAnswer:
        """Store one answer, and with it (same transaction) the item's new review state, if any.

        `card`: the fsrs card after this review. Or `schedule`: called inside the transaction with the
        item's current review state, returns the new card or None (so the decision "does this answer
        count today?" cannot race with another process answering the same item).
        An answer that updated the review state is marked `counted`."""
        stamp = self._at(at)
        with self.db.write() as c:
            if schedule is not None:
                card = schedule(_review_state(c, lesson, question))
            answered = _checked(
                QuizAnswerRow,
                lesson=lesson,
                question=question,
                exercise=exercise,
                answer=answer,
                correct=correct,
                rating=rating,
                used_hint=used_hint,
                counted=card is not None,
                session=session,
                at=stamp,
            )
            row_id = _insert(c, QUIZ_ANSWERS, answered).lastrowid
            if card is not None:
                _save_review(c, lesson, question, card, lapsed=rating == 1, at=stamp)
        return self.answers(answer_id=row_id)[0]

    def answers(
        self,
        lesson: str | None = None,
        question: str | None = None,
        *,
        exercise: str | None = None,
        predictions: bool = False,
        answer_id: int | None = None,
    ) -> list[QuizAnswer]:
        """Answers, oldest first. Quiz answers by default; `predictions=True` for exercise predictions."""
        rows = self.db.read(
            f"SELECT * FROM {QUIZ_ANSWERS} WHERE (:id IS NULL OR id = :id) AND (:l IS NULL OR lesson = :l)"
            " AND (:q IS NULL OR question = :q) AND (:e IS NULL OR exercise = :e)"
            " AND (:id IS NOT NULL OR (exercise IS NOT NULL) = :p) ORDER BY at, id",
            {"id": answer_id, "l": lesson, "q": question, "e": exercise, "p": predictions},
        )
        return _records(QuizAnswer, QUIZ_ANSWERS, rows)

    def review_state(self, lesson: str, question: str) -> ReviewState | None:
        rows = self.db.read(
            f"SELECT * FROM {REVIEW_CARDS} WHERE lesson = ? AND question = ?", (lesson, question)
        )
        return _record(ReviewState, REVIEW_CARDS, dict(rows[0])) if rows else None

    def review_states(self, lesson: str | None = None) -> list[ReviewState]:
        rows = self.db.read(
            f"SELECT * FROM {REVIEW_CARDS} WHERE (:l IS NULL OR lesson = :l) ORDER BY due, lesson, question",
            {"l": lesson},
        )
        return _records(ReviewState, REVIEW_CARDS, rows)

    # --- exercises -----------------------------------------------------------------------

    def record_submission(
        self,
        exercise: str,
        *,
        sha256: str,
        status: str,
        score: float,
        max_score: float,
        checks: Sequence[dict[str, Any]] = (),
        hints_revealed: int = 0,
        at: datetime | None = None,
    ) -> GradedSubmission:
        """One graded attempt; `checks` as in the grade JSON (name, status, message, hint, points)."""
        row = _checked(
            GradedSubmissionRow,
            exercise=exercise,
            at=self._at(at),
            sha256=sha256,
            status=status,
            score=score,
            max_score=max_score,
            checks=_json(list(checks)),
            hints_revealed=hints_revealed,
        )
        return self._add(GradedSubmission, SUBMISSIONS, row)

    def submissions(self, exercise: str | None = None) -> list[GradedSubmission]:
        """Graded attempts, oldest first."""
        return self._of_exercise(GradedSubmission, SUBMISSIONS, exercise)

    def passed_exercises(self, *, imported: bool = True) -> set[str]:
        """Exercises with a recorded pass; `imported=False` leaves out passes that came from an import."""
        rows = self.db.read(
            f"SELECT DISTINCT exercise FROM {SUBMISSIONS} WHERE status = 'pass' AND (:i OR NOT imported)",
            {"i": imported},
        )
        return {r["exercise"] for r in rows}

    def record_hint(self, exercise: str, hint: str, *, at: datetime | None = None) -> HintReveal:
        """A hint was revealed (`hint`: "0", "1", ... for general hints, or a check id)."""
        row = _checked(HintRevealRow, exercise=exercise, hint=hint, at=self._at(at))
        return self._add(HintReveal, HINT_REVEALS, row)

    def hint_reveals(self, exercise: str | None = None) -> list[HintReveal]:
        return self._of_exercise(HintReveal, HINT_REVEALS, exercise)

    def _add(self, model: type[R], table: Table, row) -> R:
        """Insert one row of an exercise table and read it back as `model`."""
        with self.db.write() as c:
            row_id = _insert(c, table, row).lastrowid
        return self._by_id(model, table, row_id)

    def _of_exercise(self, model: type[R], table: Table, exercise: str | None) -> list[R]:
        """The rows of an exercise table (of one exercise, or all), oldest first."""
        rows = self.db.read(
            f"SELECT * FROM {table} WHERE (:e IS NULL OR exercise = :e) ORDER BY at, id", {"e": exercise}
        )
        return _records(model, table, rows)

    # --- experiment runs (they arrive by import only) and training runs ------------------

    def experiment_runs(self, name: str | None = None) -> list[ExperimentRun]:
        rows = self.db.read(
            f"SELECT * FROM {EXPERIMENT_RUNS} WHERE (:n IS NULL OR name = :n) ORDER BY at, id", {"n": name}
        )
        return _records(ExperimentRun, EXPERIMENT_RUNS, rows)

    def record_training_run(
        self,
        key: str,
        *,
        config: dict[str, Any],
        status: str,
        final_val_loss: float | None = None,
        params: int | None = None,
        seconds: float | None = None,
        curve: Iterable[Sequence[Any]] = (),  # [step, loss, val_loss]: an int and two floats or None
        at: datetime | None = None,
    ) -> TrainingRun:
        """Insert or replace the run under `key` (call again as it progresses: "running" -> "done").

        A loss or time that is not a finite number (a diverged run) is stored as no value."""
        row = _checked(
            TrainingRun,
            key=key,
            config=_json(config),
            status=status,
            final_val_loss=_num(final_val_loss),
            params=params,
            seconds=_num(seconds),
            curve=_json([[int(p[0]), _num(p[1]), _num(p[2])] for p in curve]),
            at=self._at(at),
        )
        with self.db.write() as c:
            _insert(c, TRAINING_RUNS, row, verb="INSERT OR REPLACE")
        run = self.training_run(key)
        assert run is not None  # written just now
        return run

    def training_run(self, key: str) -> TrainingRun | None:
        rows = self.db.read(f"SELECT * FROM {TRAINING_RUNS} WHERE key = ?", (key,))
        return _record(TrainingRun, TRAINING_RUNS, dict(rows[0])) if rows else None

    def training_runs(self, status: str | None = None) -> list[TrainingRun]:
        rows = self.db.read(
            f"SELECT * FROM {TRAINING_RUNS} WHERE (:s IS NULL OR status = :s) ORDER BY at, key", {"s": status}
        )
        return _records(TrainingRun, TRAINING_RUNS, rows)

    # --- small values --------------------------------------------------------------------

    def set_value(self, key: str, value: Any, *, at: datetime | None = None) -> None:
        row = _checked(KvEntry, key=key, value=_json(value), at=self._at(at))
        with self.db.write() as c:
            _insert(c, KV, row, verb="INSERT OR REPLACE")

    def value_entry(self, key: str) -> KvEntry | None:
        """The value under `key` with its time and imported mark, or None."""
        rows = self.db.read(f"SELECT * FROM {KV} WHERE key = ?", (key,))
        return _record(KvEntry, KV, dict(rows[0])) if rows else None

    def get_value(self, key: str, default: Any = None) -> Any:
        entry = self.value_entry(key)
        return entry.value if entry else default

    def set_last_location(self, location: dict[str, Any]) -> None:
        """Where the learner was (e.g. {"screen": "lesson", "lesson": ..., "section": ...}), to continue there."""
        self.set_value(LAST_LOCATION, location)

    def last_location(self) -> dict[str, Any] | None:
        return self.get_value(LAST_LOCATION)


# --- records <-> rows -------------------------------------------------------------------


def _checked(model: type[Record], **row: Any) -> dict[str, Any]:
    """`row` as it will be stored, once it reads back as `model`: the store never writes what it cannot read."""
    try:
        model.model_validate(row)
    except ValidationError as err:
        raise ValueError(
            f"cannot store this {model.__name__}: {'; '.join(map(str, problems(err)))}"
        ) from None
    return row


def _insert(
    c: sqlite3.Connection, table: Table, row: dict[str, Any], *, verb: str = "INSERT", tail: str = ""
) -> sqlite3.Cursor:
    sql = f"{verb} INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))}){tail}"
    return c.execute(sql, tuple(row.values()))


def _review_state(c: sqlite3.Connection, lesson: str, question: str) -> ReviewState | None:
    """The item's review state as the transaction `c` sees it."""
    row = c.execute(
        f"SELECT * FROM {REVIEW_CARDS} WHERE lesson = ? AND question = ?", (lesson, question)
    ).fetchone()
    return _record(ReviewState, REVIEW_CARDS, dict(row)) if row else None


def _save_review(
    c: sqlite3.Connection, lesson: str, question: str, card: dict[str, Any], *, lapsed: bool, at: str
) -> None:
    """The item's review state after one more review: `card` (fsrs's), one more review and lapse."""
    state = _checked(
        ReviewState,
        lesson=lesson,
        question=question,
        card=_json(card),
        due=_card_time(card["due"]),
        last_review=at,
        reviews=1,
        lapses=int(lapsed),
    )
    _insert(
        c,
        REVIEW_CARDS,
        state,
        tail=" ON CONFLICT (lesson, question) DO UPDATE SET card = excluded.card, due = excluded.due,"
        " last_review = excluded.last_review, reviews = reviews + 1,"
        " lapses = lapses + excluded.lapses, imported = 0",
    )


def _records(model: type[R], table: Table, rows: Iterable[sqlite3.Row]) -> list[R]:
    return [_record(model, table, dict(r)) for r in rows]


def _record(model: type[R], table: Table, row: dict[str, Any]) -> R:
    try:
        return model.model_validate(row)
    except ValidationError as err:
        where = (
            f"id {row['id']}"
            if "id" in row
            else ", ".join(f"{k} {short(v)}" for k, v in list(row.items())[:2])
        )
        raise StoreDamaged(
            "err.store.bad_row", table=str(table), where=where, problems=problems(err)
        ) from None


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _card_time(text: str) -> str:
    return to_text(datetime.fromisoformat(text))
