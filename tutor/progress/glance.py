"""What home shows of the learner's progress, and the one next step, read in a few milliseconds.

Home draws its progress columns, its review line and its next step in the very first frame, before
the course (pydantic, Markdown) and the store (pydantic records, migrations) are open. So this reads
the progress file directly, read-only, with the standard library and the store's names
(tutor.progress.schema, the store's own), into plain rows with the fields
tutor.progress.quiz_status reads; "due", "new" and "right" are then worked out by quiz_status itself,
as for `python -m tutor progress` and the review screen. The lessons are home's cards
(tutor.content.index), saved by the last start or made from the loaded course.

    glance = read_glance(home)            # None: the file is not a store this tutor can read
    rows = lesson_rows(glance, cards, now)
    step = next_step(glance, cards, now)

The next step, in this order (the first that applies):
1. review: questions due today (a review is short, and spacing only works on its day);
2. training: a training run going in the app, in the lesson whose panel started it (its result is what
   that lesson goes on with);
3. exercise: a code exercise of the lesson the learner is in, not passed yet, that they started or
   whose section they read;
4. quiz: a lesson read to its end whose quiz has questions never answered;
5. read: the first unread section: in the lesson the learner was in, from where they were;
   else in course order;
6. exercise: any other exercise not passed yet that the learner started or whose section they read,
   in course order: one of another lesson, or one graded from training runs that take minutes
   (head-count), which never holds the reading and the quizzes back while they wait;
7. new: questions never answered in lessons the learner started (a review asks them);
8. done: nothing left for now.

So the step moves on with the learner: an exercise left unpassed is suggested again where it belongs (in
its lesson, or once nothing else waits), never in front of everything else for the rest of the course.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from tutor.progress.migrations import SCHEMA_VERSION
from tutor.progress.quiz_status import quiz_counts, review_plan
from tutor.progress.schema import APPLICATION_ID, FILE_NAME, LAST_LOCATION, SETTINGS
from tutor.progress.schema import KV as K
from tutor.progress.schema import QUIZ_ANSWERS as A
from tutor.progress.schema import REVIEW_CARDS as C
from tutor.progress.schema import SECTION_READS as S
from tutor.progress.schema import SUBMISSIONS as G
from tutor.texts import say

if TYPE_CHECKING:
    from tutor.content.index import Card


class Answer(NamedTuple):  # the fields of records.QuizAnswer that tutor.progress.quiz_status reads
    lesson: str
    question: str
    session: str | None
    correct: bool | None
    rating: int | None
    at: datetime


class Due(NamedTuple):  # of records.ReviewState
    lesson: str
    question: str
    due: datetime


class Read(NamedTuple):  # of records.SectionRead
    lesson: str
    section: str


class Glance(NamedTuple):
    """The rows home needs, read at one moment. Its methods are the Store's that quiz_status calls,
    so the same functions count for both. (NamedTuples, not dataclasses, here: this module
    is imported before the first frame, and a dataclass costs a millisecond to define.)"""

    answers_: tuple[Answer, ...] = ()  # quiz answers (not predictions), oldest first
    due_: tuple[Due, ...] = ()  # review cards, earliest due first
    reads: tuple[Read, ...] = ()
    attempted: frozenset[str] = frozenset()  # exercises graded at least once
    passed: frozenset[str] = frozenset()
    location: tuple[tuple[str, str], ...] = ()  # "continue where I left off", as (key, value) pairs
    settings: tuple[tuple[str, object], ...] = ()  # the learner's settings (kv rows "settings.*")

    def get_value(self, key: str, default: object = None) -> object:
        return dict(self.settings).get(key, default)

    def answers(self) -> tuple[Answer, ...]:
        return self.answers_

    def review_states(self) -> tuple[Due, ...]:
        return self.due_

    def sections_read(self) -> tuple[Read, ...]:
        return self.reads


def open_read_only(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to the store file `path` (its name as given: a link is not resolved), or
    None when it is not this tutor's store of this version, or stayed busy past a second."""
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        app_id, version = conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id),"
            " (SELECT user_version FROM pragma_user_version)"
        ).fetchone()
    except sqlite3.Error:
        app_id = version = None
    if app_id != APPLICATION_ID or version != SCHEMA_VERSION:
        conn.close()
        return None
    return conn


