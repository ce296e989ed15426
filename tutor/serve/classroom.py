"""A served class as its instructor sees it (`python -m tutor class DIR`): who is in it, where each
learner stands, and their exercise files graded as one batch per exercise.

    members = read_class(folder)                              # class.json, checked whole
    standing = read_standing(folder, member, lessons, now)    # one learner's progress, read-only
    graded = grade_class(folder, members, exercises, jobs=2)  # [(exercise, a batch row per file)]

A learner's store is read as home reads it (tutor.progress.glance): read-only, with the standard
library, never migrated, moved aside or locked for longer than a query; a learner's app may be
writing to it meanwhile. A learner who has not opened their link yet has no folder: they stand at
zero. A store or folder that is a link, or a file that is not this tutor's store, is "unreadable",
with the reason; the other learners are read all the same.

Everything under `learners/` was written by learners' sessions and is hostile input: an id from
class.json is held to the roster's alphabet (tutor.serve.roster.ID_PATTERN) before it names a path,
and a workspace file is reached one folder at a time with O_NOFOLLOW (a link anywhere on the way is
an error row, never followed), then read as `grade --batch` reads a file (regular, size-capped).
Batch grades are not recorded in anyone's store.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import stat
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from tutor.errors import TutorError
from tutor.i18n import LANGS
from tutor.serve.roster import CLASS_FILE, ID_PATTERN, LEARNERS_FOLDER

if TYPE_CHECKING:
    from tutor.content.schema import Exercise, Lesson
    from tutor.grading.instructor.batch import BatchRow

MAX_CLASS_BYTES = 16 * 2**20  # class.json: a roster of thousands is well under this


@dataclass(frozen=True)
class Member:
    """A learner of class.json. The id is held to the roster's alphabet, so it names a single folder
    in `learners/` and nothing else (read_class says which learner's is not)."""

    id: str
    name: str
    lang: str

    def __post_init__(self) -> None:
        if not ID_PATTERN.fullmatch(self.id):
            raise ValueError(f"not a learner id: {self.id[:80]!r}")

    def home(self, folder: Path) -> Path:
        return folder / LEARNERS_FOLDER / self.id


def read_class(folder: Path) -> list[Member]:
    """The learners of `folder/class.json`, checked whole: the first problem stops it (a TutorError
    naming the file and the learner's place in it)."""
    path = folder / CLASS_FILE
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CLASS_BYTES + 1)
    except FileNotFoundError:
        raise TutorError("err.class.missing", path=str(path), folder=str(folder)) from None
    except OSError as err:
        raise TutorError("err.class.unreadable", path=str(path), error=str(err.strerror or err)) from None
    if len(raw) > MAX_CLASS_BYTES:
        raise TutorError("err.class.shape", path=str(path))
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TutorError("err.class.not_json", path=str(path), error=str(err)) from None
    entries = data.get("learners") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise TutorError("err.class.shape", path=str(path))
    members: list[Member] = []
    first: dict[str, int] = {}
    for n, entry in enumerate(entries, 1):
        values = [entry.get(k) for k in ("id", "name", "language")] if isinstance(entry, dict) else []
        if len(values) != 3 or not all(isinstance(v, str) for v in values):
            raise TutorError("err.class.entry", path=str(path), n=n)
        learner_id, name, lang = cast(list[str], values)  # three strings, checked above
        if not ID_PATTERN.fullmatch(learner_id):
            raise TutorError("err.class.id", path=str(path), n=n, id=_shown(learner_id[:80]))
        if lang not in LANGS:
            raise TutorError(
                "err.class.lang", path=str(path), n=n, got=_shown(lang[:20]), langs=", ".join(LANGS)
            )
        if learner_id.lower() in first:
            raise TutorError(
                "err.class.twice", path=str(path), n=n, id=learner_id, first=first[learner_id.lower()]
            )
        first[learner_id.lower()] = n
        members.append(Member(learner_id, name, lang))
    return members


def _shown(text: str) -> str:
    from tutor.grading.instructor.batch import shown_name

    return shown_name(text)


# --- where a learner stands ---------------------------------------------------------------------


@dataclass(frozen=True)
class LessonStanding:
    id: str
    sections_read: int
    sections_total: int
    questions: int
    answered: int
    correct: int
    due: int


@dataclass(frozen=True)
class BestGrade:
    """A learner's best recorded grade of one exercise: the highest score (a pass before a fail of
    the same score, then the latest), and how many grades were recorded."""

    status: str
    score: float
    max_score: float
    attempts: int
    passed: bool  # a pass was recorded (the best grade is then a pass too)


@dataclass
class LearnerStanding:
    member: Member
    home: Path
    state: str = "ok"  # ok | new (no folder yet: zeros) | unreadable (see problem)
    problem: TutorError | None = None
    lessons: list[LessonStanding] = field(default_factory=list)
    grades: dict[str, BestGrade] = field(default_factory=dict)  # by exercise id; absent: never graded


