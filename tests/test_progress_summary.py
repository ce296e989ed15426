"""The per-lesson progress summary over a real store, with an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from quiz_fixtures import tiny_lesson

from tutor.progress.store import Store
from tutor.progress.summary import summarise
from tutor.quiz.session import QuizSession, due_items


def test_summary_counts_sections_quiz_reviews_and_exercises(home: Path) -> None:
    now = [datetime(2026, 3, 2, 20, 0, tzinfo=UTC)]
    store = Store(home, now=lambda: now[0])
    lesson = tiny_lesson(predict=[])
    other = tiny_lesson("other", order=2)
    store.mark_read("tiny-heads", "split")
    store.mark_read("tiny-heads", "split")
    store.mark_read("tiny-heads", "no-longer-in-the-lesson")
    session = QuizSession.for_lesson(store, lesson)
    session.next_question()
    session.answer(["times8"])  # wrong: "again", due tomorrow 20:00
    session.next_question()
    session.answer("263168")  # right: "good", due in two days
    store.record_submission("split-heads", sha256="0" * 64, status="fail", score=0, max_score=1)
    store.record_submission("split-heads", sha256="1" * 64, status="pass", score=1, max_score=1)
    store.record_training_run("r", config={}, status="done")

    first = summarise(store, [lesson, other])
    mine, theirs = first.lessons
    assert (mine.sections_read, mine.sections_total) == (1, 2)
    assert mine.quiz.model_dump() == {"questions": 6, "answered": 2, "correct": 1, "due": 0}
    assert mine.exercises.model_dump() == {"total": 1, "attempted": 1, "passed": 1}
    assert theirs.quiz.answered == 0 and theirs.exercises.total == 0
    assert (first.reviews_due, first.training_runs) == (0, 1)

    now[0] += timedelta(hours=5)  # 01:00 the next day: the "again" item is due today (at 20:00)
    later = summarise(store, [lesson, other])
    assert later.lessons[0].quiz.due == 1 and later.reviews_due == 1
    assert [i.question.id for i in due_items(store, [lesson, other])] == ["same-params"]
    store.close()
