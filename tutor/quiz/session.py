"""A quiz sitting: which question comes next, checking, feedback, scheduling, recording.

Pure logic over the content models and the progress store, driven the same way by the headless
CLI and the Textual app:

    session = QuizSession.for_lesson(store, lesson, lang="en")    # or .for_review(store, lessons)
    while (item := session.next_question()) is not None:
        ...show item.question (its choices in this sitting's order)...
        feedback = session.answer(text_or_choice_numbers_or_rating, used_hint=False)
        ...show feedback (tutor.quiz.feedback)...
    score = session.score()

Modes:
- "lesson": the lesson's questions straight through; the score counts first attempts; missed
  questions come back in a second round after the pass (not scored). A lesson sitting left
  unfinished is resumed: the next one starts at its first unanswered question (or its second round).
- "review": what tutor.progress.quiz_status.review_plan names: the questions due today across all lessons,
  then a few new ones; a missed item comes back `requeue_gap` items later.
- "predict": an exercise's predict-before-you-code questions; nothing is scheduled; a missed one
  comes back until answered right.
Every miss is explained at once (the right answer and the explanation). In every mode an item
missed `miss_limit` times in a row (across sittings) points the learner back to its lesson section
and is not asked again in this sitting.

Each sitting has an id, "<scope>#<n>" ("lesson:positions#2", "review#5", "predict:rope#1": the
scope's n-th sitting), stored with every answer. It seeds the order of each question's choices, so
the order changes from sitting to sitting (the right choice is not always the first) and stays put
within one, a resumed one included.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from tutor.content.schema import Exercise, Lesson, MultipleChoice, Question, SingleChoice
from tutor.i18n import pick
from tutor.progress.quiz_status import ReviewPlan, due_keys, is_miss, review_plan
from tutor.progress.records import QuizAnswer, ReviewState
from tutor.progress.store import Store
from tutor.quiz.check import ChoiceFeedback, check_answer
from tutor.quiz.schedule import counts_today, rating_for, review

if TYPE_CHECKING:
    from fsrs import Rating

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


def shuffled(question: Question, seed: str) -> Question:
    """The question with its choices in the order `seed` gives (other questions as they are)."""
    if not isinstance(question, SingleChoice | MultipleChoice):
        return question
    choices = list(question.choices)
    random.Random(f"{seed}/{question.id}").shuffle(choices)
    return question.model_copy(update={"choices": choices})


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
    explanation: str
    expected: str  # the right answer / model answer
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
        """Right at the first attempt, of the items answered (a sitting stopped early is scored on
        what was asked)."""
        return 100.0 * self.correct / self.answered if self.answered else 0.0

    @property
    def left(self) -> int:
        """Items of the sitting not answered yet."""
        return self.total - self.answered


class QuizSession:
    def __init__(
        self,
        store: Store,
        items: Sequence[Item],
        *,
        mode: Mode,
        scope: str | None = None,
        plan: ReviewPlan | None = None,
        lang: str = "en",
        now: Callable[[], datetime] | None = None,
        requeue_gap: int = 3,
        miss_limit: int = 3,
    ):
        self.store, self.mode, self.lang = store, mode, lang
        self.scope = scope or mode  # names the sitting: see the module docstring
        self.plan = plan  # a review sitting: what is due and what is new
        self.now = now or store.now  # the store's clock (local time by default) unless a test injects one
        self.requeue_gap, self.miss_limit = requeue_gap, miss_limit
        self.current: Item | None = None
        from tutor.quiz.fit import fitted_parameters

        self.parameters = fitted_parameters(store)  # the learner's own FSRS parameters, once fitted
        sittings = self._sittings()
        last = max(sittings, default=0)
        if mode == "lesson" and last:
            self._start(last, items)
            self._restore(sittings[last])
            if not self.finished:
                return
        self._start(last + 1, items)

    # --- building ------------------------------------------------------------------------

    @classmethod
    def for_lesson(cls, store: Store, lesson: Lesson, **kw) -> QuizSession:
        """The lesson's quiz; an unfinished sitting of it is resumed."""
        items = [Item(lesson, q) for q in lesson.quiz]
        return cls(store, items, mode="lesson", scope=f"lesson:{lesson.id}", **kw)

    @classmethod
    def for_review(
        cls, store: Store, lessons: Sequence[Lesson], *, new_limit: int | None = None, **kw
    ) -> QuizSession:
        """Everything due today, then up to `new_limit` new questions, by default what is left of the
        day's allowance (tutor.progress.quiz_status)."""
        plan = review_plan(store, lessons, (kw.get("now") or store.now)(), new_limit)
        known = {(lesson.id, q.id): Item(lesson, q) for lesson in lessons for q in lesson.quiz}
        items = [known[k] for k in [*plan.due, *plan.new]]
        return cls(store, items, mode="review", scope="review", plan=plan, **kw)

    @classmethod
    def for_predictions(cls, store: Store, lesson: Lesson, exercise: Exercise, **kw) -> QuizSession:
        """The exercise's predict questions not yet answered right (all of them answered: unlocked)."""
        done = predictions_answered(store, exercise)
        items = [Item(lesson, q, exercise) for q in exercise.predict if q.id not in done]
        return cls(store, items, mode="predict", scope=f"predict:{exercise.id}", **kw)

    def _sittings(self) -> dict[int, list[QuizAnswer]]:
        """This scope's earlier sittings by number, each with its answers (oldest first)."""
        prefix = f"{self.scope}#"
        found: dict[int, list[QuizAnswer]] = {}
        for a in self.store.answers(predictions=self.mode == "predict"):
            number = (a.session or "").removeprefix(prefix)
            if a.session and a.session.startswith(prefix) and number.isdigit():
                found.setdefault(int(number), []).append(a)
        return found

    def _start(self, number: int, items: Sequence[Item]) -> None:
        self.session_id = f"{self.scope}#{number}"
        self.items = [Item(i.lesson, shuffled(i.question, self.session_id), i.exercise) for i in items]
        self._numbers = {item.key: n for n, item in enumerate(self.items, 1)}
        self._queue = list(self.items)
        self._second_round: list[Item] = []
        self._first: dict[tuple, bool] = {}
        self._go_back: list[SectionPointer] = []

    def _restore(self, answers: list[QuizAnswer]) -> None:
        """Replay a sitting's recorded answers: answered items leave the queue, misses come back."""
        by_key: dict[tuple, list[QuizAnswer]] = {}
        for a in answers:
            by_key.setdefault((a.lesson, a.exercise, a.question), []).append(a)
        for item in self.items:
            got = by_key.get(item.key)
            if not got:
                continue
            self._queue.remove(item)
            self._first[item.key] = not is_miss(got[0].correct, got[0].rating)
            if is_miss(got[-1].correct, got[-1].rating):
                self._after_miss(item)

    # --- asking --------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return not self._queue and not self._second_round

    @property
    def second_round(self) -> bool:
        """True once a lesson sitting has moved on to re-asking the questions missed in the pass."""
        return self.mode == "lesson" and len(self._first) == len(self.items) and bool(self.items)

    @property
    def answered(self) -> int:
        """Items of this sitting answered at least once (a resumed sitting counts its earlier ones)."""
        return len(self._first)

    def is_repeat(self, item: Item) -> bool:
        """True if `item` was already answered in this sitting (a missed one asked again)."""
        return item.key in self._first

    def number(self, item: Item) -> int:
        """`item`'s place in the sitting, 1-based (a repeat keeps its number)."""
        return self._numbers[item.key]

    def next_question(self) -> Item | None:
        if not self._queue and self._second_round:
            self._queue, self._second_round = self._second_round, []
        self.current = self._queue.pop(0) if self._queue else None
        return self.current

    def answer(
        self, response: str | list[str] | int, *, used_hint: bool = False, note: str | None = None
    ) -> Feedback:
        """Check, schedule and record an answer to the current question.

        `response`: typed text; choice numbers as shown ("1, 3") or choice ids (a list); for open
        questions the self-rating ("again"/"hard"/"good"/"easy" or 1-4), with the learner's own text
        as `note`. Raises check.AnswerError (nothing recorded, question still current) if it is not
        an answer.
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
        text = note.strip() if note and note.strip() else check.answer_text
        state = self._record(item, check.correct, text, rating, used_hint, now)
        missed = is_miss(check.correct, check.rating)
        self._first.setdefault(item.key, not missed)
        streak, go_back, again = self._after_miss(item) if missed else (0, None, False)
        self.current = None
        lesson_id, exercise_id, qid = item.key
        return Feedback(
            lesson=lesson_id,
            question=qid,
            exercise=exercise_id,
            correct=check.correct,
            missed=missed,
            explanation=pick(item.question.explanation, self.lang),
            expected=check.expected,
            understood=check.understood,
            choices=check.choices,
            rating=int(rating) if rating is not None else None,
            counted=state is not None,
            due=state.due.astimezone(now.tzinfo) if state else None,
            again_later=again,
            misses_in_row=streak,
            go_back=go_back,
        )

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

    def _record(
        self,
        item: Item,
        correct: bool | None,
        text: str,
        rating: Rating | None,
        used_hint: bool,
        now: datetime,
    ) -> ReviewState | None:
        """Record the answer; the item's new review state if it moved the schedule, else None."""

        def schedule(state: ReviewState | None) -> dict | None:
            # runs inside the store's write transaction: only the day's first answer moves the schedule
            if rating is None or not counts_today(state, now):
                return None
            return review(state.card if state else None, rating, now, self.parameters)

        lesson_id, exercise_id, qid = item.key
        recorded = self.store.record_answer(
            lesson_id,
            qid,
            text,
            correct,
            rating=int(rating) if rating is not None else None,
            used_hint=used_hint,
            exercise=exercise_id,
            session=self.session_id,
            schedule=schedule,
            at=now,
        )
        return self.store.review_state(lesson_id, qid) if recorded.counted else None

    def _after_miss(self, item: Item) -> tuple[int, SectionPointer | None, bool]:
        """A miss of `item`: (misses in a row, where to re-read if that is too many, asked again?)."""
        streak = self._misses_in_row(item)
        go_back = self._pointer(item) if streak >= self.miss_limit else None
        if go_back and go_back not in self._go_back:
            self._go_back.append(go_back)
        again = go_back is None or self.mode == "predict"
        if again:
            self._requeue(item)
        return streak, go_back, again

    def _requeue(self, item: Item) -> None:
        if self.mode == "lesson":
            self._second_round.append(item)
        elif self.mode == "review":
            self._queue.insert(self._requeue_at(item), item)
        else:
            self._queue.append(item)

    def _requeue_at(self, item: Item) -> int:
        """Where a missed review item comes back: `requeue_gap` items on, but before the new questions
        while reviews are left (reviews first, as Anki asks them), never at once again."""
        at = min(self.requeue_gap, len(self._queue))
        new = set(self.plan.new) if self.plan is not None else set()
        if (item.lesson.id, item.question.id) not in new:
            reviews_left = next(
                (i for i, q in enumerate(self._queue) if (q.lesson.id, q.question.id) in new),
                len(self._queue),
            )
            at = min(at, max(reviews_left, min(1, len(self._queue))))
        return at

    def _misses_in_row(self, item: Item) -> int:
        lesson_id, exercise_id, qid = item.key
        history = self.store.answers(
            lesson_id, qid, exercise=exercise_id, predictions=exercise_id is not None
        )
        streak = 0
        for a in reversed(history):
            if not is_miss(a.correct, a.rating):
                break
            streak += 1
        return streak

    def _pointer(self, item: Item) -> SectionPointer:
        section_id = item.question.section or (item.exercise.section if item.exercise else None)
        section = next((s for s in item.lesson.sections if s.id == section_id), None)
        title = pick(section.title, self.lang) if section else pick(item.lesson.title, self.lang)
        return SectionPointer(lesson=item.lesson.id, section=section.id if section else None, title=title)


def due_items(store: Store, lessons: Sequence[Lesson], now: datetime | None = None) -> list[Item]:
    """Quiz questions due today (tutor.progress.quiz_status.due_keys), earliest first."""
    known = {(lesson.id, q.id): Item(lesson, q) for lesson in lessons for q in lesson.quiz}
    return [known[k] for k in due_keys(store, lessons, now or store.now())]


def predictions_answered(store: Store, exercise: Exercise) -> set[str]:
    """Ids of the exercise's predict questions the learner has answered right at least once."""
    return {a.question for a in store.answers(exercise=exercise.id, predictions=True) if a.correct}


def predictions_unlocked(store: Store, exercise: Exercise) -> bool:
    """True when every predict question of the exercise has been answered right (or it has none):
    the task is open."""
    return {q.id for q in exercise.predict} <= predictions_answered(store, exercise)