def read_standing(
    folder: Path, member: Member, lessons: list[Lesson], now: datetime, before: datetime | None = None
) -> LearnerStanding:
    """`member`'s progress in `lessons`, read-only; zeros when they have no folder or no store yet. With
    `before`, each exercise's best grade is the best recorded before that time."""
    from tutor.progress.glance import Glance, read_glance
    from tutor.progress.schema import FILE_NAME

    home = member.home(folder)
    standing = LearnerStanding(member, home)
    glance: Glance | None = Glance()
    grades: dict[str, BestGrade] | None = {}
    try:
        kind = _kind(home)
        if kind is None:
            standing.state = "new"
        elif kind != "folder":
            raise TutorError(
                "class.reason.link" if kind == "link" else "class.reason.not_folder", path=str(home)
            )
        elif (store_kind := _kind(home / FILE_NAME)) not in (None, "file"):
            reason = "class.reason.link" if store_kind == "link" else "class.reason.not_file"
            raise TutorError(reason, path=str(home / FILE_NAME))
        elif store_kind == "file":
            glance, grades = read_glance(home), _best_grades(home / FILE_NAME, before)
            if glance is None or grades is None:
                raise TutorError("class.reason.store", path=str(home / FILE_NAME))
    except TutorError as err:
        standing.state, standing.problem = "unreadable", err
        return standing
    standing.lessons = _lesson_standings(glance, lessons, now)
    assert grades is not None  # read, or refused above
    standing.grades = grades
    return standing


def _kind(path: Path) -> str | None:
    """What `path` is, without following a link: "folder", "file", "link", "other", or None when absent."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return "other"
    kinds = ((stat.S_ISDIR, "folder"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "link"))
    return next((kind for test, kind in kinds if test(mode)), "other")


def _lesson_standings(glance, lessons: list[Lesson], now: datetime) -> list[LessonStanding]:
    from tutor.progress.quiz_status import quiz_counts

    counts = quiz_counts(glance, lessons, now)
    read = {(r.lesson, r.section) for r in glance.reads}
    return [
        LessonStanding(
            id=lesson.id,
            sections_read=sum((lesson.id, s.id) in read for s in lesson.sections),
            sections_total=len(lesson.sections),
            questions=counts[lesson.id].questions,
            answered=counts[lesson.id].answered,
            correct=counts[lesson.id].correct,
            due=counts[lesson.id].due,
        )
        for lesson in lessons
    ]


def _when(at: str) -> datetime:
    """A stored time (ISO 8601 with a zone); one that cannot be read counts as after any --before."""
    try:
        when = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return datetime.max.replace(tzinfo=UTC)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _best_grades(path: Path, before: datetime | None = None) -> dict[str, BestGrade] | None:
    """Each exercise's best recorded grade, read-only; None when the file is not a store this tutor
    reads (or it stayed busy past a second)."""
    from tutor.progress.glance import open_read_only
    from tutor.progress.schema import SUBMISSIONS as G

    if (conn := open_read_only(path)) is None:
        return None
    try:
        rows = conn.execute(
            f"SELECT {G.exercise}, {G.status}, {G.score}, {G.max_score}, {G.at} FROM {G} ORDER BY {G.at}, {G.id}"
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    best: dict[str, BestGrade] = {}
    for exercise, status, score, max_score, at in rows:  # oldest first: a later tie wins
        if before is not None and _when(at) >= before:
            continue
        seen = best.get(exercise)
        attempts = seen.attempts + 1 if seen else 1
        passed = (seen is not None and seen.passed) or status == "pass"
        if seen is None or (score, status == "pass") >= (seen.score, seen.status == "pass"):
            best[exercise] = BestGrade(status, float(score), float(max_score), attempts, passed)
        else:
            best[exercise] = BestGrade(seen.status, seen.score, seen.max_score, attempts, passed)
    return best


# --- grading the class's files ------------------------------------------------------------------


def file_name(member: Member, ex: Exercise) -> str:
    """A learner's file as reports show it: `ID/FILE` (an id has no "/" nor anything to escape)."""
    return f"{member.id}/{ex.file_name}"


