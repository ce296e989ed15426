"""A quiz sitting: which question comes next, checking, feedback, scheduling, recording.

Pure logic over the content models and the progress store, driven the same way by the headless
CLI and the Textual app:

    session = QuizSession.for_lesson(store, lesson, lang="en")    # or .for_review(store, lessons)
    while (item := session.next_question()) is not None:
        ...show item.question...
        feedback = session.answer(text_or_choice_ids_or_rating, used_hint=False)
        ...show feedback...
    score = session.score()

Modes:
- "lesson": the lesson's questions straight through; the score counts first attempts; missed
  questions come back in a second round after the pass (not scored).
- "review": items due by the end of today across all lessons, then up to `new_limit` never-seen
  questions from lessons the learner has started; a missed item comes back `requeue_gap` items later.
- "predict": an exercise's predict-before-you-code questions; nothing is scheduled; a missed one
  comes back until answered right (the answer is revealed after `reveal_after` misses).
In every mode an item missed `miss_limit` times in a row (across sittings) points the learner back
to its lesson section and is not asked again in this sitting.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from tutor.content.schema import Exercise, Lesson, Question, pick
from tutor.progress.records import ReviewState
from tutor.progress.store import Store
from tutor.quiz.check import Check, ChoiceFeedback, check_answer
from tutor.quiz.schedule import counts_today, is_due, rating_for, review

Mode = Literal["lesson", "review", "predict"]


@dataclass(frozen=True)
class Item:
    """One question to ask: from a lesson's quiz, or from an exercise's `predict` list."""

    lesson: Lesson
    question: Question
    exercise: Exercise | None = None

    @property
    def key(self) -> tuple[str, str | None, str]:
        return (self.lesson.id, self.exercise.id if self.exercise else None, self.question.id)


class SectionPointer(BaseModel):
    model_config = ConfigDict(frozen=True)

    lesson: str
    section: str | None
    title: str  # the section's title (or the lesson's, if the question names no section)


class Feedback(BaseModel):
    model_config = ConfigDict(frozen=True)

    lesson: str
    question: str
    exercise: str | None = None
    correct: bool | None  # None: open question, see `rating`
    missed: bool  # wrong, or an open question rated "again"
    explanation: str  # "" while a prediction's answer is still held back
    expected: str  # the right answer / model answer; "" while held back
    understood: str | None = None
    choices: list[ChoiceFeedback] = []
    rating: int | None = None  # FSRS rating earned (1 again, 2 hard, 3 good, 4 easy)
    counted: bool = False  # moved the long-term schedule (first answer today)
    due: datetime | None = None  # next long-term review, when counted
    again_later: bool = False  # will be asked again in this sitting
    misses_in_row: int = 0
    go_back: SectionPointer | None = None


class Score(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: str
    total: int  # items in the sitting
    answered: int  # items answered at least once
    correct: int  # right at the first attempt
    missed: list[str]  # question ids missed at the first attempt
    go_back: list[SectionPointer] = []

    @property
    def percent(self) -> float:
        return 100.0 * self.correct / self.total if self.total else 0.0


class QuizSession:
    def __init__(
        self,
        store: Store,
        items: Sequence[Item],
        *,
        mode: Mode,
        lang: str = "en",
        now: Callable[[], datetime] | None = None,
        requeue_gap: int = 3,
        miss_limit: int = 3,
        reveal_after: int = 2,
    ):
        self.store, self.mode, self.lang = store, mode, lang
        self.now = now or store.now  # the store's clock (local time by default) unless a test injects one
        self.requeue_gap, self.miss_limit, self.reveal_after = requeue_gap, miss_limit, reveal_after
        self.session_id = uuid.uuid4().hex[:12]
        self.items = list(items)
        self.current: Item | None = None
        self._queue = list(items)
        self._second_round: list[Item] = []
        self._first: dict[tuple, bool] = {}
        self._go_back: list[SectionPointer] = []

    # --- building ------------------------------------------------------------------------

    @classmethod
    def for_lesson(cls, store: Store, lesson: Lesson, **kw) -> QuizSession:
        return cls(store, [Item(lesson, q) for q in lesson.quiz], mode="lesson", **kw)

    @classmethod
    def for_review(cls, store: Store, lessons: Sequence[Lesson], *, new_limit: int = 10, **kw) -> QuizSession:
        due = due_items(store, lessons, (kw.get("now") or store.now)())
        known = {(lesson.id, q.id): Item(lesson, q) for lesson in lessons for q in lesson.quiz}
        states = {(s.lesson, s.question) for s in store.review_states()}
        started = {r.lesson for r in store.sections_read()} | {a.lesson for a in store.answers()}
        new = [item for k, item in known.items() if k not in states and item.lesson.id in started]
        return cls(store, due + new[: max(0, new_limit)], mode="review", **kw)

    @classmethod
    def for_predictions(cls, store: Store, lesson: Lesson, exercise: Exercise, **kw) -> QuizSession:
        """The exercise's predict questions not yet answered right (all of them answered: unlocked)."""
        done = predictions_answered(store, exercise)
        items = [Item(lesson, q, exercise) for q in exercise.predict if q.id not in done]
        return cls(store, items, mode="predict", **kw)

    # --- asking --------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return not self._queue and not self._second_round

    @property
    def queued(self) -> list[Item]:
        """The items still to ask, in order (a copy; a lesson's second round is not included yet)."""
        return list(self._queue)

    @property
    def remaining(self) -> int:
        return len(self._queue) + len(self._second_round)

    @property
    def second_round(self) -> bool:
        """True once a lesson sitting has moved on to re-asking the questions missed in the pass."""
        return self.mode == "lesson" and len(self._first) == len(self.items) and bool(self.items)

    def is_repeat(self, item: Item) -> bool:
        """True if `item` was already answered in this sitting (a missed one asked again)."""
        return item.key in self._first

    def next_question(self) -> Item | None:
        if not self._queue and self._second_round:
            self._queue, self._second_round = self._second_round, []
        self.current = self._queue.pop(0) if self._queue else None
        return self.current

    def answer(
        self, response: str | list[str] | int, *, used_hint: bool = False, note: str | None = None
    ) -> Feedback:
        """Check, schedule and record an answer to the current question.

        `response`: typed text; choice ids or 1-based numbers (a list, or "1, 3"); for open questions
        the self-rating ("again"/"hard"/"good"/"easy" or 1-4), with the learner's own text as `note`.
        Raises check.AnswerError (nothing recorded, question still current) if it is not an answer.
        """
        item = self.current
        if item is None:
            raise RuntimeError("no question is being asked; call next_question() first")
        check = check_answer(item.question, response, self.lang)
        now = self.now()
        rating = (
            None
            if self.mode == "predict"
            else rating_for(check.correct, used_hint=used_hint, own=check.rating)
        )

        def schedule(state: ReviewState | None) -> dict | None:
            # runs inside the store's write transaction: only the day's first answer moves the schedule
            if rating is None or not counts_today(state, now):
                return None
            return review(state.card if state else None, rating, now)

        lesson_id, exercise_id, qid = item.key
        recorded = self.store.record_answer(
            lesson_id,
            qid,
            note.strip() if note and note.strip() else check.answer_text,
            check.correct,
            rating=int(rating) if rating is not None else None,
            used_hint=used_hint,
            exercise=exercise_id,
            session=self.session_id,
            schedule=schedule,
            at=now,
        )
        state = self.store.review_state(lesson_id, qid) if recorded.counted else None
        missed = check.correct is False or (check.correct is None and check.rating == 1)
        self._first.setdefault(item.key, not missed)
        streak = self._misses_in_row(item) if missed else 0
        go_back = self._pointer(item) if missed and streak >= self.miss_limit else None
        if go_back and go_back not in self._go_back:
            self._go_back.append(go_back)
        again = missed and (go_back is None or self.mode == "predict")
        if again:
            self._requeue(item)
        self.current = None
        return self._feedback(item, check, missed, streak, rating, state, again, go_back)

    def score(self) -> Score:
        keys = [i.key for i in self.items]
        return Score(
            mode=self.mode,
            total=len(keys),
            answered=sum(k in self._first for k in keys),
            correct=sum(self._first.get(k) is True for k in keys),
            missed=[k[2] for k in keys if self._first.get(k) is False],
            go_back=self._go_back,
        )

    # --- internals -----------------------------------------------------------------------

    def _requeue(self, item: Item) -> None:
        if self.mode == "lesson":
            self._second_round.append(item)
        elif self.mode == "review":
            self._queue.insert(min(self.requeue_gap, len(self._queue)), item)
        else:
            self._queue.append(item)

    def _misses_in_row(self, item: Item) -> int:
        lesson_id, exercise_id, qid = item.key
        history = self.store.answers(
            lesson_id, qid, exercise=exercise_id, predictions=exercise_id is not None
        )
        streak = 0
        for a in reversed(history):
            if a.correct or (a.correct is None and a.rating != 1):
                break
            streak += 1
        return streak

    def _pointer(self, item: Item) -> SectionPointer:
        section_id = item.question.section or (item.exercise.section if item.exercise else None)
        section = next((s for s in item.lesson.sections if s.id == section_id), None)
        title = pick(section.title, self.lang) if section else pick(item.lesson.title, self.lang)
        return SectionPointer(lesson=item.lesson.id, section=section.id if section else None, title=title)

    def _feedback(self, item, check: Check, missed, streak, rating, state, again, go_back) -> Feedback:
        held_back = self.mode == "predict" and missed and streak < self.reveal_after
        due = state.due.astimezone(self.now().tzinfo) if state else None
        return Feedback(
            lesson=item.lesson.id,
            question=item.question.id,
            exercise=item.exercise.id if item.exercise else None,
            correct=check.correct,
            missed=missed,
            explanation="" if held_back else pick(item.question.explanation, self.lang),
            expected="" if held_back else check.expected,
            understood=check.understood,
            choices=check.choices,
            rating=int(rating) if rating is not None else None,
            counted=state is not None,
            due=due,
            again_later=again,
            misses_in_row=streak,
            go_back=go_back,
        )


def due_items(store: Store, lessons: Sequence[Lesson], now: datetime | None = None) -> list[Item]:
    """Quiz questions due for review by the end of today (the learner's clock), earliest first."""
    now = now or store.now()
    known = {(lesson.id, q.id): Item(lesson, q) for lesson in lessons for q in lesson.quiz}
    states = store.review_states()  # ordered by due date
    return [
        known[(s.lesson, s.question)] for s in states if (s.lesson, s.question) in known and is_due(s, now)
    ]


def predictions_answered(store: Store, exercise: Exercise) -> set[str]:
    """Ids of the exercise's predict questions the learner has answered right at least once."""
    return {a.question for a in store.answers(exercise=exercise.id, predictions=True) if a.correct}


def predictions_unlocked(store: Store, exercise: Exercise) -> bool:
    """True when every predict question of the exercise has been answered right (or it has none):
    the coding task is open."""
    return {q.id for q in exercise.predict} <= predictions_answered(store, exercise)
