"""Every exercise of the course with where the learner stands on it, defined once for the exercise list of
the app (tutor.ui.screens.exercises) and `python -m tutor exercise list`.

- **state**: "passed" once a grade passed (here or in imported progress), "started" once its file was
  handed out or a grade recorded, else "new";
- **best**: the highest score of its grades, None before the first;
- **latest**: the last grade's status and score;
- **minutes**, **difficulty**: what its exercise.toml says to expect (None where it says nothing).

Plain data, no Textual; the store's reads only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from tutor.i18n import pick
from tutor.texts import number, say

if TYPE_CHECKING:
    from tutor.content.schema import Exercise, Lesson
    from tutor.progress.store import Store


class ExerciseStatus(NamedTuple):
    lesson: str
    id: str
    title: dict[str, str]
    kind: str
    section: str | None
    state: str  # new | started | passed
    best: float | None
    max_score: float
    latest_status: str | None
    latest_score: float | None
    imported: bool  # passed only in progress imported from elsewhere
    minutes: int | None
    difficulty: int | None


def exercise_statuses(
    store: Store, lessons: Sequence[Lesson], handed_out: Callable[[Exercise], bool]
) -> list[ExerciseStatus]:
    """In course order. `handed_out(ex)`: whether the learner's file of it exists (tutor.grading.workspace)."""
    passed = store.passed_exercises()
    passed_here = store.passed_exercises(imported=False)
    best: dict[str, float] = {}
    latest = {}
    for s in store.submissions():  # oldest first: the last one seen is the latest
        best[s.exercise] = max(best.get(s.exercise, 0.0), s.score)
        latest[s.exercise] = s
    rows = []
    for lesson in lessons:
        for ex in lesson.exercises:
            if ex.id in passed:
                state = "passed"
            else:
                state = "started" if ex.id in latest or handed_out(ex) else "new"
            last = latest.get(ex.id)
            rows.append(
                ExerciseStatus(
                    lesson=lesson.id,
                    id=ex.id,
                    title={lang: text for lang, text in ex.title.items()},
                    kind=ex.kind,
                    section=ex.section,
                    state=state,
                    best=best.get(ex.id),
                    max_score=sum(c.points for c in ex.checks),
                    latest_status=last.status if last else None,
                    latest_score=last.score if last else None,
                    imported=ex.id in passed - passed_here,
                    minutes=ex.minutes,
                    difficulty=ex.difficulty,
                )
            )
    return rows


def effort_text(minutes: int | None, difficulty: int | None, kind: str, lang: str) -> str:
    """What to expect, in the learner's words: "about 30 min (training included) · medium"."""
    parts = []
    if minutes is not None:
        parts.append(
            say("ex.effort.minutes_runs" if kind == "runs" else "ex.effort.minutes", lang, n=minutes)
        )
    if difficulty is not None:
        parts.append(say(f"ex.effort.level.{difficulty}", lang))
    return " · ".join(parts)


def difficulty_marks(difficulty: int | None) -> str:
    """●●○ for a difficulty of 2 of 3; blank where none is given."""
    return "●" * difficulty + "○" * (3 - difficulty) if difficulty else ""


def score_text(row: ExerciseStatus, lang: str) -> str:
    """The best score as "4/5", "–/5" before the first grade."""
    top = number(row.max_score, lang)
    return f"{number(row.best, lang)}/{top}" if row.best is not None else f"–/{top}"


def title_of(row: ExerciseStatus, lang: str) -> str:
    return pick(row.title, lang)
