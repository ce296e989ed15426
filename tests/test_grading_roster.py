"""Rosters as instructors have them, through the real CLI: a Canvas gradebook export beside Canvas's
zipped download, a Moodle grading worksheet beside Moodle's folder per student, and the tutor's own
roster with a student's two files. Every rostered student gets a gradebook row ("missing", 0 points
without a file), a file not on the roster is warned of, and of a student's several files the gradebook
takes the latest or the best (--pick). The second pick is a merge of the first's report: nothing is
graded twice.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.grading_helpers import SOLUTION, probe_lessons, tutor
from tutor.errors import TutorError
from tutor.grading.instructor.provenance import owner_of
from tutor.grading.instructor.roster import read_roster

WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Probe (1234)\n"
    "    Points Possible,,,,,4\n"
    '"Lee, Ann",101,S-101,alee,A,\n'
    '"Chan, Bo",102,S-102,bchan,A,\n'
    '"Dorn, Cy",103,S-103,cdorn,B,\n'
)
MOODLE_ROSTER = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,Last modified (grade)\n"
    "Participant 201,Ann Lee,ann@example.org,Submitted for grading,,4.00,Yes,-\n"
    "Participant 202,Bo Chan,bo@example.org,No submission,,4.00,Yes,-\n"
)


def gradebook(folder: Path) -> dict[str, dict]:
    rows = csv.DictReader(io.StringIO((folder / "gradebook.csv").read_text(encoding="utf-8")))
    return {row["student_id"]: row for row in rows}


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    return probe_lessons(tmp_path_factory.mktemp("lessons"))


@pytest.fixture(scope="module")
def canvas(lessons, tmp_path_factory) -> dict:
    """Ann (101) handed in a pass, then a fail; Bo (102) a fail, late; Cy (103) nothing; 999 is no one's."""
    base = tmp_path_factory.mktemp("canvas")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("leeann_101_5001_probe.py", SOLUTION)
        zf.writestr("leeann_101_5003_probe-1.py", WRONG)
        zf.writestr("chanbo_late_102_5002_probe.py", WRONG)
        zf.writestr("strangerx_999_5009_probe.py", SOLUTION)
    (base / "submissions.zip").write_bytes(archive.getvalue())
    (base / "roster.csv").write_text(CANVAS_ROSTER, encoding="utf-8")
    common = ("--lessons", str(lessons), "grade", "probe")
    latest = tutor(
        base / "home",
        *common,
        "--batch",
        str(base / "submissions.zip"),
        "--format",
        "json",
        "--export",
        str(base / "latest"),
        "--roster",
        str(base / "roster.csv"),
    )
    (base / "report.json").write_text(latest.stdout, encoding="utf-8")
    best = tutor(
        base / "home",
        "--lessons",
        str(lessons),
        "grade",
        "--merge",
        str(base / "report.json"),
        "--export",
        str(base / "best"),
        "--roster",
        str(base / "roster.csv"),
        "--pick",
        "best",
    )
    return {"base": base, "latest": latest, "best": best}


def test_every_student_of_a_canvas_roster_has_a_row_and_a_stranger_is_warned_of(canvas):
    out = canvas["latest"]
    assert out.returncode == 0, out.stderr
    book = gradebook(canvas["base"] / "latest")
    assert list(book) == ["102", "101", "999", "103"]  # in the order of their first files, then the missing
    assert (book["101"]["name"], book["101"]["in_roster"], book["101"]["files"]) == ("Lee, Ann", "yes", "2")
    assert (book["103"]["status"], book["103"]["total"], book["103"]["max"], book["103"]["file"]) == (
        "missing",
        "0.0",
        "4.0",
        "",
    )
    assert book["103"]["feedback"] == "" and not (canvas["base"] / "latest/feedback/103.md").exists()
    assert (book["999"]["in_roster"], book["999"]["name"]) == ("no", "strangerx")
    assert "warning: 1 file is not on the roster (strangerx_999_5009_probe.py)" in out.stderr
    assert (
        "warning: 1 student on the roster has no file (103): the gradebook says missing, 0 points"
        in out.stderr
    )
    assert "warning: 1 student has several files: the gradebook takes the latest" in out.stderr


