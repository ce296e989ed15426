"""Who the students of a batch are: a roster (`--roster CSV`), read whole before anything is graded,
and each file's student, one gradebook row each.

Three rosters are read, told apart by their header:

    the tutor's own   file,student_id[,name]: a line per file; a student may have several lines (files)
    Canvas            the gradebook's export (Grades > Export): Student, ID, SIS User ID, SIS Login ID,
                      Section, …; its "Points Possible" line is skipped. A file is the student's whose
                      Canvas ID its name carries (tutor.grading.instructor.lms)
    Moodle            the grading worksheet (Assignment > Download grading worksheet): Identifier
                      ("Participant 101"), Full name, Email address, …; a file is the participant's whose
                      number its folder or name carries

A malformed file, a file named twice, a student twice in an LMS's export, or a student id that is not
a safe file name (empty, "." or "..", a path separator, a control or invisible character, over 200
bytes) stops with a message naming the line.

Without a roster, a file's student is the one its LMS name gives (tutor.grading.instructor.lms), else the file's
name without ".py" (in a folder per student, that folder's). `assign` gives every student one row:
the student's file (of several, the latest or the best: `pick`), or none ("missing") for a rostered
student without one; files no roster names keep their own student, flagged.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tutor.errors import TutorError
from tutor.grading.instructor.batch import BatchRow, shown_name
from tutor.grading.instructor.lms import lms_name
from tutor.grading.safe_read import read_instructor_file
from tutor.texts import say

ROSTER_COLUMNS = ("file", "student_id", "name")
MAX_ID_BYTES = 200  # "<id>.md" and the temporary name beside it stay under a file name's 255 bytes
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Identifier", "Full name", "Email address")
PICKS = ("latest", "best")


@dataclass(frozen=True)
class Student:
    id: str
    name: str = ""
    in_roster: bool | None = None  # None: no roster was given
    lms: tuple[tuple[str, str], ...] = ()  # the LMS roster's own cells (Canvas's SIS User ID, …)


@dataclass
class Roster:
    kind: str  # "tutor" | "canvas" | "moodle"
    students: list[Student] = field(default_factory=list)  # in the roster's order
    files: dict[str, Student] = field(default_factory=dict)  # the tutor's: file as shown -> student
    users: dict[str, Student] = field(default_factory=dict)  # an LMS's: its user id -> student

    @classmethod
    def of_files(cls, files: dict[str, Student]) -> Roster:
        return cls("tutor", list(dict.fromkeys(files.values())), dict(files))

    def student_of(self, file: str) -> Student | None:
        if self.kind == "tutor":
            return self.files.get(file)
        found = lms_name(file)
        return self.users.get(found.user) if found is not None and found.lms == self.kind else None


@dataclass
class Graded:
    student: Student
    row: BatchRow | None  # None: the student has no file ("missing")
    files: int  # how many files the student has


def id_problem(student_id: str) -> str | None:
    """Why `student_id` cannot name a feedback file (a catalogue key), or None when it can."""
    if not student_id.strip():
        return "empty"
    if student_id in (".", ".."):
        return "dots"
    if "/" in student_id or "\\" in student_id:
        return "separator"
    if shown_name(student_id) != student_id:  # controls, bidi and zero-width characters, lone surrogates
        return "hidden"
    if len(student_id.encode("utf-8")) > MAX_ID_BYTES:
        return "long"
    return None


def read_roster(path: Path, lang: str) -> Roster:
    """A roster CSV of any of the three kinds, checked whole (see the module doc)."""
    shown = shown_name(str(path))
    text = read_instructor_file(path, shown, lang, encoding="utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, skipinitialspace=True)
    try:
        header = next(reader, None)
        columns = [c.strip() for c in header or []]
        if len(set(columns)) == len(columns):
            if "file" in columns and "student_id" in columns:
                return _tutor_roster(reader, columns, shown, lang)
            if "Student" in columns and "ID" in columns:
                return _lms_roster("canvas", reader, columns, shown, lang)
            if "Identifier" in columns and "Full name" in columns:
                return _lms_roster("moodle", reader, columns, shown, lang)
        raise TutorError(say("grade.roster.header", lang, file=shown, got=shown_name(",".join(columns))))
    except csv.Error as err:
        raise TutorError(
            say("grade.roster.csv", lang, file=shown, line=reader.line_num, error=str(err))
        ) from None


def _lines(reader, columns: list[str], shown: str, lang: str):
    """(line number, {column: cell}) of every line that is not blank."""
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(columns):
            raise TutorError(say("grade.roster.cells", lang, file=shown, line=reader.line_num, n=len(columns),
                                 got=len(cells)))  # fmt: skip
        yield reader.line_num, dict(zip(columns, cells, strict=True))


def _checked_id(sid: str, line: int, shown: str, lang: str) -> str:
    if (problem := id_problem(sid)) is not None:
        reason = say(f"grade.roster.id.{problem}", lang, n=MAX_ID_BYTES)
        raise TutorError(say("grade.roster.bad_id", lang, file=shown, line=line, id=shown_name(sid),
                             reason=reason))  # fmt: skip
    return sid


def _tutor_roster(reader, columns: list[str], shown: str, lang: str) -> Roster:
    roster = Roster("tutor")
    lines: dict[str, int] = {}  # file -> the line that named it
    people: dict[str, Student] = {}
    for line, cell in _lines(reader, columns, shown, lang):
        file, sid = cell["file"], _checked_id(cell["student_id"], line, shown, lang)
        if not file:
            raise TutorError(say("grade.roster.no_file", lang, file=shown, line=line))
        if file in lines:
            raise TutorError(say("grade.roster.twice", lang, file=shown, line=line, what=shown_name(file),
                                 first=lines[file]))  # fmt: skip
        lines[file] = line
        name = shown_name(cell.get("name", ""))  # shown as every name is
        student = people.setdefault(sid, Student(sid, name, True))
        roster.files[file] = student
    roster.students = list(people.values())
    return roster


def _lms_roster(kind: str, reader, columns: list[str], shown: str, lang: str) -> Roster:
    roster = Roster(kind)
    lines: dict[str, int] = {}  # user id -> the line that named them
    keep = CANVAS_COLUMNS if kind == "canvas" else columns  # the worksheet's cells, copied to moodle.csv
    for line, cell in _lines(reader, columns, shown, lang):
        if kind == "canvas":
            if cell["Student"].strip() == "Points Possible" or not cell["ID"].strip():
                continue  # the line of the assignments' points, or a column's note
            user, name = cell["ID"].strip(), cell["Student"]
        else:
            found = re.search(r"(\d+)\s*$", cell["Identifier"])
            if found is None:
                raise TutorError(say("grade.roster.identifier", lang, file=shown, line=line,
                                     got=shown_name(cell["Identifier"])))  # fmt: skip
            user, name = found[1], cell["Full name"]
        _checked_id(user, line, shown, lang)
        if user in lines:
            raise TutorError(say("grade.roster.twice", lang, file=shown, line=line, what=shown_name(user),
                                 first=lines[user]))  # fmt: skip
        lines[user] = line
        extra = tuple((key, shown_name(cell.get(key, ""))) for key in keep)
        student = Student(user, shown_name(name), True, extra)
        roster.users[user] = student
        roster.students.append(student)
    return roster


def file_id(file: str) -> str:
    """A student id from a file name as a report shows it: the name without ".py", or in a folder per
    student (Moodle's), that folder's name; a zip's own name does not count."""
    parts = file.split("/")
    while len(parts) > 1 and parts[0].lower().endswith(".zip"):
        parts = parts[1:]
    stem = parts[0] if len(parts) > 1 else PurePosixPath(parts[0]).stem
    return stem if stem not in ("", ".", "..") else file.replace("/", "_")


def own_student(file: str, rostered: bool) -> Student:
    """The student of a file no roster names: the one its LMS name gives, else one named after it."""
    found = lms_name(file)
    in_roster = False if rostered else None
    if found is not None:
        return Student(found.user, shown_name(found.name), in_roster)
    return Student(file_id(file), "", in_roster)


def assign(rows: list[BatchRow], roster: Roster | None, pick: str = "latest") -> tuple[list[Graded], dict]:
    """One Graded per student, in the order of their first file, then the rostered students without a
    file; and what was found on the way: {"unrostered": [file], "missing": [student id], "several": n}."""
    groups: dict[Student, list[BatchRow]] = {}
    unrostered = []
    for row in rows:
        student = roster.student_of(row.file) if roster is not None else None
        if student is None:
            student = own_student(row.file, roster is not None)
            if roster is not None:
                unrostered.append(row.file)
        groups.setdefault(student, []).append(row)
    graded = [Graded(student, picked(files, pick), len(files)) for student, files in groups.items()]
    missing = [s for s in (roster.students if roster is not None else []) if s not in groups]
    graded += [Graded(student, None, 0) for student in missing]
    found = {"unrostered": unrostered, "missing": [s.id for s in missing],
             "several": sum(len(files) > 1 for files in groups.values())}  # fmt: skip
    return graded, found


def _latest(row: BatchRow) -> tuple:
    found = lms_name(row.file)
    return (
        row.submitted if row.submitted is not None else float("-inf"),
        found.order if found else (),
        row.file,
    )


def picked(rows: list[BatchRow], pick: str) -> BatchRow:
    if pick == "best":
        return max(rows, key=lambda row: (row.result.score, _latest(row)))
    return max(rows, key=_latest)


def roster_warnings(found: dict, pick: str, lang: str) -> list[str]:
    warnings = []
    if found["unrostered"]:
        warnings.append(say("grade.roster.not_on", lang, n=len(found["unrostered"]),
                            first=found["unrostered"][0]))  # fmt: skip
    if found["missing"]:
        warnings.append(say("grade.roster.missing", lang, n=len(found["missing"]), first=found["missing"][0]))
    if found["several"]:
        warnings.append(say(f"grade.roster.several_{pick}", lang, n=found["several"]))
    return warnings
