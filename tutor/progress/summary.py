"""Progress per lesson, for `python -m tutor progress` and the app's home screen.

The quiz counts ("answered", "correct", "due") are defined once, in tutor.progress.quiz_status, and shown
alike by this summary, the app's home screen, the review screen and `python -m tutor quiz`.
"imported" says how much of that came only from `progress --import`, not from work on this machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from tutor.content.schema import Lesson
from tutor.i18n import pick
from tutor.progress.quiz_status import QuizCounts, is_due, quiz_counts
from tutor.progress.schema import LAST_LOCATION
from tutor.progress.store import Store


class QuizProgress(BaseModel):
    questions: int
    answered: int
    correct: int
    due: int


class ExerciseProgress(BaseModel):
    total: int
    attempted: int
    passed: int


class LessonProgress(BaseModel):
    id: str
    title: str
    sections_read: int
    sections_total: int
    quiz: QuizProgress
    exercises: ExerciseProgress


class LessonImported(BaseModel):
    sections_read: int  # read sections whose record was imported
    answered: int  # answered questions whose latest answer was imported
    passed: int  # passed exercises with no pass recorded on this machine


class ImportedProgress(BaseModel):
    lessons: dict[str, LessonImported]  # by lesson id
    reviews_due: int
    training_runs: int
    experiment_runs: int
    last_location: bool


class ProgressSummary(BaseModel):
    home: str
    store: str
    lessons: list[LessonProgress]
    reviews_due: int
    training_runs: int
    experiment_runs: int
    last_location: dict | None
    notices: list[str]
    imported: ImportedProgress


def summarise(store: Store, lessons: Sequence[Lesson], lang: str = "en") -> ProgressSummary:
    now = store.now()
    due_states = [s for s in store.review_states() if is_due(s, now)]
    known = {(lesson.id, q.id) for lesson in lessons for q in lesson.quiz}
    done = _Done.of(store)
    quiz = quiz_counts(store, lessons, now)
    runs, experiments = store.training_runs(), store.experiment_runs()
    location = store.value_entry(LAST_LOCATION)
    return ProgressSummary(
        home=str(store.db.home),
        store=str(store.path),
        lessons=[_lesson_progress(lesson, lang, quiz[lesson.id], done) for lesson in lessons],
        reviews_due=len({(s.lesson, s.question) for s in due_states} & known),
        training_runs=len(runs),
        experiment_runs=len(experiments),
        last_location=location.value if location else None,
        notices=[notice.in_lang(lang) for notice in store.notices],
        imported=ImportedProgress(
            lessons={lesson.id: _lesson_imported(lesson, done) for lesson in lessons},
            reviews_due=len({(s.lesson, s.question) for s in due_states if s.imported} & known),
            training_runs=sum(r.imported for r in runs),
            experiment_runs=sum(r.imported for r in experiments),
            last_location=bool(location and location.imported),
        ),
    )


@dataclass(frozen=True)
class _Done:
    """What the learner has done, by key, and which of it came only from an import."""

    read: set[tuple[str, str]]  # (lesson, section)
    read_imported: set[tuple[str, str]]
    attempted: set[str]  # exercise ids
    passed: set[str]
    passed_here: set[str]  # passed in a submission made on this machine
    answer_imported: dict[tuple[str, str], bool]  # (lesson, question): was its latest answer imported?

    @classmethod
    def of(cls, store: Store) -> _Done:
        reads, subs = store.sections_read(), store.submissions()
        return cls(
            read={(r.lesson, r.section) for r in reads},
            read_imported={(r.lesson, r.section) for r in reads if r.imported},
            attempted={s.exercise for s in subs},
            passed={s.exercise for s in subs if s.status == "pass"},
            passed_here={s.exercise for s in subs if s.status == "pass" and not s.imported},
            answer_imported={
                (a.lesson, a.question): a.imported for a in store.answers()
            },  # the last one wins
        )


def _lesson_progress(lesson: Lesson, lang: str, quiz: QuizCounts, done: _Done) -> LessonProgress:
    exercises = [e.id for e in lesson.exercises]
    return LessonProgress(
        id=lesson.id,
        title=pick(lesson.title, lang),
        sections_read=sum((lesson.id, s.id) in done.read for s in lesson.sections),
        sections_total=len(lesson.sections),
        quiz=QuizProgress.model_validate(quiz, from_attributes=True),
        exercises=ExerciseProgress(
            total=len(exercises),
            attempted=sum(e in done.attempted for e in exercises),
            passed=sum(e in done.passed for e in exercises),
        ),
    )


def _lesson_imported(lesson: Lesson, done: _Done) -> LessonImported:
    exercises = [e.id for e in lesson.exercises]
    return LessonImported(
        sections_read=sum((lesson.id, s.id) in done.read_imported for s in lesson.sections),
        answered=sum(done.answer_imported.get((lesson.id, q.id), False) for q in lesson.quiz),
        passed=sum(e in done.passed and e not in done.passed_here for e in exercises),
    )
