"""The course manifest, `course.toml` beside the lesson folders: it fixes the order of the lessons
and of the exercises in each (rustlings' info.toml is the model).

    [[lesson]]
    folder = "01-multi-head"
    exercises = ["split-heads", "head-count"]

Every lesson folder and every exercise folder is listed exactly once, and nothing is listed that
does not exist; each break of that is an error naming the line and field. A lesson whose
lesson.toml `order` is not its place in the manifest gets a warning (`quiz 2` and the listings use
that number). A lessons folder without a course.toml keeps the old order: lessons by `order`, then
id; exercises by folder name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tutor.content.problems import Problem, error, line_of, warning
from tutor.content.schema import CourseFile, Exercise, Lesson
from tutor.content.tomlfile import load_toml
from tutor.texts import Said

MANIFEST = "course.toml"


@dataclass
class Manifest:
    file: Path
    text: str
    lessons: list[str] = field(default_factory=list)  # lesson folders, in course order
    exercises: dict[str, list[str]] = field(default_factory=dict)  # lesson folder -> exercise ids

    def lesson_key(self, lesson: Lesson) -> tuple:
        """Sort key: listed lessons in manifest order, then any unlisted ones as without a manifest."""
        name = lesson.folder.name if lesson.folder else ""
        place = self.lessons.index(name) if name in self.lessons else len(self.lessons)
        return (place, lesson.order, lesson.id)

    def ordered_exercises(self, folder: Path, exercises: list[Exercise]) -> list[Exercise]:
        listed = self.exercises.get(folder.name, [])
        return sorted(exercises, key=lambda ex: listed.index(ex.id) if ex.id in listed else len(listed))


def read_manifest(lessons_dir: Path, problems: list[Problem]) -> Manifest | None:
    """The manifest, or None when there is none or it does not parse (its problems are added)."""
    file = lessons_dir / MANIFEST
    if not file.exists():
        return None
    course, text, _data = load_toml(file, CourseFile, problems)
    if course is None:
        return None
    manifest = Manifest(file, text)
    for i, entry in enumerate(course.lesson):
        if entry.folder in manifest.exercises:
            first = manifest.lessons.index(entry.folder) + 1
            problems.append(
                _error(manifest, Said("problem.manifest.twice", n=first), i, "folder", entry.folder)
            )
            continue
        manifest.lessons.append(entry.folder)
        manifest.exercises[entry.folder] = []
        for ex in entry.exercises:
            if ex in manifest.exercises[entry.folder]:
                problems.append(
                    _error(
                        manifest, Said("problem.manifest.exercise_twice", id=ex), i, "exercises", entry.folder
                    )
                )
            else:
                manifest.exercises[entry.folder].append(ex)
    return manifest


def check_manifest(manifest: Manifest, folders: list[Path]) -> list[Problem]:
    """Every lesson folder and exercise folder listed; nothing listed that does not exist."""
    problems: list[Problem] = []
    names = [f.name for f in folders]
    for i, name in enumerate(manifest.lessons):
        if name not in names:
            known = names or "—"
            problems.append(
                _error(
                    manifest, Said("problem.manifest.no_folder", name=name, known=known), i, "folder", name
                )
            )
            continue
        found = exercise_folders(folders[names.index(name)])
        for ex in manifest.exercises[name]:
            if ex not in found:
                where = f"{name}/exercises/{ex}/"
                known = found or "—"
                said = Said("problem.manifest.no_exercise", where=where, known=known)
                problems.append(_error(manifest, said, i, "exercises", name))
        for ex in found:
            if ex not in manifest.exercises[name]:
                problems.append(
                    _error(
                        manifest,
                        Said("problem.manifest.exercise_unlisted", id=ex),
                        i,
                        "exercises",
                        name,
                    )
                )
    for name in names:
        if name not in manifest.lessons:
            problems.append(
                error(manifest.file, Said("problem.manifest.unlisted", name=name), field="lesson")
            )
    return problems


def check_orders(manifest: Manifest, lessons: list[Lesson]) -> list[Problem]:
    """A warning for each lesson whose lesson.toml `order` is not its place in the manifest."""
    problems = []
    for lesson in lessons:
        name = lesson.folder.name if lesson.folder else ""
        if name in manifest.lessons and lesson.order != (place := manifest.lessons.index(name) + 1):
            assert lesson.folder is not None  # name is its name
            file = lesson.folder / "lesson.toml"
            problems.append(
                warning(
                    file,
                    Said("problem.manifest.order", order=lesson.order, manifest=MANIFEST, place=place),
                    field="order",
                    line=_line(file, ("order",)),
                )
            )
    return problems


def exercise_folders(lesson_folder: Path) -> list[str]:
    """The exercise folders of a lesson, by name (as the loader finds them)."""
    folder = lesson_folder / "exercises"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name[0] not in "._")


def _error(manifest: Manifest, message: Said, index: int, key: str, folder: str) -> Problem:
    line = line_of(manifest.text, ("lesson", index, key))
    return error(manifest.file, message, field=f"lesson[{folder}].{key}", line=line)


def _line(file: Path, loc: tuple) -> int | None:
    try:
        return line_of(file.read_text(encoding="utf-8"), loc)
    except (OSError, UnicodeDecodeError):
        return None
