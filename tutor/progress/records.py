"""What the progress store hands out: one pydantic model per record type.

Timestamps are timezone-aware datetimes (stored as UTC ISO strings). JSON columns come back
parsed (dicts and lists), so callers never see the storage format.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SectionRead(Record):
    lesson: str
    section: str
    first_at: datetime
    last_at: datetime


class QuizAnswer(Record):
    """One answer to a quiz question, or to an exercise's predict question (then `exercise` is set)."""

    id: int
    lesson: str
    question: str
    exercise: str | None = None
    answer: str  # what the learner typed or picked, as text
    correct: bool | None  # None for open questions (the learner rated themselves)
    rating: int | None  # the FSRS rating this answer earned (1 again .. 4 easy); None for predictions
    used_hint: bool = False
    counted: bool = False  # True when it moved the long-term schedule (first answer of the day)
    session: str | None = None
    at: datetime


class ReviewState(Record):
    """The spaced-repetition state of one quiz question."""

    lesson: str
    question: str
    card: dict[str, Any]  # fsrs.Card.to_dict()
    due: datetime
    last_review: datetime | None
    reviews: int  # answers that counted toward the schedule
    lapses: int  # of which rated "again"


class Submission(Record):
    id: int
    exercise: str
    at: datetime
    sha256: str
    status: str  # "pass" | "fail" | "error" | "timeout", as in the grade JSON
    score: float
    max_score: float
    checks: list[dict[str, Any]]
    hints_revealed: int = 0


class HintReveal(Record):
    id: int
    exercise: str
    hint: str  # e.g. "0" for the first general hint, or a check id
    at: datetime


class ExperimentRun(Record):
    id: int
    name: str
    params: dict[str, Any]
    metrics: dict[str, Any]
    note: str | None = None
    at: datetime


class TrainingRun(Record):
    key: str
    config: dict[str, Any]
    status: str  # e.g. "running" | "done" | "cancelled" | "failed"
    final_val_loss: float | None = None
    params: int | None = None
    seconds: float | None = None
    curve: list[tuple[int, float | None, float | None]] = []  # (step, train_loss, val_loss)
    at: datetime