def read_glance(home: Path) -> Glance | None:
    """The progress in `home`, read-only; an empty Glance when there is no progress file yet; None
    when the file cannot be read as this tutor's store (the store itself says why when it opens)."""
    path = Path(home) / FILE_NAME
    if not path.exists() or path.stat().st_size == 0:
        return Glance()
    if (conn := open_read_only(path)) is None:
        return None
    try:
        rows = conn.execute(
            f"SELECT {A.lesson}, {A.question}, {A.session}, {A.correct}, {A.rating}, {A.at} FROM {A}"
            f" WHERE {A.exercise} IS NULL ORDER BY {A.at}, {A.id}"
        ).fetchall()
        answers = [  # at, due: NOT NULL columns
            Answer(lesson, q, s, None if c is None else bool(c), r, datetime.fromisoformat(at))
            for lesson, q, s, c, r, at in rows
        ]
        due = [
            Due(lesson, q, datetime.fromisoformat(d))
            for lesson, q, d in conn.execute(
                f"SELECT {C.lesson}, {C.question}, {C.due} FROM {C} ORDER BY {C.due}, {C.lesson}, {C.question}"
            )
        ]
        reads = [
            Read(*r) for r in conn.execute(f"SELECT {S.lesson}, {S.section} FROM {S} ORDER BY {S.lesson}")
        ]
        graded = conn.execute(f"SELECT {G.exercise}, max({G.status} = 'pass') FROM {G} GROUP BY {G.exercise}")
        attempted, passed = set(), set()
        for exercise, ok in graded:
            attempted.add(exercise)
            if ok:
                passed.add(exercise)
        kv = conn.execute(f"SELECT {K.value} FROM {K} WHERE {K.key} = ?", (LAST_LOCATION,)).fetchone()
        location = json.loads(kv[0]) if kv else {}
        settings = tuple(
            (key, json.loads(value))
            for key, value in conn.execute(
                f"SELECT {K.key}, {K.value} FROM {K} WHERE {K.key} LIKE ?", (SETTINGS + "%",)
            )
        )
    except (sqlite3.Error, ValueError, TypeError):
        return None  # busy past the timeout, or rows this tutor would not read either
    finally:
        conn.close()
    if not isinstance(location, dict):
        location = {}
    return Glance(
        tuple(answers),
        tuple(due),
        tuple(reads),
        frozenset(attempted),
        frozenset(passed),
        tuple((str(k), str(v)) for k, v in location.items()),
        settings,
    )


# --- the lessons as tutor.progress.quiz_status reads them ---------------------------------------------


class _Question(NamedTuple):
    id: str


class _Lesson(NamedTuple):
    id: str
    quiz: list[_Question]


def _lessons(cards: Sequence[Card]) -> list[_Lesson]:
    return [_Lesson(c.id, [_Question(q) for q in c.questions]) for c in cards]


# --- home's table ----------------------------------------------------------------------------


class LessonRow(NamedTuple):
    id: str
    sections_read: int
    sections_total: int
    questions: int
    correct: int
    due: int
    exercises_passed: int
    exercises_total: int


class Standing(NamedTuple):
    """Home's progress columns, its review line's counts and its next step."""

    rows: list[LessonRow]
    due: int  # questions due today (a review asks them first)
    new: int  # never-answered questions a review would ask next (what is left of the day's allowance)
    step: Step


def standing(
    glance: Glance, cards: Sequence[Card], now: datetime, training: tuple[str, str] | None = None
) -> Standing:
    lessons = _lessons(cards)
    counts = quiz_counts(glance, lessons, now)
    read = {(r.lesson, r.section) for r in glance.reads}
    rows = [
        LessonRow(
            id=c.id,
            sections_read=sum((c.id, s.id) in read for s in c.sections),
            sections_total=len(c.sections),
            questions=counts[c.id].questions,
            correct=counts[c.id].correct,
            due=counts[c.id].due,
            exercises_passed=sum(e.id in glance.passed for e in c.exercises),
            exercises_total=len(c.exercises),
        )
        for c in cards
    ]
    plan = review_plan(glance, lessons, now)
    return Standing(rows, len(plan.due), len(plan.new), next_step(glance, cards, now, training))


