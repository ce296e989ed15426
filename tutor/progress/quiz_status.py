"""The learner's quiz standing, defined once: what is due, what is new, what counts as right.

Home, `python -m tutor progress`, `python -m tutor quiz --review`, the review screen and the end of
a sitting all ask these functions, so they cannot disagree:

- **due**: a question whose review card falls due before the end of the learner's today. The
  schedule is kept in whole days, so an item due at 20:00 is due all of that day.
- **new**: a question never answered, from a lesson the learner has started (read a section of, or
  answered a question of). New questions are not due; a review sitting asks the due ones first,
  then new ones up to the day's allowance, as Anki does: at most `new_per_day` questions seen for the
  first time a day (a setting, NEW_PER_DAY by default; `python -m tutor progress --new-per-day N`),
  those a lesson's quiz asked first today counted too; every place that counts them shows the two apart.
- **right**: a question whose first answer in the latest sitting that asked it was right (an open
  question: rated hard or better). A second try in the same sitting, after the explanation was
  shown, does not make a miss right; the next sitting can.

Predictions (an exercise's predict questions) are neither scheduled nor counted here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

from tutor.progress.db import end_of_today

# No pydantic here: home works these out from tutor.progress.glance's plain rows, so the types below
# are what the Store's records and the glance's rows both have.

NEW_PER_DAY = 10  # new questions a day, unless the learner set it (NEW_PER_DAY_KEY in the store)
NEW_PER_DAY_KEY = "settings.new_per_day"
NEW_PER_REVIEW = NEW_PER_DAY  # the name earlier callers use
Key = tuple[str, str]  # (lesson id, question id)


if TYPE_CHECKING:  # types only: their classes cost nothing at start-up (home imports this first)

    class AnswerRow(Protocol):  # records.QuizAnswer, or glance.Answer
        @property
        def lesson(self) -> str: ...
        @property
        def question(self) -> str: ...
        @property
        def session(self) -> str | None: ...
        @property
        def correct(self) -> bool | None: ...
        @property
        def rating(self) -> int | None: ...
        @property
        def at(self) -> datetime: ...

    class DueRow(Protocol):  # records.ReviewState, or glance.Due
        @property
        def lesson(self) -> str: ...
        @property
        def question(self) -> str: ...
        @property
        def due(self) -> datetime: ...

    class ReadRow(Protocol):  # records.SectionRead, or glance.Read
        @property
        def lesson(self) -> str: ...

    class QuestionRow(Protocol):
        @property
        def id(self) -> str: ...

    class LessonRow(Protocol):  # content.schema.Lesson, or glance._Lesson
        @property
        def id(self) -> str: ...
        @property
        def quiz(self) -> Sequence[QuestionRow]: ...

    class QuizRecords(Protocol):
        """What the functions here read: the Store, or home's Glance (tutor.progress.glance)."""

        def get_value(self, key: str, default: object = None) -> object: ...
        def answers(self) -> Sequence[AnswerRow]: ...
        def review_states(self) -> Sequence[DueRow]: ...
        def sections_read(self) -> Sequence[ReadRow]: ...

    A = TypeVar("A", bound=AnswerRow)


def new_per_day(store: QuizRecords) -> int:
    """The learner's daily cap on new questions (the setting, else NEW_PER_DAY)."""
    value = store.get_value(NEW_PER_DAY_KEY, NEW_PER_DAY)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else NEW_PER_DAY


def new_today(store: QuizRecords, now: datetime) -> int:
    """Questions answered for the first time today (the learner's day): what the daily cap counts."""
    first: dict[Key, datetime] = {}
    for a in store.answers():  # oldest first
        first.setdefault((a.lesson, a.question), a.at)
    start = end_of_today(now) - timedelta(days=1)
    return sum(start <= at for at in first.values())


def is_due(state: DueRow, now: datetime) -> bool:
    return state.due < end_of_today(now)


def is_miss(correct: bool | None, rating: int | None) -> bool:
    """Wrong, or an open question the learner rated "again"."""
    return correct is False or (correct is None and rating == 1)


def _known(lessons: Sequence[LessonRow]) -> list[Key]:
    return [(lesson.id, q.id) for lesson in lessons for q in lesson.quiz]


def due_keys(store: QuizRecords, lessons: Sequence[LessonRow], now: datetime) -> list[Key]:
    """The course's questions due today, earliest first (questions no longer in the course are left out)."""
    known = set(_known(lessons))
    return [
        (s.lesson, s.question)
        for s in store.review_states()
        if (s.lesson, s.question) in known and is_due(s, now)
    ]


def new_keys(store: QuizRecords, lessons: Sequence[LessonRow]) -> list[Key]:
    """Never-answered questions of the lessons the learner has started, in course order."""
    answered = {(a.lesson, a.question) for a in store.answers()}
    started = {r.lesson for r in store.sections_read()} | {lesson for lesson, _ in answered}
    return [k for k in _known(lessons) if k[0] in started and k not in answered]


class ReviewPlan(NamedTuple):
    due: list[Key]
    new: list[Key]  # at most the limit asked for


def review_plan(
    store: QuizRecords, lessons: Sequence[LessonRow], now: datetime, new_limit: int | None = None
) -> ReviewPlan:
    """What a review sitting asks: everything due, then new questions: `new_limit` of them, or by
    default what is left of the day's allowance (new_per_day less those seen first today)."""
    if new_limit is None:
        new_limit = new_per_day(store) - new_today(store, now)
    return ReviewPlan(due_keys(store, lessons, now), new_keys(store, lessons)[: max(0, new_limit)])


@dataclass(frozen=True)
class QuizCounts:
    questions: int
    answered: int  # answered at least once
    correct: int  # right (see the module docstring)
    due: int


def first_of_latest_sitting(answers: Sequence[A]) -> dict[Key, A]:
    """Per question, its first answer in the latest sitting that asked it (`answers` oldest first).
    An answer recorded without a sitting is a sitting of its own."""
    latest: dict[Key, A] = {}
    for a in answers:
        key = (a.lesson, a.question)
        seen = latest.get(key)
        if seen is None or a.session is None or a.session != seen.session:
            latest[key] = a
    return latest


def quiz_counts(store: QuizRecords, lessons: Sequence[LessonRow], now: datetime) -> dict[str, QuizCounts]:
    """Per lesson id: its questions, how many were answered, right, and due today."""
    first = first_of_latest_sitting(store.answers())
    due = set(due_keys(store, lessons, now))
    counts = {}
    for lesson in lessons:
        keys = [(lesson.id, q.id) for q in lesson.quiz]
        counts[lesson.id] = QuizCounts(
            questions=len(keys),
            answered=sum(k in first for k in keys),
            correct=sum(k in first and not is_miss(first[k].correct, first[k].rating) for k in keys),
            due=sum(k in due for k in keys),
        )
    return counts
