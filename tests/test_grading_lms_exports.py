"""The exports an LMS imports as they are, through the real CLI, each read back the way that LMS's own
importer reads it (the readers below follow their code):

- Canvas's gradebook importer (lib/gradebook_importer.rb): a header whose first cells hold "Student" and
  "ID" and whose student columns end at "Section"; the "Points Possible" line skipped; a row's student
  found by its Canvas user ID, else its SIS User ID or SIS Login ID, else its name; a blank cell (or "-")
  is no score, so nothing changes where there was none.
- Moodle's grading worksheet upload (mod/assign/feedback/offline): it refuses a file without the
  columns Identifier, Grade and Last modified (grade); takes the participant number after "Participant ";
  skips a row whose number is no participant's and a blank Grade; reads Feedback comments.
- Moodle's gradebook import (grade/import/csv): each row's user found by the column mapped to email,
  ID number or username; an unknown user stops the whole import; a blank or "-" grade is no grade.
- Gradescope's results.json (output_format, tests' scores on the total's scale) and exercism's v3
  results.json (output at most 500 characters with its note, no task_id, test_code the check's body).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.grading_helpers import SOLUTION, probe_lessons, tutor
from tutor.grading.instructor.batch import csv_cell

WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
LOUD = "print('hello from Bo ' + 'x' * 900)\n"
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Probe (1234)\n"
    "    Points Possible,,,,,10\n"
    '"Lee, Ann",101,S-101,alee,A,\n'
    '"Chan, Bo",102,S-102,bchan,A,\n'
    '"Dorn, Cy",103,S-103,cdorn,B,\n'
    '"Eck, Dee",104,S-104,deck,B,\n'
)
CANVAS_USERS = {101: "Lee, Ann", 102: "Chan, Bo", 103: "Dorn, Cy", 104: "Eck, Dee"}
# Moodle's "Download grading worksheet", as Moodle writes it (its dates as the user's locale shows them)
WORKSHEET = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Online text,Last modified (grade),Feedback comments\n"
    'Participant 201,Ann Lee,ann@example.org,"Submitted for grading",,10.00,Yes,'
    '"Monday, 4 May 2026, 9:15 PM",,-,\n'
    "Participant 202,Bo Chan,bo@example.org,Submitted for grading,4.00,10.00,Yes,"
    '"Monday, 4 May 2026, 10:02 PM",,"Tuesday, 5 May 2026, 8:00 AM",earlier comment\n'
    "Participant 203,Cy Dorn,cy@example.org,No submission,,10.00,Yes,-,,-,\n"
    "Participant 204,Dee Eck,,Submitted for grading,,10.00,Yes,"
    '"Monday, 4 May 2026, 11:40 PM",,-,\n'
)
MOODLE_PARTICIPANTS = {"201", "202", "203", "204"}
MOODLE_EMAILS = {"ann@example.org": "Ann Lee", "bo@example.org": "Bo Chan", "cy@example.org": "Cy Dorn"}


def read_csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def canvas_import(path: Path, users: dict[int, str], column: str) -> dict:
    """What Canvas's importer makes of canvas.csv in a course of `users` ({Canvas user id: name}): the
    grade each matched student gets (None: no score, nothing changes) and the rows it found no student
    for (it would ask who they are)."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], header
    assert header[2:5] == ["SIS User ID", "SIS Login ID", "Section"], header  # the student columns end there
    at = header.index(column)
    grades, unknown = {}, []
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            continue
        cell = row[1].strip()
        user = int(cell) if cell.isdigit() and int(cell) in users else None  # Ruby's to_i: "anna" is 0
        if user is None:
            user = next((uid for uid, name in users.items() if name == row[0]), None)
        if user is None:
            unknown.append(row[1])
            continue
        grade = row[at].strip()
        grades[user] = None if grade in ("", "-") else float(grade)
    return {"grades": grades, "unknown": unknown}


