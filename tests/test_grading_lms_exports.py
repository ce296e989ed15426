"""The exports an LMS imports as they are, through the real CLI, each checked against the format it
claims: Canvas's gradebook import (its columns, a Points Possible line, one row per rostered student,
totals scaled to the assignment's points), Moodle's grading worksheet, Gradescope's autograder
results.json and exercism's v3 results.json for every student with a file.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.grading_helpers import SOLUTION, probe_lessons, tutor

WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Probe (1234)\n"
    "    Points Possible,,,,,10\n"
    '"Lee, Ann",101,S-101,alee,A,\n'
    '"Chan, Bo",102,S-102,bchan,A,\n'
    '"Dorn, Cy",103,S-103,cdorn,B,\n'
    '"Eck, Dee",104,S-104,deck,B,\n'
)
GRADESCOPE_TEST = {"score", "max_score", "name", "number", "output", "visibility", "status"}
EXERCISM_STATUS = {"pass", "fail", "error"}


def read_csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("lms")
    lessons = probe_lessons(base / "lessons")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("leeann_101_5001_probe.py", SOLUTION)
        zf.writestr("chanbo_late_102_5002_probe.py", "print('hello from Bo')\n" + WRONG)
        zf.writestr("eckdee_104_5004_probe.py", "def add(a, b):\n    return a +\n")
    (base / "subs.zip").write_bytes(archive.getvalue())
    (base / "roster.csv").write_text(ROSTER, encoding="utf-8")
    out = tutor(base / "home", "--lessons", str(lessons), "grade", "probe", "--batch", str(base / "subs.zip"),
                "--export", str(base / "out"), "--roster", str(base / "roster.csv"), "--points", "10",
                "--assignment", "Probe (1234)")  # fmt: skip
    assert out.returncode == 0, out.stderr
    bad = tutor(base / "home", "--lessons", str(lessons), "grade", "probe", "--batch", str(base / "subs.zip"),
                "--export", str(base / "bad"), "--points", "-1")  # fmt: skip
    return {"out": base / "out", "stderr": out.stderr, "bad": bad, "lessons": lessons}


def test_canvas_csv_has_canvas_columns_a_points_line_and_every_student_scaled(exported):
    path = exported["out"] / "canvas.csv"
    assert (
        path.read_text(encoding="utf-8").splitlines()[0]
        == "Student,ID,SIS User ID,SIS Login ID,Section,Probe (1234)"
    )
    rows = read_csv(path)
    assert rows[0] == {"Student": "    Points Possible", "ID": "", "SIS User ID": "", "SIS Login ID": "", "Section": "",
                       "Probe (1234)": "10.0"}  # fmt: skip
    by = {r["ID"]: r for r in rows[1:]}
    assert list(by) == ["102", "104", "101", "103"]
    assert by["101"] == {"Student": "Lee, Ann", "ID": "101", "SIS User ID": "S-101", "SIS Login ID": "alee",
                         "Section": "A", "Probe (1234)": "10.0"}  # fmt: skip
    assert by["102"]["Probe (1234)"] == "7.5"  # 3 of 4 points, as 10
    assert by["103"]["Probe (1234)"] == "0.0" and by["104"]["Probe (1234)"] == "0.0"


def test_moodle_csv_is_a_grading_worksheet(exported):
    rows = read_csv(exported["out"] / "moodle.csv")
    assert list(rows[0]) == [
        "Identifier",
        "Full name",
        "Email address",
        "Grade",
        "Maximum Grade",
        "Feedback comments",
    ]
    by = {r["Identifier"]: r for r in rows}
    assert (by["Participant 101"]["Grade"], by["Participant 101"]["Maximum Grade"]) == ("10.0", "10.0")
    assert by["Participant 103"]["Feedback comments"] == "no file handed in"


def test_gradescope_results_have_the_documented_fields(exported):
    folder = exported["out"] / "gradescope"
    assert sorted(p.name for p in folder.iterdir()) == ["101.json", "102.json", "104.json"]
    bo = json.loads((folder / "102.json").read_text(encoding="utf-8"))
    assert bo["score"] == 7.5 and bo["visibility"] == "visible" and isinstance(bo["execution_time"], float)
    assert [t["name"] for t in bo["tests"]] == ["adds", "joins", "scales", "last"]
    for test in bo["tests"]:
        assert set(test) == GRADESCOPE_TEST and test["max_score"] == 1 and test["visibility"] == "visible"
    assert [t["status"] for t in bo["tests"]] == ["passed", "passed", "passed", "failed"]
    assert "Hint: xs[-1]" in bo["tests"][3]["output"]
    dee = json.loads((folder / "104.json").read_text(encoding="utf-8"))
    assert dee["score"] == 0 and "syntax error in line 2" in dee["output"] and "Hint" not in json.dumps(dee)


def test_exercism_results_are_version_3(exported):
    folder = exported["out"] / "exercism"
    ann = json.loads((folder / "101.json").read_text(encoding="utf-8"))
    assert ann["version"] == 3 and ann["status"] == "pass" and "message" not in ann
    assert [t["task_id"] for t in ann["tests"]] == [1, 2, 3, 4]
    assert ann["tests"][0]["test_code"].startswith("def check_add(learner):")
    bo = json.loads((folder / "102.json").read_text(encoding="utf-8"))
    assert bo["status"] == "fail" and {t["status"] for t in bo["tests"]} <= EXERCISM_STATUS
    last = bo["tests"][3]
    assert last["status"] == "fail" and last["message"] and last["output"].startswith("hello from Bo")
    for test in bo["tests"]:
        assert {"name", "status", "test_code", "task_id"} <= set(test) <= {"name", "status", "message", "output",
                                                                            "test_code", "task_id"}  # fmt: skip
    dee = json.loads((folder / "104.json").read_text(encoding="utf-8"))
    assert dee["status"] == "error" and "syntax error in line 2" in dee["message"]


def test_points_out_of_range_stop_before_anything_is_graded(exported):
    bad = exported["bad"]
    assert bad.returncode == 2 and "--points must be a number above 0" in bad.stderr and bad.stdout == ""
