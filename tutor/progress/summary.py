"""Progress per lesson, for `python -m tutor progress` and the app's home screen.

Quiz "correct" counts questions whose latest answer was right (an open question: rated hard or
better); "due" counts review items due by the end of the learner's today.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from tutor.content.schema import Lesson, pick
from tutor.progress.db import end_of_today
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


class ProgressSummary(BaseModel):
    home: str
    store: str
    lessons: list[LessonProgress]
    reviews_due: int
    training_runs: int
    experiment_runs: int
    last_location: dict | None
    notices: list[str]


def summarise(store: Store, lessons: Sequence[Lesson], lang: str = "en") -> ProgressSummary:
    due = {(s.lesson, s.question) for s in store.due_reviews(end_of_today(store.now()))}
    latest = {}
    for a in store.answers():  # oldest first, so the last one per question wins
        latest[(a.lesson, a.question)] = a.correct if a.correct is not None else (a.rating or 1) >= 2
    read = {(r.lesson, r.section) for r in store.sections_read()}
    subs = store.submissions()
    attempted = {s.exercise for s in subs}
    passed = {s.exercise for s in subs if s.status == "pass"}
    out = []
    for lesson in lessons:
        qids = [(lesson.id, q.id) for q in lesson.quiz]
        exercises = [e.id for e in lesson.exercises]
        out.append(
            LessonProgress(
                id=lesson.id,
                title=pick(lesson.title, lang),
                sections_read=sum((lesson.id, s.id) in read for s in lesson.sections),
                sections_total=len(lesson.sections),
                quiz=QuizProgress(
                    questions=len(qids),
                    answered=sum(k in latest for k in qids),
                    correct=sum(latest.get(k) is True for k in qids),
                    due=sum(k in due for k in qids),
                ),
                exercises=ExerciseProgress(
                    total=len(exercises),
                    attempted=sum(e in attempted for e in exercises),
                    passed=sum(e in passed for e in exercises),
                ),
            )
        )
    known = {(lesson.id, q.id) for lesson in lessons for q in lesson.quiz}
    return ProgressSummary(
        home=str(store.db.home),
        store=str(store.path),
        lessons=out,
        reviews_due=len(due & known),
        training_runs=len(store.training_runs()),
        experiment_runs=len(store.experiment_runs()),
        last_location=store.last_location(),
        notices=list(store.notices),
    )