def moodle_worksheet_import(path: Path, participants: set[str]) -> dict[str, tuple[float | None, str]]:
    """What Moodle's worksheet upload makes of moodle.csv: {participant: (grade or None when skipped as
    blank, feedback comment)}; it refuses the file without its three columns."""
    rows = read_csv(path)
    columns = set(rows[0]) if rows else set()
    if not {"Identifier", "Grade", "Last modified (grade)"} <= columns:
        raise AssertionError(f"Moodle could not read the uploaded worksheet: {sorted(columns)}")
    out = {}
    for row in rows:
        number = row["Identifier"][len("Participant ") :]
        if number not in participants:
            continue
        grade = row["Grade"].strip()
        out[number] = (None if grade == "" else float(grade), row.get("Feedback comments", ""))
    return out


def moodle_gradebook_import(path: Path, user_column: str, users: dict[str, str], column: str) -> dict:
    """What Moodle's gradebook CSV import makes of moodle-gradebook.csv, mapping users from
    `user_column`: {user: grade or None (no grade)}; a row whose user is unknown stops it all."""
    grades = {}
    for row in read_csv(path):
        who = row[user_column].strip()
        if who not in users:
            raise AssertionError(f"Moodle stops the import: no user with {user_column} {who!r}")
        grade = row[column].strip()
        grades[who] = None if grade in ("", "-") else float(grade)
    return grades


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    """A Canvas download graded with Canvas's gradebook as roster, and a Moodle download graded with
    Moodle's worksheet as roster."""
    base = tmp_path_factory.mktemp("lms")
    lessons = probe_lessons(base / "lessons")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("leeann_101_5001_probe.py", SOLUTION)
        zf.writestr("chanbo_late_102_5002_probe.py", LOUD + WRONG)
        zf.writestr("eckdee_104_5004_probe.py", "def add(a, b):\n    return a +\n")
    (base / "subs.zip").write_bytes(archive.getvalue())
    (base / "roster.csv").write_text(ROSTER, encoding="utf-8")
    out = tutor(
        base / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(base / "subs.zip"),
        "--export",
        str(base / "out"),
        "--roster",
        str(base / "roster.csv"),
        "--points",
        "10",
        "--assignment",
        "Probe (1234)",
    )
    assert out.returncode == 0, out.stderr
    moodle = base / "moodle-subs"
    for folder, text in {
        "Ann Lee_201_assignsubmission_file_": SOLUTION,
        "Bo Chan_202_assignsubmission_file_": WRONG,
        "Dee Eck_204_assignsubmission_file_": SOLUTION,
    }.items():
        (moodle / folder).mkdir(parents=True)
        (moodle / folder / "probe.py").write_text(text, encoding="utf-8")
    (base / "worksheet.csv").write_text(WORKSHEET, encoding="utf-8")
    mood = tutor(
        base / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(moodle),
        "--export",
        str(base / "mood"),
        "--roster",
        str(base / "worksheet.csv"),
        "--points",
        "10",
    )
    assert mood.returncode == 0, mood.stderr
    return {
        "out": base / "out",
        "stderr": out.stderr,
        "mood": base / "mood",
        "mood_stderr": mood.stderr,
        "lessons": lessons,
        "base": base,
    }


def test_canvas_matches_every_rostered_student_and_changes_nothing_for_the_missing_one(exported):
    path = exported["out"] / "canvas.csv"
    assert (
        path.read_text(encoding="utf-8").splitlines()[0]
        == "Student,ID,SIS User ID,SIS Login ID,Section,Probe (1234)"
    )
    rows = read_csv(path)
    assert rows[0] == {
        "Student": "    Points Possible",
        "ID": "",
        "SIS User ID": "",
        "SIS Login ID": "",
        "Section": "",
        "Probe (1234)": "10.0",
    }
    assert rows[3] == {
        "Student": "Lee, Ann",
        "ID": "101",
        "SIS User ID": "S-101",
        "SIS Login ID": "alee",
        "Section": "A",
        "Probe (1234)": "10.0",
    }
    imported = canvas_import(path, CANVAS_USERS, "Probe (1234)")
    # Bo: 3 of 4 points as 10; Dee's file did not load: 0; Cy handed nothing in: blank, no change
    assert imported == {"grades": {102: 7.5, 104: 0.0, 101: 10.0, 103: None}, "unknown": []}
    assert "warning: canvas.csv" not in exported["stderr"]


