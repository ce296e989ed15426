"""What the home screen needs of the course, read from the start-up cache before the course loads.

Parsing the lessons (pydantic, Markdown, LaTeX) and importing what it needs takes a few hundred
milliseconds; the home screen needs only each lesson's id, title, summary, its sections and
exercises (ids and titles), and its question ids (the progress and the next step are worked out from
them and the store: tutor.progress.glance). `Card`s hold that, in plain dataclasses. They are kept
with the parsed course in the start-up cache (tutor.parse_cache; tutor.course keeps them), and read
from there without the course.

Standard library only: this is read before the first screen is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tutor import parse_cache
from tutor.i18n import LANGS

COURSE_ENTRY = "course"  # the cache's name for the parsed course and its cards


@dataclass(frozen=True)
class Part:
    """A section or an exercise of a lesson, as home names it."""

    id: str
    title: dict[str, str]
    section: str | None = None  # an exercise's section
    kind: str = "code"  # an exercise's kind: "runs" is graded from training runs that take minutes


@dataclass(frozen=True)
class Card:
    """One lesson as the home screen lists it."""

    id: str
    title: dict[str, str]
    summary: dict[str, str]
    sections: tuple[Part, ...]
    questions: tuple[str, ...]  # the quiz's question ids
    exercises: tuple[Part, ...]  # in course order


@dataclass(frozen=True)
class Index:
    cards: list[Card]
    problems: list[dict[str, str]]  # the course's errors, `file:line: field: message` by language
    skipped: int  # lesson folders not loaded because of errors


def index_of(course) -> Index:
    """The cards of a loaded Course (tutor.content.loader.Course)."""
    cards = [
        Card(
            id=lesson.id,
            title=dict(lesson.title),
            summary=dict(lesson.summary),
            sections=tuple(Part(s.id, dict(s.title)) for s in lesson.sections),
            questions=tuple(q.id for q in lesson.quiz),
            exercises=tuple(Part(ex.id, dict(ex.title), ex.section, ex.kind) for ex in lesson.exercises),
        )
        for lesson in course.lessons
    ]
    problems = [{lang: p.format(course.lessons_dir, lang) for lang in LANGS} for p in course.errors]
    return Index(cards, problems, len(course.skipped))


def kept_course(lessons_dir: Path) -> parse_cache.Kept | None:
    """The cache's entry for the course parsed from `lessons_dir` (its value: {"cards": Index,
    "course": the pickled Course}); None if the folder cannot be read."""
    try:
        inputs = parse_cache.files_under(lessons_dir)
    except OSError:  # e.g. the folder does not exist: the loader says so in the learner's words
        return None
    return parse_cache.Kept(parse_cache.entry(lessons_dir, COURSE_ENTRY), inputs)


def saved_cards(lessons_dir: Path) -> Index | None:
    """The cards kept with the course parsed last time, if no lesson file and none of the code that
    parsed them has changed since; else None (a few ms: the first frame lists the lessons with them)."""
    kept = kept_course(lessons_dir)
    value = kept.load() if kept is not None else None
    return value["cards"] if isinstance(value, dict) and isinstance(value.get("cards"), Index) else None
