"""Load and validate the lesson folders: `load_course(lessons_dir, experiments) -> Course`.

Every problem is collected (nothing stops at the first); a lesson folder with any error is
skipped and named, and never takes the other lessons down. The order of the lessons and of their
exercises comes from the course manifest, course.toml (manifest.py), when there is one. Loading imports neither torch nor
Textual, and all shipped lessons load in well under 200 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.content import experiments as experiment_check
from tutor.content.manifest import check_manifest, check_orders, read_manifest
from tutor.content.problems import Problem, error, line_of, warning
from tutor.content.prose import ProseSection, parse_language_file
from tutor.content.schema import Exercise, Lesson, LessonFile, Question, QuizFile, Section
from tutor.content.tomlfile import load_toml, missing_translations, read_text
from tutor.errors import TutorError
from tutor.i18n import LANGS
from tutor.texts import Said

KNOWN_ENTRIES = {"lesson.toml", "quiz.toml", "exercises", "README.md", "__pycache__", "__init__.py"}
KNOWN_ENTRIES |= {f"{lang}.md" for lang in LANGS}


class UnknownContent(TutorError, LookupError):
    """An id that names no lesson, question or exercise; the message lists the known ones."""


@dataclass
class Course:
    lessons_dir: Path
    lessons: list[Lesson] = field(default_factory=list)  # the good ones, by order
    problems: list[Problem] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)  # lesson folders not loaded because of errors

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def lesson(self, lesson_id: str) -> Lesson:
        for lesson in self.lessons:
            if lesson.id == lesson_id:
                return lesson
        raise UnknownContent("err.content.no_lesson", id=lesson_id, known=[x.id for x in self.lessons] or "—")

    def question(self, lesson_id: str, question_id: str) -> Question:
        lesson = self.lesson(lesson_id)
        for q in lesson.quiz:
            if q.id == question_id:
                return q
        known = [q.id for q in lesson.quiz] or "—"
        raise UnknownContent("err.content.no_question", id=question_id, lesson=lesson_id, known=known)

    def exercise(self, exercise_id: str) -> Exercise:
        for ex in self.exercises():
            if ex.id == exercise_id:
                return ex
        raise UnknownContent(
            "err.content.no_exercise", id=exercise_id, known=[ex.id for ex in self.exercises()] or "—"
        )

    def exercises(self) -> list[Exercise]:
        return [ex for lesson in self.lessons for ex in lesson.exercises]


def load_course(lessons_dir: Path, experiments: experiment_check.Specs | None = None) -> Course:
    """Every lesson folder under `lessons_dir`. Experiment references are checked against
    `experiments` (name -> spec; `tutor.course.open_course` passes the registry's), or not at all."""
    lessons_dir = Path(lessons_dir)
    if not lessons_dir.is_dir():
        raise TutorError("err.content.no_folder", path=str(lessons_dir))
    if (lessons_dir / "lesson.toml").is_file():
        raise TutorError("err.content.one_lesson", path=str(lessons_dir), parent=str(lessons_dir.parent))
    course = Course(lessons_dir=lessons_dir)
    folders = sorted(p for p in lessons_dir.iterdir() if p.is_dir() and p.name[0] not in "._")
    manifest = read_manifest(lessons_dir, course.problems)
    if manifest is not None:
        course.problems += check_manifest(manifest, folders)
    loaded: LoadedLessons = []
    for folder in folders:
        problems: list[Problem] = []
        try:
            meta, lesson = _load_folder(folder, experiments, problems)
        except Exception as err:  # a loader bug must not take the other lessons down either
            problems.append(
                error(folder, Said("problem.lesson.bug", kind=type(err).__name__, detail=str(err)))
            )
            meta, lesson = None, None
        loaded.append((folder, lesson, meta, problems))
    if not loaded:
        course.problems.append(error(lessons_dir, Said("problem.lesson.none")))
    _check_across_lessons(loaded)
    for folder, lesson, _meta, problems in loaded:
        course.problems += problems
        if lesson is not None and not any(p.severity == "error" for p in problems):
            if manifest is not None:
                lesson = lesson.model_copy(
                    update={"exercises": manifest.ordered_exercises(folder, lesson.exercises)}
                )
            course.lessons.append(lesson)
        else:
            course.skipped.append(folder)
    if manifest is None:
        course.lessons.sort(key=lambda x: (x.order, x.id))
    else:
        course.lessons.sort(key=manifest.lesson_key)
        course.problems += check_orders(manifest, course.lessons)
    return course


def _load_folder(
    folder: Path, experiments: experiment_check.Specs | None, problems: list[Problem]
) -> tuple[LessonFile | None, Lesson | None]:
    meta, meta_text, meta_data = load_toml(folder / "lesson.toml", LessonFile, problems)
    if meta is not None:
        problems += missing_translations(meta_data, folder / "lesson.toml", meta_text, "lesson")
    for entry in sorted(folder.iterdir()):
        if entry.name not in KNOWN_ENTRIES and not entry.name.startswith("."):
            problems.append(
                warning(
                    entry,
                    Said("problem.lesson.stray_file"),
                )
            )
    sections = _sections(folder, problems)
    # None when en.md did not load: then section references cannot be checked (and en.md's error says why)
    section_ids = {s.id for s in sections} if sections else None
    problems += experiment_check.check_sections(sections, folder / "en.md", experiments)
    quiz = _quiz(folder / "quiz.toml", section_ids, problems)
    exercises = _exercises(folder / "exercises", section_ids, problems)
    if meta is None:
        return None, None
    lesson = Lesson(**dict(meta), sections=sections, quiz=quiz, exercises=exercises, folder=folder)
    return meta, lesson


def _sections(folder: Path, problems: list[Problem]) -> list[Section]:
    parsed: dict[str, tuple[Path, list[ProseSection]]] = {}
    for lang in LANGS:
        file = folder / f"{lang}.md"
        if lang != "en" and not file.exists():
            problems.append(warning(file, Said("problem.lesson.untranslated", lang=lang)))
            continue
        text = read_text(file, problems)
        if text is not None:
            found, file_problems = parse_language_file(text, file)
            problems += file_problems
            parsed[lang] = (file, found)
    if "en" not in parsed:
        return []
    en_file, en = parsed["en"]
    for lang, (file, other) in parsed.items():
        if lang != "en":
            problems += _compare_with_english(en, other, file)
    sections = []
    for index, s in enumerate(en):
        title: dict[Any, str] = {"en": s.title}  # Any: LANGS' codes, which Section validates as Lang
        body: dict[Any, str] = {"en": s.body}
        for lang, (file, other) in parsed.items():
            match = other[index] if index < len(other) and other[index].id == s.id else None
            if lang == "en" or match is None:
                continue
            if match.body.strip():
                title[lang], body[lang] = match.title or s.title, match.body
            else:
                problems.append(
                    warning(file, Said("problem.lesson.empty_translation"), f"section[{s.id}]", match.line)
                )
        if not s.body.strip():
            problems.append(
                error(en_file, Said("problem.lesson.empty_section"), field=f"section[{s.id}]", line=s.line)
            )
            continue
        sections.append(Section(id=s.id, title=title, body=body, experiments=s.experiments))
    return sections


def _compare_with_english(en: list[ProseSection], other: list[ProseSection], file: Path) -> list[Problem]:
    en_ids, ids = [s.id for s in en], [s.id for s in other]
    if en_ids != ids:
        missing = [i for i in en_ids if i not in ids]
        extra = [i for i in ids if i not in en_ids]
        if missing and extra:
            detail = Said("problem.lesson.ids_both", missing=missing, extra=extra)
        elif missing or extra:
            detail = (
                Said("problem.lesson.ids_missing", ids=missing)
                if missing
                else Said("problem.lesson.ids_extra", ids=extra)
            )
        else:
            detail = Said("problem.lesson.ids_order", ids=en_ids)
        return [error(file, Said("problem.lesson.ids", detail=detail), field="section")]
    problems = []
    for a, b in zip(en, other, strict=True):
        if a.broken_fence or b.broken_fence:
            continue  # the broken fence is reported already; comparing would only repeat it
        refs_en = [(r.name, r.params) for r in a.experiments]
        refs = [(r.name, r.params) for r in b.experiments]
        if refs_en != refs:
            problems.append(
                error(
                    file,
                    Said("problem.lesson.experiments", en=_refs(refs_en), here=_refs(refs)),
                    field=f"section[{b.id}]",
                    line=b.line,
                )
            )
    return problems


def _refs(refs: list[tuple[str, dict]]) -> str:
    return "[" + ", ".join(f"{n} {p}" if p else n for n, p in refs) + "]" if refs else "[]"


def _quiz(file: Path, section_ids: set[str] | None, problems: list[Problem]) -> list[Question]:
    if not file.exists():
        return []
    quiz, text, data = load_toml(file, QuizFile, problems)
    if quiz is None:
        return []
    problems += _question_checks(quiz.question, file, text, data, section_ids, ("question",))
    return quiz.question


def _question_checks(
    questions, file: Path, text: str, data: dict, section_ids: set[str] | None, at: tuple
) -> list[Problem]:
    """Duplicate ids, sections that do not exist, and missing translations, per question."""
    problems: list[Problem] = []
    raw = _dig(data, at) or []
    first: dict[str, int] = {}
    for i, q in enumerate(questions):
        loc = at + (i,)
        if q.id in first:
            problems.append(
                error(
                    file,
                    Said("problem.lesson.duplicate_question", n=first[q.id] + 1),
                    field=f"question[{q.id}]",
                    line=line_of(text, loc + ("id",)),
                )
            )
        first.setdefault(q.id, i)
        if q.section is not None and section_ids is not None and q.section not in section_ids:
            problems.append(
                _unknown_section(file, text, loc, f"question[{q.id}].section", q.section, section_ids)
            )
        item = raw[i] if i < len(raw) else {}
        problems += missing_translations(item, file, text, f"question[{q.id}]", loc)
    return problems


def _dig(data: dict | None, at: tuple):
    for part in at:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _unknown_section(
    file: Path, text: str, loc: tuple, field_name: str, ident: str, known: set[str]
) -> Problem:
    return error(
        file,
        Said("problem.lesson.no_section", id=ident, known=sorted(known or ()) or "—"),
        field=field_name,
        line=line_of(text, loc + ("section",)),
    )


def _exercises(folder: Path, section_ids: set[str] | None, problems: list[Problem]) -> list[Exercise]:
    if not folder.is_dir():
        return []
    exercises = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and p.name[0] not in "._"):
        file = sub / "exercise.toml"
        ex, text, data = load_toml(file, Exercise, problems, drop=("folder",))
        if ex is None:
            continue
        if ex.id != sub.name:
            problems.append(
                error(
                    file,
                    Said("problem.lesson.exercise_folder", id=ex.id, folder=sub.name),
                    field="id",
                    line=line_of(text, ("id",)),
                )
            )
        if ex.section is not None and section_ids is not None and ex.section not in section_ids:
            problems.append(_unknown_section(file, text, (), "section", ex.section, section_ids))
        problems += missing_translations(
            {k: v for k, v in data.items() if k != "predict"}, file, text, "exercise"
        )
        problems += _question_checks(ex.predict, file, text, data, section_ids, ("predict",))
        exercises.append(ex.model_copy(update={"folder": sub}))
    return exercises