def test_canvas_says_when_no_row_s_id_is_a_canvas_user(exported):
    imported = canvas_import(exported["mood"] / "canvas.csv", CANVAS_USERS, "Probe")  # Moodle's participants
    assert imported == {"grades": {}, "unknown": ["201", "202", "204", "203"]}
    assert (
        "warning: canvas.csv: no row's ID came from Canvas (its gradebook export as --roster, or its download's "
        "file names): Canvas finds a student by its ID, SIS User ID, SIS Login ID, so it can match these rows by "
        "name at best (the first is 201)" in exported["mood_stderr"]
    )


def test_moodle_reads_the_worksheet_made_without_its_roster(exported):
    path = exported["out"] / "moodle.csv"
    assert list(read_csv(path)[0]) == [
        "Identifier",
        "Full name",
        "Email address",
        "Status",
        "Grade",
        "Maximum Grade",
        "Grade can be changed",
        "Last modified (submission)",
        "Last modified (grade)",
        "Feedback comments",
    ]
    grades = moodle_worksheet_import(path, {"101", "102", "103", "104"})
    assert grades == {
        "102": (7.5, "FAIL"),
        "104": (0.0, "ERROR"),
        "101": (10.0, "PASS"),
        "103": (None, "no file handed in"),
    }
    by = {r["Identifier"]: r for r in read_csv(path)}
    assert (
        by["Participant 101"]["Last modified (grade)"]
        == json.loads((exported["out"] / "export.json").read_text(encoding="utf-8"))["graded_at"]
    )  # the grade's time: Moodle overwrites no grade changed after it
    assert by["Participant 103"]["Last modified (grade)"] == ""


def test_moodle_gets_its_own_worksheet_back_with_the_grades_filled_in(exported):
    path = exported["mood"] / "moodle.csv"
    sent = list(csv.reader(io.StringIO(WORKSHEET)))
    back = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert back[0] == sent[0]  # the worksheet's own columns, in its order
    grade, comment = sent[0].index("Grade"), sent[0].index("Feedback comments")
    for got, was in zip(sorted(back[1:]), sorted(sent[1:]), strict=True):
        kept = [c for i, c in enumerate(got) if i not in (grade, comment)]
        # every other cell as sent, as every cell the tutor writes (Moodle's "-" quoted: it reads both as no time)
        assert kept == [csv_cell(c) for i, c in enumerate(was) if i not in (grade, comment)]
    bo = next(row for row in back if row[0] == "Participant 202")
    assert bo[sent[0].index("Last modified (grade)")] == "Tuesday, 5 May 2026, 8:00 AM"  # Moodle's own check
    grades = moodle_worksheet_import(path, MOODLE_PARTICIPANTS)
    assert grades == {
        "201": (10.0, "PASS"),
        "202": (7.5, "FAIL"),
        "204": (10.0, "PASS"),
        "203": (None, "no file handed in"),
    }


def test_moodle_gradebook_import_finds_every_user_by_email(exported):
    path = exported["mood"] / "moodle-gradebook.csv"
    assert path.read_text(encoding="utf-8").splitlines()[0] == "Email address,Full name,Probe,Feedback"
    grades = moodle_gradebook_import(path, "Email address", MOODLE_EMAILS, "Probe")
    assert grades == {"ann@example.org": 10.0, "bo@example.org": 7.5, "cy@example.org": None}
    assert (
        "warning: moodle-gradebook.csv: 1 student has no Email address on the roster and is left out "
        "(Moodle would stop the import there): 204" in exported["mood_stderr"]
    )


