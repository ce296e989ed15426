"""The learner's progress: one SQLite file in the tutor home, one transaction per write.

    store = Store(home)                       # opens or creates home/progress.sqlite3
    store.mark_read("01-multi-head", "split-heads")
    store.record_submission("rope", sha256=..., status="pass", score=3, max_score=3, checks=[...])
    store.record_training_run("heads4-rope", config={...}, status="done", final_val_loss=1.9, curve=[...])
    store.set_last_location({"lesson": "01-multi-head", "section": "split-heads"})

Every method takes its time from the injectable `now` clock unless given `at=`.
`store.notices` holds messages to show the learner (e.g. "the old file was corrupt and moved aside").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from tutor.progress.db import Database, from_text, local_now, to_text
from tutor.progress.records import (
    ExperimentRun,
    HintReveal,
    QuizAnswer,
    ReviewState,
    SectionRead,
    Submission,
    TrainingRun,
)

LAST_LOCATION = "last_location"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class Store:
    def __init__(self, home: Path, *, now: Callable[[], datetime] = local_now, timeout_s: float = 5.0):
        self.db = Database(home, now=now, timeout_s=timeout_s)
        self.now = now

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def notices(self) -> list[str]:
        return self.db.notices

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _at(self, at: datetime | None) -> str:
        return to_text(at or self.now())

    # --- sections read -------------------------------------------------------------------

    def mark_read(self, lesson: str, section: str, *, at: datetime | None = None) -> SectionRead:
        """Note that a section was read (the first time is kept, and the latest)."""
        stamp = self._at(at)
        with self.db.write() as c:
            c.execute(
                "INSERT INTO section_reads VALUES (?, ?, ?, ?) "
                "ON CONFLICT (lesson, section) DO UPDATE SET last_at = excluded.last_at",
                (lesson, section, stamp, stamp),
            )
        return self.sections_read(lesson, section)[0]

    def sections_read(self, lesson: str | None = None, section: str | None = None) -> list[SectionRead]:
        rows = self.db.read(
            "SELECT * FROM section_reads WHERE (:l IS NULL OR lesson = :l) AND (:s IS NULL OR section = :s) "
            "ORDER BY lesson, first_at",
            {"l": lesson, "s": section},
        )
        return [SectionRead(**dict(r)) for r in rows]

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
                row = c.execute(
                    "SELECT * FROM review_cards WHERE lesson = ? AND question = ?", (lesson, question)
                ).fetchone()
                card = schedule(_review(row) if row else None)
            cur = c.execute(
                "INSERT INTO quiz_answers (lesson, question, exercise, answer, correct, rating, used_hint,"
                " counted, session, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    lesson,
                    question,
                    exercise,
                    answer,
                    correct,
                    rating,
                    used_hint,
                    card is not None,
                    session,
                    stamp,
                ),
            )
            if card is not None:
                lapse = int(rating == 1)
                c.execute(
                    "INSERT INTO review_cards VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT (lesson, question) DO UPDATE"
                    " SET card = excluded.card, due = excluded.due, last_review = excluded.last_review,"
                    " reviews = reviews + 1, lapses = lapses + excluded.lapses",
                    (lesson, question, _json(card), _card_time(card["due"]), stamp, lapse),
                )
            row_id = cur.lastrowid
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
            "SELECT * FROM quiz_answers WHERE (:id IS NULL OR id = :id) AND (:l IS NULL OR lesson = :l)"
            " AND (:q IS NULL OR question = :q) AND (:e IS NULL OR exercise = :e)"
            " AND (:id IS NOT NULL OR (exercise IS NOT NULL) = :p) ORDER BY at, id",
            {"id": answer_id, "l": lesson, "q": question, "e": exercise, "p": predictions},
        )
        return [_answer(r) for r in rows]

    def review_state(self, lesson: str, question: str) -> ReviewState | None:
        rows = self.db.read(
            "SELECT * FROM review_cards WHERE lesson = ? AND question = ?", (lesson, question)
        )
        return _review(rows[0]) if rows else None

    def review_states(self, lesson: str | None = None) -> list[ReviewState]:
        rows = self.db.read(
            "SELECT * FROM review_cards WHERE (:l IS NULL OR lesson = :l) ORDER BY due, lesson, question",
            {"l": lesson},
        )
        return [_review(r) for r in rows]

    def due_reviews(self, before: datetime) -> list[ReviewState]:
        """Review states due before `before` (e.g. the end of today), earliest first."""
        rows = self.db.read(
            "SELECT * FROM review_cards WHERE due < ? ORDER BY due, lesson, question", (to_text(before),)
        )
        return [_review(r) for r in rows]

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
    ) -> Submission:
        """One graded attempt; `checks` as in the grade JSON (name, status, message, hint, points)."""
        with self.db.write() as c:
            cur = c.execute(
                "INSERT INTO submissions (exercise, at, sha256, status, score, max_score, checks, hints_revealed)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    exercise,
                    self._at(at),
                    sha256,
                    status,
                    score,
                    max_score,
                    _json(list(checks)),
                    hints_revealed,
                ),
            )
            row_id = cur.lastrowid
        return _submission(self.db.read("SELECT * FROM submissions WHERE id = ?", (row_id,))[0])

    def submissions(self, exercise: str | None = None) -> list[Submission]:
        """Graded attempts, oldest first."""
        rows = self.db.read(
            "SELECT * FROM submissions WHERE (:e IS NULL OR exercise = :e) ORDER BY at, id", {"e": exercise}
        )
        return [_submission(r) for r in rows]

    def passed_exercises(self) -> set[str]:
        return {
            r["exercise"]
            for r in self.db.read("SELECT DISTINCT exercise FROM submissions WHERE status = 'pass'")
        }

    def record_hint(self, exercise: str, hint: str, *, at: datetime | None = None) -> HintReveal:
        """A hint was revealed (`hint`: "0", "1", ... for general hints, or a check id)."""
        with self.db.write() as c:
            cur = c.execute(
                "INSERT INTO hint_reveals (exercise, hint, at) VALUES (?, ?, ?)",
                (exercise, hint, self._at(at)),
            )
            row_id = cur.lastrowid
        return HintReveal(**dict(self.db.read("SELECT * FROM hint_reveals WHERE id = ?", (row_id,))[0]))

    def hint_reveals(self, exercise: str | None = None) -> list[HintReveal]:
        rows = self.db.read(
            "SELECT * FROM hint_reveals WHERE (:e IS NULL OR exercise = :e) ORDER BY at, id", {"e": exercise}
        )
        return [HintReveal(**dict(r)) for r in rows]

    # --- experiments and training runs ---------------------------------------------------

    def record_experiment_run(
        self,
        name: str,
        params: dict[str, Any],
        metrics: dict[str, Any],
        *,
        note: str | None = None,
        at: datetime | None = None,
    ) -> ExperimentRun:
        """Keep one experiment result (the learner asked to keep it, or an exercise needs it)."""
        with self.db.write() as c:
            cur = c.execute(
                "INSERT INTO experiment_runs (name, params, metrics, note, at) VALUES (?, ?, ?, ?, ?)",
                (name, _json(params), _json(metrics), note, self._at(at)),
            )
            row_id = cur.lastrowid
        return _experiment(self.db.read("SELECT * FROM experiment_runs WHERE id = ?", (row_id,))[0])

    def experiment_runs(self, name: str | None = None) -> list[ExperimentRun]:
        rows = self.db.read(
            "SELECT * FROM experiment_runs WHERE (:n IS NULL OR name = :n) ORDER BY at, id", {"n": name}
        )
        return [_experiment(r) for r in rows]

    def record_training_run(
        self,
        key: str,
        *,
        config: dict[str, Any],
        status: str,
        final_val_loss: float | None = None,
        params: int | None = None,
        seconds: float | None = None,
        curve: Iterable[Sequence[float | None]] = (),
        at: datetime | None = None,
    ) -> TrainingRun:
        """Insert or replace the run under `key` (call again as it progresses: "running" -> "done")."""
        points = [[int(p[0]), _num(p[1]), _num(p[2])] for p in curve]
        with self.db.write() as c:
            c.execute(
                "INSERT OR REPLACE INTO training_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, _json(config), status, final_val_loss, params, seconds, _json(points), self._at(at)),
            )
        return self.training_run(key)  # type: ignore[return-value]

    def training_run(self, key: str) -> TrainingRun | None:
        rows = self.db.read("SELECT * FROM training_runs WHERE key = ?", (key,))
        return _training(rows[0]) if rows else None

    def training_runs(self, status: str | None = None) -> list[TrainingRun]:
        rows = self.db.read(
            "SELECT * FROM training_runs WHERE (:s IS NULL OR status = :s) ORDER BY at, key", {"s": status}
        )
        return [_training(r) for r in rows]

    # --- small values --------------------------------------------------------------------

    def set_value(self, key: str, value: Any, *, at: datetime | None = None) -> None:
        with self.db.write() as c:
            c.execute("INSERT OR REPLACE INTO kv VALUES (?, ?, ?)", (key, _json(value), self._at(at)))

    def get_value(self, key: str, default: Any = None) -> Any:
        rows = self.db.read("SELECT value FROM kv WHERE key = ?", (key,))
        return json.loads(rows[0]["value"]) if rows else default

    def set_last_location(self, location: dict[str, Any]) -> None:
        """Where the learner was (e.g. {"screen": "lesson", "lesson": ..., "section": ...}), to continue there."""
        self.set_value(LAST_LOCATION, location)

    def last_location(self) -> dict[str, Any] | None:
        return self.get_value(LAST_LOCATION)


# --- rows -> records ---------------------------------------------------------------------


def _num(x: float | None) -> float | None:
    return None if x is None else float(x)


def _card_time(text: str) -> str:
    return to_text(datetime.fromisoformat(text))


def _answer(r: sqlite3.Row) -> QuizAnswer:
    d = dict(r)
    d["correct"] = None if d["correct"] is None else bool(d["correct"])
    d["used_hint"], d["counted"] = bool(d["used_hint"]), bool(d["counted"])
    return QuizAnswer(**d)


def _review(r: sqlite3.Row) -> ReviewState:
    d = dict(r)
    d["card"] = json.loads(d["card"])
    d["last_review"] = from_text(d["last_review"])
    return ReviewState(**d)


def _submission(r: sqlite3.Row) -> Submission:
    d = dict(r)
    d["checks"] = json.loads(d["checks"])
    return Submission(**d)


def _experiment(r: sqlite3.Row) -> ExperimentRun:
    d = dict(r)
    d["params"], d["metrics"] = json.loads(d["params"]), json.loads(d["metrics"])
    return ExperimentRun(**d)


def _training(r: sqlite3.Row) -> TrainingRun:
    d = dict(r)
    d["config"] = json.loads(d["config"])
    d["curve"] = [tuple(p) for p in json.loads(d["curve"])]
    return TrainingRun(**d)