LoadedLessons = list[tuple[Path, Lesson | None, LessonFile | None, list[Problem]]]


def _check_across_lessons(loaded: LoadedLessons) -> None:
    """Lesson ids and exercise ids unique across the course; prerequisites name real lessons, no cycles."""
    _check_unique(loaded)
    _check_prerequisites(loaded)


def _check_unique(loaded: LoadedLessons) -> None:
    """Each lesson id and exercise id once in the course; two lessons with one `order`, a warning."""
    ids: dict[str, Path] = {}
    orders: dict[int, Path] = {}
    exercise_ids: dict[str, Path] = {}
    for folder, lesson, meta, problems in loaded:
        if meta is None:
            continue
        file = folder / "lesson.toml"
        problems += _seen_before(ids, meta.id, folder, error, file, "id", "problem.lesson.duplicate_lesson")
        problems += _seen_before(
            orders, meta.order, folder, warning, file, "order", "problem.lesson.same_order"
        )
        for ex in lesson.exercises if lesson else []:
            ex_file = folder / "exercises" / ex.id / "exercise.toml"
            problems += _seen_before(
                exercise_ids, ex.id, folder, error, ex_file, "id", "problem.lesson.duplicate_exercise"
            )


def _seen_before(
    first: dict, value: object, folder: Path, kind: Callable[..., Problem], file: Path, key: str, said: str
) -> list[Problem]:
    """A problem (`kind`: error or warning) at `file`'s `key` if `value` was met before, naming the
    folder it was first met in; else none, and `value` is noted as met in `folder`."""
    if value not in first:
        first[value] = folder
        return []
    return [kind(file, Said(said, folder=first[value].name), key, _key_line(file, key))]