def test_moodle_gradebook_import_is_not_written_without_a_user_column(exported):
    assert not (exported["out"] / "moodle-gradebook.csv").exists()
    assert (
        "warning: moodle-gradebook.csv is not written: Moodle's gradebook import finds a user by email "
        "address, ID number or username" in exported["stderr"]
    )


def test_gradescope_results_are_plain_text_and_on_one_scale(exported):
    folder = exported["out"] / "gradescope"
    assert sorted(p.name for p in folder.iterdir()) == ["101.json", "102.json", "104.json"]
    bo = json.loads((folder / "102.json").read_text(encoding="utf-8"))
    assert (bo["output_format"], bo["test_output_format"]) == ("text", "text")  # never rendered as HTML
    assert bo["visibility"] == "visible" and isinstance(bo["execution_time"], float)
    assert [t["name"] for t in bo["tests"]] == ["adds", "joins", "scales", "last"]
    assert [(t["score"], t["max_score"]) for t in bo["tests"]] == [
        (2.5, 2.5),
        (2.5, 2.5),
        (2.5, 2.5),
        (0.0, 2.5),
    ]
    assert sum(t["score"] for t in bo["tests"]) == bo["score"] == 7.5
    assert [t["status"] for t in bo["tests"]] == ["passed", "passed", "passed", "failed"]
    assert "Hint: xs[-1]" in bo["tests"][3]["output"]
    dee = json.loads((folder / "104.json").read_text(encoding="utf-8"))
    assert dee["score"] == 0 and "syntax error in line 2" in dee["output"] and "Hint" not in json.dumps(dee)
    assert sum(t["max_score"] for t in dee["tests"]) == 10


def test_exercism_output_is_capped_once_and_test_code_is_the_checks_body(exported):
    folder = exported["out"] / "exercism"
    ann = json.loads((folder / "101.json").read_text(encoding="utf-8"))
    assert ann["version"] == 3 and ann["status"] == "pass" and "message" not in ann
    assert all("task_id" not in t for t in ann["tests"])  # exercism's tasks: none in this exercise
    assert ann["tests"][0]["test_code"] == 'expect(learner.add(2, 3), 5)\nreturn "2 + 3 = 5"'
    assert ann["tests"][3]["test_code"] == "expect(learner.last([1, 2, 3]), 3)"
    bo = json.loads((folder / "102.json").read_text(encoding="utf-8"))
    assert bo["status"] == "fail" and [t["status"] for t in bo["tests"]] == ["pass", "pass", "pass", "fail"]
    assert [("output" in t) for t in bo["tests"]] == [False, False, False, True]  # once: the failure shown
    output = bo["tests"][3]["output"]
    assert len(output) <= 500 and output.startswith("hello from Bo xxx")
    assert output.endswith("\nOutput was truncated. Please limit to 500 chars")
    for test in bo["tests"]:
        assert (
            {"name", "status", "test_code"}
            <= set(test)
            <= {"name", "status", "message", "output", "test_code"}
        )
    dee = json.loads((folder / "104.json").read_text(encoding="utf-8"))
    assert dee["status"] == "error" and "syntax error in line 2" in dee["message"] and dee["tests"] == []


def test_points_out_of_range_stop_before_anything_is_graded(exported, tmp_path):
    bad = tutor(
        tmp_path / "home",
        "--lessons",
        str(exported["lessons"]),
        "grade",
        "probe",
        "--batch",
        str(exported["base"] / "subs.zip"),
        "--export",
        str(tmp_path / "bad"),
        "--points",
        "-1",
    )
    assert bad.returncode == 2 and "--points must be a number above 0" in bad.stderr and bad.stdout == ""