# --- the next step ---------------------------------------------------------------------------


class Step(NamedTuple):
    """What to do next: `kind` (see the module docstring) and what it is about."""

    kind: Literal["review", "training", "exercise", "quiz", "read", "new", "done"]
    lesson: str | None = None
    section: str | None = None
    exercise: str | None = None
    experiment: str | None = None  # the one training (training)
    count: int = 0  # type: ignore[assignment]  # questions (review, new); shadows tuple.count, as it always has


def next_step(
    glance: Glance, cards: Sequence[Card], now: datetime, training: tuple[str, str] | None = None
) -> Step:
    """The one most useful thing to do now. `training`: (lesson, experiment) of a run going now."""
    lessons = _lessons(cards)
    plan = review_plan(glance, lessons, now)
    if plan.due:
        return Step("review", count=len(plan.due))
    if training is not None and any(c.id == training[0] for c in cards):
        return Step("training", lesson=training[0], experiment=training[1])
    read = {(r.lesson, r.section) for r in glance.reads}
    where = dict(glance.location)
    waiting = [  # exercises not passed that the learner started or whose section they read
        (card, ex)
        for card in cards
        for ex in card.exercises
        if ex.id not in glance.passed
        and (ex.id in glance.attempted or (ex.section is not None and (card.id, ex.section) in read))
    ]
    here = next(((c, ex) for c, ex in waiting if c.id == where.get("lesson") and ex.kind == "code"), None)
    if here is not None:
        return Step("exercise", lesson=here[0].id, section=here[1].section, exercise=here[1].id)
    answered = {(a.lesson, a.question) for a in glance.answers_}
    for card in cards:
        finished = card.sections and all((card.id, s.id) in read for s in card.sections)
        if finished and any((card.id, q) not in answered for q in card.questions):
            return Step("quiz", lesson=card.id)
    if (unread := _unread(cards, read, where)) is not None:
        return Step("read", lesson=unread[0], section=unread[1])
    if waiting:
        card, ex = waiting[0]
        return Step("exercise", lesson=card.id, section=ex.section, exercise=ex.id)
    if plan.new:
        return Step("new", lesson=plan.new[0][0], count=len(plan.new))
    return Step("done")


def _unread(
    cards: Sequence[Card], read: set[tuple[str, str]], where: dict[str, str]
) -> tuple[str, str] | None:
    """The first unread section: in the lesson the learner was in, from the section they were at
    (then the ones before it); else the first in course order."""
    here = next((c for c in cards if c.id == where.get("lesson")), None)
    if here is not None:
        ids = [s.id for s in here.sections]
        start = ids.index(where["section"]) if where.get("section") in ids else 0
        for sid in ids[start:] + ids[:start]:
            if (here.id, sid) not in read:
                return here.id, sid
    for card in cards:
        for s in card.sections:
            if (card.id, s.id) not in read:
                return card.id, s.id
    return None


def step_text(step: Step, cards: Sequence[Card], lang: str) -> str:
    """The step in the learner's words, with the key that does it (n: tutor.ui's next-step key)."""
    card = next((c for c in cards if c.id == step.lesson), None)
    lesson = _pick(card.title, lang) if card else ""
    if step.kind in ("review", "new"):
        return say(f"next.{step.kind}", lang, n=step.count, lesson=lesson)
    if step.kind == "training":
        return say("next.training", lang, title=say(f"exp.{step.experiment}.title", lang), lesson=lesson)
    if step.kind == "exercise":
        part = next((e for e in card.exercises if e.id == step.exercise), None) if card else None
        return say(
            "next.exercise", lang, title=_pick(part.title, lang) if part else step.exercise, lesson=lesson
        )
    if step.kind == "read":
        part = next((s for s in card.sections if s.id == step.section), None) if card else None
        return say(
            "next.read", lang, section=_pick(part.title, lang) if part else step.section, lesson=lesson
        )
    if step.kind == "quiz":
        return say("next.quiz", lang, lesson=lesson)
    return say("next.done", lang)


def _pick(text: dict[str, str], lang: str) -> str:
    return text.get(lang) or text.get("en", "")