def grade_class(
    folder: Path,
    members: list[Member],
    exercises: list[Exercise],
    *,
    lang: str = "en",
    jobs: int = 1,
    on_exercise: Callable[[Exercise], None] | None = None,
) -> list[tuple[Exercise, list[BatchRow]]]:
    """Every learner's current workspace file of each exercise graded, one batch per exercise
    (tutor.grading.runner's grade_many: a judge and a box per file, `jobs` at once, all forked from
    one warm judge, started only if there is a file to grade). Each exercise's rows: one per learner
    who has the file, in class order; a file that cannot be graded (a link, not a regular file, too
    large, not UTF-8) is an error row saying why. The files are all read first, then graded (a row's
    sha256 is of the bytes graded). `on_exercise(ex)` is called as an exercise's grading starts.
    Nothing is recorded in a learner's store."""
    from tutor.grading.judges import WarmJudge
    from tutor.grading.runner import grade_many

    batches = _read_all(folder, members, exercises, lang)
    with WarmJudge() if any(todo for _, _, todo in batches) else nullcontext() as warm:
        for ex, _, todo in batches:
            if on_exercise is not None:
                on_exercise(ex)
            if not todo:
                continue
            files = [(text, row.file) for row, text in todo]
            results = grade_many(ex, files, lang=lang, warm=warm, jobs=jobs)
            for (row, _), result in zip(todo, results, strict=True):
                row.result = result
    return [(ex, rows) for ex, rows, _ in batches]


def _read_all(
    folder: Path, members: list[Member], exercises: list[Exercise], lang: str
) -> list[tuple[Exercise, list[BatchRow], list[tuple[BatchRow, str]]]]:
    """Per exercise: its rows, and the rows to grade with their text (see _read_files)."""
    try:
        learners = os.open(folder / LEARNERS_FOLDER, _FOLDER)  # the server's folder: the instructor's own
    except FileNotFoundError:
        return [(ex, [], []) for ex in exercises]  # nobody has opened their link yet
    except OSError as err:
        raise TutorError(
            "err.class.unreadable", path=str(folder / LEARNERS_FOLDER), error=str(err.strerror or err)
        ) from None
    try:
        return [(ex, *_read_files(learners, members, ex, lang)) for ex in exercises]
    finally:
        os.close(learners)


def _read_files(
    learners: int, members: list[Member], ex: Exercise, lang: str
) -> tuple[list[BatchRow], list[tuple[BatchRow, str]]]:
    """A row for each learner with a workspace file of `ex` (an error row when it cannot be graded),
    and the rows to grade with their text."""
    from tutor.grading.instructor.batch import BatchRow
    from tutor.grading.runner import error_result

    rows: list[BatchRow] = []
    todo: list[tuple[BatchRow, str]] = []
    for member in members:
        found = _read_workspace_file(learners, member, ex, lang)
        if found is None:
            continue  # not started
        sha, text, error = found
        row = BatchRow(file_name(member, ex), sha, error_result(ex, error or "", lang))
        rows.append(row)
        if error is None:
            todo.append((row, text))
    return rows, todo


def _read_workspace_file(
    learners: int, member: Member, ex: Exercise, lang: str
) -> tuple[str | None, str, str | None] | None:
    """(sha256, text, None) of `member`'s workspace file of `ex`, (sha256 or None, "", why) when it
    cannot be graded (the sha256 of its bytes where they were read), None when there is none. Reached
    from the open folder `learners` one name at a time, never through a link: a link, a hard link, or a
    file where a folder should be, is refused, naming it."""
    from tutor.grading.safe_read import Refused, read_entry
    from tutor.texts import say

    fds: list[int] = [learners]
    where = ""  # the entry reached so far, as the learner's folder names it: ID/workspace/...
    try:
        for name in (member.id, "workspace", ex.id):
            where = f"{where}/{name}".lstrip("/")
            fds.append(_open_folder(fds[-1], name, where, lang))
        where = f"{where}/{ex.file_name}"
        os.stat(ex.file_name, dir_fd=fds[-1], follow_symlinks=False)  # absent: not started
        source = read_entry(fds[-1], ex.file_name, where, lang=lang)
        sha = hashlib.sha256(source).hexdigest()
        return sha, source.decode("utf-8").removeprefix("\ufeff"), None
    except FileNotFoundError:
        return None
    except OSError as err:
        return None, "", say("grade.file.unreadable", lang, path=where, error=str(err.strerror or err))
    except Refused as err:
        return err.sha256, "", err.in_lang(lang)
    except TutorError as err:
        return None, "", err.in_lang(lang)
    except UnicodeDecodeError as err:
        return sha, "", say("grade.file.not_utf8", lang, name=where, byte=str(err.start))
    finally:
        for fd in fds[1:]:
            os.close(fd)


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def _open_folder(parent: int, name: str, where: str, lang: str) -> int:
    """The folder `name` in the open folder `parent`, never through a link. Absent: FileNotFoundError;
    a link or anything but a folder: a TutorError naming it as `where`."""
    from tutor.texts import say

    try:
        return os.open(name, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
    except FileNotFoundError:
        raise
    except OSError as err:  # a link gives ELOOP or ENOTDIR (with O_DIRECTORY), EMLINK on the BSDs
        try:
            link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            link = False
        if link:
            raise TutorError(say("grade.file.link", lang, path=where)) from None
        if err.errno == errno.ENOTDIR:
            raise TutorError(say("class.reason.not_folder", lang, path=where)) from None
        raise
