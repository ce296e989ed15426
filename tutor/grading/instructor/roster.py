"""Who the students of a batch are: a roster (`--roster CSV`), read whole before anything is graded,
and each file's student, one gradebook row each.

Three rosters are read, told apart by their header:

    the tutor's own   file,student_id[,name]: a line per file; a student may have several lines (files)
    Canvas            the gradebook's export (Grades > Export): Student, ID, SIS User ID, SIS Login ID,
                      Section, …; its "Points Possible" line is skipped. A file is the student's whose
                      Canvas ID the top of the download carries (tutor.grading.instructor.provenance)
    Moodle            the grading worksheet (Assignment > Download grading worksheet): Identifier
                      ("Participant 101"), Full name, Email address, …; a file is the participant's whose
                      number its folder or name carries

A malformed file, a file named twice, a student listed twice (the tutor's: one student_id under two
names; Canvas's: one ID, SIS User ID or SIS Login ID on two lines; Moodle's: one participant or one
email address on two lines), or a student id that is not a safe file name (empty, "." or "..", a
path separator, a control or invisible character, over 200 bytes) stops with a message naming both
lines. A Moodle worksheet's "Last modified (submission)" is each participant's submission time
(`Roster.times`; Moodle's English "Monday, 4 May 2026, 11:59 PM" or ISO 8601, a time without a zone
the machine's; "-" none; any other is warned of and gives no time).

Without a roster, or for a file the roster does not name, a file's student is the one the top of the
download gives (tutor.grading.instructor.provenance: an LMS's layout, a folder's or a file's own
name). `assign` gives every student one row: the student's file (of several, provenance.pick_file),
or none ("missing") for a rostered student without one; files no roster names keep their own
student, flagged.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tutor.errors import TutorError
from tutor.grading.instructor.batch import BatchRow, shown_name
from tutor.grading.instructor.provenance import layouts, owned, owner_of, pick_file
from tutor.grading.safe_read import read_instructor_file
from tutor.texts import say

ROSTER_COLUMNS = ("file", "student_id", "name")
MAX_ID_BYTES = 200  # "<id>.md" and the temporary name beside it stay under a file name's 255 bytes
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Identifier", "Full name", "Email address")
PICKS = ("latest", "best")
UNIQUE = {"canvas": ("SIS User ID", "SIS Login ID"), "moodle": ("Email address",)}  # one student's, each
SUBMITTED = "Last modified (submission)"  # Moodle's worksheet: when the participant handed in


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
    times: dict[str, float] = field(default_factory=dict)  # Moodle's worksheet: user id -> submitted
    unread_times: list[tuple[int, str]] = field(default_factory=list)  # (line, cell) not read as a time

    @classmethod
    def of_files(cls, files: dict[str, Student]) -> Roster:
        return cls("tutor", list(dict.fromkeys(files.values())), dict(files))

    def student_of(self, file: str) -> Student | None:
        if self.kind == "tutor":
            return self.files.get(file)
        found = owner_of(file, layouts(self))
        return self.users.get(found.id) if found.source == self.kind else None


@dataclass
class Graded:
    student: Student
    row: BatchRow | None  # None: the student has no file ("missing")
    files: int  # how many files the student has
    because: str = ""  # why `row` is the one (provenance.pick_file), "" without a file
    owner_from: str = ""  # where `row`'s owner came from (provenance.owned), "" without a file


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
            raise TutorError(
                say(
                    "grade.roster.cells",
                    lang,
                    file=shown,
                    line=reader.line_num,
                    n=len(columns),
                    got=len(cells),
                )
            )
        yield reader.line_num, dict(zip(columns, cells, strict=True))


def _checked_id(sid: str, line: int, shown: str, lang: str) -> str:
    if (problem := id_problem(sid)) is not None:
        reason = say(f"grade.roster.id.{problem}", lang, n=MAX_ID_BYTES)
        raise TutorError(
            say("grade.roster.bad_id", lang, file=shown, line=line, id=shown_name(sid), reason=reason)
        )
    return sid


def _first_time(lines: dict[str, int], key: str, line: int, shown: str, lang: str) -> None:
    """Note that `line` names `key`; refused, naming both lines, when an earlier line named it too."""
    if key in lines:
        raise TutorError(
            say("grade.roster.twice", lang, file=shown, line=line, what=shown_name(key), first=lines[key])
        )
    lines[key] = line


def _tutor_roster(reader, columns: list[str], shown: str, lang: str) -> Roster:
    roster = Roster("tutor")
    lines: dict[str, int] = {}  # file -> the line that named it
    people: dict[str, Student] = {}
    named: dict[str, int] = {}  # student id -> its first line
    for line, cell in _lines(reader, columns, shown, lang):
        file, sid = cell["file"], _checked_id(cell["student_id"], line, shown, lang)
        if not file:
            raise TutorError(say("grade.roster.no_file", lang, file=shown, line=line))
        _first_time(lines, file, line, shown, lang)
        name = shown_name(cell.get("name", ""))  # shown as every name is
        student = people.setdefault(sid, Student(sid, name, True))
        if name and student.name and name != student.name:
            raise TutorError(
                say(
                    "grade.provenance.two_names",
                    lang,
                    file=shown,
                    line=line,
                    id=shown_name(sid),
                    name=name,
                    first=named[sid],
                    other=student.name,
                )
            )
        named.setdefault(sid, line)
        roster.files[file] = student
    roster.students = list(people.values())
    return roster


def _lms_roster(kind: str, reader, columns: list[str], shown: str, lang: str) -> Roster:
    roster = Roster(kind)
    lines: dict[str, int] = {}  # user id -> the line that named them
    seen: dict[tuple[str, str], int] = {}  # (column, value) -> the line that had it
    keep = CANVAS_COLUMNS if kind == "canvas" else columns  # the worksheet's cells, copied to moodle.csv
    for line, cell in _lines(reader, columns, shown, lang):
        if kind == "canvas":
            if cell["Student"].strip() == "Points Possible" or not cell["ID"].strip():
                continue  # the line of the assignments' points, or a column's note
            user, name = cell["ID"].strip(), cell["Student"]
        else:
            found = re.search(r"(\d+)\s*$", cell["Identifier"])
            if found is None:
                raise TutorError(
                    say(
                        "grade.roster.identifier",
                        lang,
                        file=shown,
                        line=line,
                        got=shown_name(cell["Identifier"]),
                    )
                )
            user, name = found[1], cell["Full name"]
        _checked_id(user, line, shown, lang)
        _first_time(lines, user, line, shown, lang)
        for column in UNIQUE[kind]:
            value = cell.get(column, "").strip()
            if value and (column, value.casefold()) in seen:
                raise TutorError(
                    say(
                        "grade.provenance.twice",
                        lang,
                        file=shown,
                        line=line,
                        column=column,
                        value=shown_name(value),
                        first=seen[(column, value.casefold())],
                    )
                )
            seen.setdefault((column, value.casefold()), line)
        if kind == "moodle" and SUBMITTED in cell:
            _read_time(roster, user, line, cell[SUBMITTED].strip())
        extra = tuple((key, shown_name(cell.get(key, ""))) for key in keep)
        student = Student(user, shown_name(name), True, extra)
        roster.users[user] = student
        roster.students.append(student)
    return roster


def _read_time(roster: Roster, user: str, line: int, cell: str) -> None:
    """A worksheet's "Last modified (submission)" into roster.times (the module doc's forms)."""
    from tutor.grading.instructor.deadlines import parse_when

    if cell in ("", "-"):
        return
    for form in ("%A, %d %B %Y, %I:%M %p", "%d %B %Y, %I:%M %p"):
        try:
            roster.times[user] = datetime.strptime(cell, form).astimezone().timestamp()
            return
        except ValueError:
            continue
    try:
        roster.times[user] = parse_when(cell, SUBMITTED, "en").timestamp()
    except TutorError:
        roster.unread_times.append((line, cell))


def own_student(file: str, rostered: bool, roster: Roster | None = None) -> Student:
    """The student of a file no roster names: the one the top of the download gives
    (provenance.owner_of)."""
    found = owner_of(file, layouts(roster))
    return Student(found.id, shown_name(found.name), False if rostered else None)


def whose(file: str, roster: Roster | None) -> tuple[Student, str]:
    """(the student of `file`, where that came from: provenance.owned)."""
    student = roster.student_of(file) if roster is not None else None
    return student or own_student(file, roster is not None, roster), owned(file, roster)[1]


def assign(
    rows: list[BatchRow], roster: Roster | None, pick: str, file_name: str
) -> tuple[list[Graded], dict]:
    """One Graded per student, in the order of their first file, then the rostered students without a
    file; and what was found on the way: {"unrostered": [file], "missing": [student id], "several": n}.
    `file_name`: the exercise's (provenance.pick_file)."""
    groups: dict[Student, list[BatchRow]] = {}
    unrostered = []
    for row in rows:
        student, _ = whose(row.file, roster)
        if roster is not None and student.in_roster is False:
            unrostered.append(row.file)
        groups.setdefault(student, []).append(row)
    graded = [Graded(student, *_picked(files, pick, file_name, roster)) for student, files in groups.items()]
    missing = [s for s in (roster.students if roster is not None else []) if s not in groups]
    graded += [Graded(student, None, 0) for student in missing]
    found = {
        "unrostered": unrostered,
        "missing": [s.id for s in missing],
        "several": sum(len(files) > 1 for files in groups.values()),
    }
    return graded, found


def _picked(files: list[BatchRow], pick: str, file_name: str, roster: Roster | None) -> tuple:
    row, because = pick_file(files, pick, file_name, roster)
    return row, len(files), because, owned(row.file, roster)[1]


def roster_warnings(found: dict, pick: str, lang: str) -> list[str]:
    warnings = []
    if found["unrostered"]:
        warnings.append(
            say("grade.roster.not_on", lang, n=len(found["unrostered"]), first=found["unrostered"][0])
        )
    if found["missing"]:
        warnings.append(say("grade.roster.missing", lang, n=len(found["missing"]), first=found["missing"][0]))
    if found["several"]:
        warnings.append(say(f"grade.roster.several_{pick}", lang, n=found["several"]))
    return warnings
