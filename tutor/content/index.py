"""What the home screen needs of the course, and when a saved copy of a parsed course still holds.

Parsing the lessons (pydantic, Markdown, LaTeX) and importing what it needs takes a few hundred
milliseconds; the home screen needs only each lesson's id, title, summary, its sections and
exercises (ids and titles), and its question ids (the progress and the next step are worked out from
them and the store: tutor.progress.glance). `Card`s hold that, in plain JSON. A saved copy (the cards, or the whole parsed
course: tutor.course) is keyed by a `fingerprint`: the size and modification time of every file in
the lessons folder and of the code that parses them. Any change there and the copy is not used.

Standard library only: this is read before the first screen is drawn.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tutor import __version__
from tutor.i18n import LANGS

FORMAT = 2  # bump when the cards or the saved course change shape
INDEX_FILE = "course-index.json"  # the cards, in the app's cache folder (tutor.course saves them)
TUTOR_DIR = Path(__file__).resolve().parents[1]
# the code that turns lesson files into a Course: a saved course made by other code is not reused
PARSER_FILES = (
    *sorted((TUTOR_DIR / "content").glob("*.py")),
    TUTOR_DIR / "course.py",
    TUTOR_DIR / "i18n.py",
    TUTOR_DIR / "experiments" / "registry.py",
    TUTOR_DIR / "experiments" / "params.py",
)


@dataclass(frozen=True)
class Part:
    """A section or an exercise of a lesson, as home names it."""

    id: str
    title: dict[str, str]
    section: str | None = None  # an exercise's section


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
            exercises=tuple(Part(ex.id, dict(ex.title), ex.section) for ex in lesson.exercises),
        )
        for lesson in course.lessons
    ]
    problems = [{lang: p.format(course.lessons_dir, lang) for lang in LANGS} for p in course.errors]
    return Index(cards, problems, len(course.skipped))


def fingerprint(lessons_dir: Path) -> list[Any]:
    """Size and modification time of every lesson file and of the parser's code (JSON-able)."""
    lessons_dir = Path(lessons_dir).resolve()
    files: list[list[Any]] = []

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.startswith((".", "__")):
                    continue
                if entry.is_dir():
                    walk(entry.path, f"{prefix}{entry.name}/")
                else:
                    st = entry.stat()
                    files.append([prefix + entry.name, st.st_size, st.st_mtime_ns])

    walk(str(lessons_dir), "")
    code = []
    for path in PARSER_FILES:
        st = path.stat()
        code.append([path.name, st.st_size, st.st_mtime_ns])
    return [FORMAT, __version__, str(lessons_dir), files, code]


def save_index(file: Path, key: list[Any], index: Index) -> None:
    from models.atomic import atomic_write_text

    data = {"key": key, "cards": [asdict(c) for c in index.cards], "problems": index.problems}
    data["skipped"] = index.skipped
    atomic_write_text(file, json.dumps(data, ensure_ascii=False))


def read_index(file: Path, key: list[Any]) -> Index | None:
    """The saved cards if `key` (this fingerprint) is the one they were saved under, else None."""
    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        cards = [
            Card(
                c["id"],
                c["title"],
                c["summary"],
                tuple(Part(**p) for p in c["sections"]),
                tuple(c["questions"]),
                tuple(Part(**p) for p in c["exercises"]),
            )
            for c in data["cards"]
        ]
        return Index(cards, list(data["problems"]), int(data["skipped"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, unreadable or from another version: the course is parsed instead