def test_of_several_files_the_latest_or_the_best_is_taken(canvas):
    latest = gradebook(canvas["base"] / "latest")["101"]
    assert (latest["file"], latest["status"]) == ("leeann_101_5003_probe-1.py", "fail")
    assert canvas["best"].returncode == 0, canvas["best"].stderr
    best = gradebook(canvas["base"] / "best")["101"]
    assert (best["file"], best["status"], best["total"]) == ("leeann_101_5001_probe.py", "pass", "4.0")
    assert "takes the best" in canvas["best"].stderr
    # every file is still in checks.csv, under its student
    checks = list(
        csv.DictReader(io.StringIO((canvas["base"] / "best/checks.csv").read_text(encoding="utf-8")))
    )
    assert {(r["student_id"], r["file"]) for r in checks if r["check"] == "add"} == {
        ("101", "leeann_101_5001_probe.py"),
        ("101", "leeann_101_5003_probe-1.py"),
        ("102", "chanbo_late_102_5002_probe.py"),
        ("999", "strangerx_999_5009_probe.py"),
    }


def test_a_moodle_worksheet_names_the_students_of_moodles_folders(lessons, tmp_path):
    subs = tmp_path / "subs" / "Ann Lee_201_assignsubmission_file_"
    subs.mkdir(parents=True)
    (subs / "probe.py").write_text(SOLUTION, encoding="utf-8")
    (tmp_path / "worksheet.csv").write_text(MOODLE_ROSTER, encoding="utf-8")
    out = tutor(
        tmp_path / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(tmp_path / "subs"),
        "--export",
        str(tmp_path / "out"),
        "--roster",
        str(tmp_path / "worksheet.csv"),
    )
    assert out.returncode == 0, out.stderr
    book = gradebook(tmp_path / "out")
    assert (book["201"]["name"], book["201"]["status"], book["201"]["in_roster"]) == (
        "Ann Lee",
        "pass",
        "yes",
    )
    assert (book["202"]["name"], book["202"]["status"]) == ("Bo Chan", "missing")
    assert json.loads((tmp_path / "out/export.json").read_text(encoding="utf-8"))["files"] == 1


def test_the_tutors_roster_may_give_a_student_several_files(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("file,student_id,name\na.py,s1,Ann\na-2.py,s1,Ann\nb.py,s2,Bo\n", encoding="utf-8")
    roster = read_roster(path, "en")
    assert roster.kind == "tutor" and [s.id for s in roster.students] == ["s1", "s2"]
    assert roster.student_of("a.py") is roster.student_of("a-2.py")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Identifier,Full name\nStudent 7x,Ann\n", "line 2: the Identifier Student 7x is not Moodle's"),
        ("Student,ID\nAnn,101\nBo,101\n", "line 3: 101 is already on line 2"),
        ("Student,ID\nAnn,1/2\n", "line 2: the student id 1/2 cannot name a feedback file"),
        ("Name,Email\nAnn,a@x\n", "or be a Canvas gradebook export's (Student, ID, …)"),
    ],
)
def test_a_bad_lms_roster_is_a_clear_error_naming_the_line(tmp_path, text, message):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TutorError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_roster(path, "en")


def test_lms_names_say_whose_a_file_is():
    canvas = owner_of("chanbo_late_102_5002_probe-1.py")
    assert (canvas.source, canvas.id, canvas.name, canvas.late, canvas.order) == (
        "canvas",
        "102",
        "chanbo",
        True,
        (5002, 1),
    )
    moodle = owner_of("Ann Lee_201_assignsubmission_file_/src/probe.py")
    assert (moodle.source, moodle.id, moodle.name) == ("moodle", "201", "Ann Lee")
    assert owner_of("Ann Lee_201_assignsubmission_file_probe.py").id == "201"
    assert owner_of("anna.py").source == "file" and owner_of("probe_1.py").id == "probe_1"
