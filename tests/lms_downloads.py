"""Downloads shaped as each LMS makes them, for the provenance tests (tests/test_grading_provenance.py).

    Canvas      "Download Submissions" (canvas-lms lib/content_zipper.rb): one zip of flat entries
                `<sortable name squashed>[_LATE]_<user id>_<attachment id>_<file's own name>`, a student's
                own zip among them named the same way; every entry's date is the download's time.
                The gradebook export (Grades > Export): Student, ID, SIS User ID, SIS Login ID, Section, …
    Moodle      "Download all submissions" with "Download submissions in folders": a folder per student
                `<Full name>_<participant>_assignsubmission_file_/`; the grading worksheet: Identifier,
                Full name, Email address, Status, Grade, Maximum Grade, Grade can be changed, Last
                modified (submission), Last modified (grade), Feedback comments (mod/assign's
                gradingtable: times as userdate's English "Monday, 4 May 2026, 11:00 PM", "-" for none)
    Blackboard  "Download Assignment" (Grade Center): flat entries
                `<Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file's own name>` beside each
                attempt's `<Assignment>_<username>_attempt_<…>.txt`

Every file of a download gets one time, the download's (`DOWNLOADED`), as Canvas and Moodle stamp them.
"""

from __future__ import annotations

import io
import os
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import ROOT

EXERCISE = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads"
SOLUTION = (EXERCISE / "solution.py").read_text(encoding="utf-8")
STARTER = (EXERCISE / "starter.py").read_text(encoding="utf-8")  # passes nothing: 0 points
# a student's own tests beside her solution: not the exercise's file, and nothing in it to grade
OWN_TESTS = "from split_heads import split_heads\n\n\ndef test_shape():\n    assert split_heads is not None\n"
DOWNLOADED = datetime(2026, 5, 6, 9, 0, 0, tzinfo=UTC).timestamp()  # after the deadline below
DEADLINE = "2026-05-04T23:59:59+00:00"

CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Split heads (77)\n"
    "    Points Possible,,,,,6\n"
    '"Lee, Ann",101,S-101,alee,A,\n'
    '"Chan, Bo",102,S-102,bchan,A,\n'
    '"Dorn, Cy",103,S-103,cdorn,B,\n'
)
MOODLE_HEADER = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
)


def zip_of(members: dict[str, str], when: tuple = (2026, 5, 6, 9, 0, 0)) -> bytes:
    """A zip of `members`, each dated `when` (a zip's dates are whatever its maker wrote)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=when), text)
    return out.getvalue()


def downloaded(folder: Path) -> Path:
    """Every file under `folder` stamped with the download's time, as the LMS's zip had it."""
    for path in folder.rglob("*"):
        os.utime(path, (DOWNLOADED, DOWNLOADED))
    return folder


def canvas_download(folder: Path, entries: dict[str, str | bytes]) -> Path:
    """Canvas's download unzipped into `folder`: its flat entries, a student's zip among them."""
    folder.mkdir(parents=True)
    for name, data in entries.items():
        (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return downloaded(folder)


def moodle_download(folder: Path, students: dict[str, dict[str, str]]) -> Path:
    """Moodle's download in folders: {"Ann Lee_101": {file's own name: text}}."""
    for student, files in students.items():
        (folder / f"{student}_assignsubmission_file_").mkdir(parents=True)
        for name, text in files.items():
            (folder / f"{student}_assignsubmission_file_" / name).write_text(text, encoding="utf-8")
    return downloaded(folder)


def moodle_worksheet(rows: list[tuple[str, str, str, str]]) -> str:
    """The grading worksheet of [(participant, full name, email, last modified (submission))]."""
    lines = [
        f'Participant {n},{name},{email},Submitted for grading,,6.00,Yes,"{when}",-,\n'
        for n, name, email, when in rows
    ]
    return MOODLE_HEADER + "".join(lines)