def _check_prerequisites(loaded: LoadedLessons) -> None:
    """Every prerequisite names a lesson of the course, and none leads back to its lesson."""
    prereqs = {meta.id: meta.prerequisites for _, _, meta, _ in loaded if meta is not None}
    for folder, _lesson, meta, problems in loaded:
        if meta is None:
            continue
        file = folder / "lesson.toml"
        line = _key_line(file, "prerequisites") if meta.prerequisites else None
        for p in meta.prerequisites:
            if p not in prereqs:
                said = Said("problem.lesson.no_prerequisite", id=p, known=sorted(prereqs))
                problems.append(error(file, said, "prerequisites", line))
        if _in_cycle(meta.id, prereqs):
            problems.append(error(file, Said("problem.lesson.cycle"), "prerequisites", line))


def _key_line(file: Path, key: str) -> int | None:
    """Line of a top-level key, for checks made after the file was parsed (the file read again: rare path)."""
    try:
        return line_of(file.read_text(encoding="utf-8"), (key,))
    except (OSError, UnicodeDecodeError):
        return None


def _in_cycle(start: str, prereqs: dict[str, list[str]]) -> bool:
    stack, seen = list(prereqs.get(start, [])), set()
    while stack:
        node = stack.pop()
        if node == start:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(prereqs.get(node, []))
    return False
