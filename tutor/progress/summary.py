"""Progress per lesson, for `python -m tutor progress` and the app's home screen.

The quiz counts ("answered", "correct", "due") are defined once, in tutor.progress.quiz_status, and shown
alike by this summary, the app's home screen, the review screen and `python -m tutor quiz`.
"imported" says how much of that came only from `progress --import`, not from work on this machine.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from tutor.content.schema import Lesson, pick
from tutor.progress.quiz_status import is_due, quiz_counts
from tutor.progress.records import LAST_LOCATION
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
    due = {(s.lesson, s.question) for s in due_states}
    quiz = quiz_counts(store, lessons, now)
    latest_imported = {}
    for a in store.answers():  # oldest first, so the last one per question wins
        latest_imported[(a.lesson, a.question)] = a.imported
    reads = store.sections_read()
    read = {(r.lesson, r.section) for r in reads}
    read_imported = {(r.lesson, r.section) for r in reads if r.imported}
    subs = store.submissions()
    attempted = {s.exercise for s in subs}
    passed = {s.exercise for s in subs if s.status == "pass"}
    passed_here = {s.exercise for s in subs if s.status == "pass" and not s.imported}
    out, imported = [], {}
    for lesson in lessons:
        qids = [(lesson.id, q.id) for q in lesson.quiz]
        exercises = [e.id for e in lesson.exercises]
        out.append(
            LessonProgress(
                id=lesson.id,
                title=pick(lesson.title, lang),
                sections_read=sum((lesson.id, s.id) in read for s in lesson.sections),
                sections_total=len(lesson.sections),
                quiz=QuizProgress.model_validate(quiz[lesson.id], from_attributes=True),
                exercises=ExerciseProgress(
                    total=len(exercises),
                    attempted=sum(e in attempted for e in exercises),
                    passed=sum(e in passed for e in exercises),
                ),
            )
        )
        imported[lesson.id] = LessonImported(
            sections_read=sum((lesson.id, s.id) in read_imported for s in lesson.sections),
            answered=sum(latest_imported.get(k, False) for k in qids),
            passed=sum(e in passed and e not in passed_here for e in exercises),
        )
    known = {(lesson.id, q.id) for lesson in lessons for q in lesson.quiz}
    runs, experiments = store.training_runs(), store.experiment_runs()
    location = store.value_entry(LAST_LOCATION)
    return ProgressSummary(
        home=str(store.db.home),
        store=str(store.path),
        lessons=out,
        reviews_due=len(due & known),
        training_runs=len(runs),
        experiment_runs=len(experiments),
        last_location=location.value if location else None,
        notices=[notice.in_lang(lang) for notice in store.notices],
        imported=ImportedProgress(
            lessons=imported,
            reviews_due=len({(s.lesson, s.question) for s in due_states if s.imported} & known),
            training_runs=sum(r.imported for r in runs),
            experiment_runs=sum(r.imported for r in experiments),
            last_location=bool(location and location.imported),
        ),
    )
