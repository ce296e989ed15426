"""An instructor's overrides (`--overrides CSV`) and the audit trail, through the real CLI: the changes
reach the gradebook, checks.csv, the LMS exports and the feedback (with their reasons), a merge applies
them the same way, the grade report keeps the judge's own verdicts, and every report and export says the
tutor's version, the checks' version, when it was graded and each grade's seed. A bad overrides file
stops before anything is graded, naming the line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from tests.grading_helpers import SOLUTION, probe_lessons, tutor
from tutor import __version__

WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
OVERRIDES = (
    "student,check,points,reason\n"
    'bo,last,1,"regraded by hand: xs[0] is fine here"\n'
    "anna,total,3,late-day penalty\n"
    "ghost,add,1,nobody\n"
)
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def book(folder: Path) -> dict[str, dict]:
    return {
        r["student_id"]: r for r in csv.DictReader(io.StringIO((folder / "gradebook.csv").read_text("utf-8")))
    }


@pytest.fixture(scope="module")
def done(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("overrides")
    lessons = probe_lessons(base / "lessons")
    (base / "subs").mkdir()
    (base / "subs/anna.py").write_text(SOLUTION, encoding="utf-8")
    (base / "subs/bo.py").write_text(WRONG, encoding="utf-8")
    (base / "overrides.csv").write_text(OVERRIDES, encoding="utf-8")
    common = ("--lessons", str(lessons), "grade")
    batch = tutor(
        base / "home",
        *common,
        "probe",
        "--batch",
        str(base / "subs"),
        "--format",
        "json",
        "--export",
        str(base / "out"),
        "--overrides",
        str(base / "overrides.csv"),
    )
    (base / "report.json").write_text(batch.stdout, encoding="utf-8")
    merged = tutor(
        base / "home",
        *common,
        "--merge",
        str(base / "report.json"),
        "--export",
        str(base / "merged"),
        "--overrides",
        str(base / "overrides.csv"),
    )
    return {"base": base, "lessons": lessons, "batch": batch, "merged": merged}


def test_overrides_change_the_exports_and_say_why(done):
    out = done["batch"]
    assert out.returncode == 0, out.stderr
    assert (
        "overrides.csv, line 4: no student ghost with a file in this batch; the line is not applied"
        in out.stderr
    )
    grades = book(done["base"] / "out")
    assert (grades["bo"]["total"], grades["bo"]["overrides"]) == ("4.0", "1")
    assert (grades["anna"]["total"], grades["anna"]["overrides"]) == ("3.0", "1")
    checks = list(csv.DictReader(io.StringIO((done["base"] / "out/checks.csv").read_text("utf-8"))))
    last = next(r for r in checks if r["student_id"] == "bo" and r["check"] == "last")
    assert (last["points"], last["override"]) == ("1.0", "regraded by hand: xs[0] is fine here")
    bo = (done["base"] / "out/feedback/bo.md").read_text(encoding="utf-8")
    assert (
        "## Changes by your instructor\n\n- last: 0 → 1 points, `regraded by hand: xs[0] is fine here`" in bo
    )
    anna = (done["base"] / "out/feedback/anna.md").read_text(encoding="utf-8")
    assert "- Total: 4 → 3 points, `late-day penalty`" in anna
    assert json.loads((done["base"] / "out/gradescope/anna.json").read_text("utf-8"))["score"] == 3.0


def test_the_report_keeps_the_judges_verdicts(done):
    report = json.loads(done["batch"].stdout)
    scores = {r["file"]: r["grade"]["score"] for r in report["results"]}
    assert scores == {"anna.py": 4.0, "bo.py": 3.0}


def test_a_merge_applies_the_overrides_as_the_batch_did(done):
    assert done["merged"].returncode == 0, done["merged"].stderr
    for name in ("gradebook.csv", "checks.csv", "canvas.csv", "feedback/bo.md", "feedback/anna.md"):
        assert (done["base"] / "merged" / name).read_bytes() == (done["base"] / "out" / name).read_bytes(), (
            name
        )


def test_every_report_says_what_graded_it_when_and_with_which_seed(done):
    report = json.loads(done["batch"].stdout)
    assert report["tutor_version"] == __version__ and TIME.fullmatch(report["graded_at"])
    assert re.fullmatch(r"[0-9a-f]{16}", report["checks_version"])
    assert all(re.fullmatch(r"[0-9a-f]{16}", r["grade"]["seed"]) for r in report["results"])
    manifest = json.loads((done["base"] / "out/export.json").read_text("utf-8"))
    assert (manifest["tutor_version"], manifest["graded_at"]) == (__version__, report["graded_at"])
    grades = book(done["base"] / "out")
    seeds = {r["file"]: r["grade"]["seed"] for r in report["results"]}
    assert grades["bo"]["seed"] == seeds["bo.py"] and grades["bo"]["graded_at"] == report["graded_at"]
    bo = (done["base"] / "out/feedback/bo.md").read_text(encoding="utf-8")
    assert bo.rstrip().endswith(
        f"Graded by Attention Tutor {__version__}, checks version {report['checks_version']}, "
        f"at {report['graded_at']}; seed {seeds['bo.py']}"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "student,check,points\nbo,add,1\n",
            "the first line must name the columns student,check,points,reason",
        ),
        ("student,check,points,reason\nbo,nope,1,x\n", "line 2: nope is not a check of this exercise"),
        ("student,check,points,reason\nbo,add,2,x\n", "line 2: points 2 are not a number from 0 to 1"),
        ("student,check,points,reason\nbo,total,nan,x\n", "line 2: points nan are not a number from 0 to 4"),
        ("student,check,points,reason\nbo,add,1,\n", "line 2: the reason cell is empty"),
    ],
)
def test_a_bad_overrides_file_stops_before_anything_is_graded(done, text, message):
    path = done["base"] / "bad.csv"
    path.write_text(text, encoding="utf-8")
    out = tutor(
        done["base"] / "home",
        "--lessons",
        str(done["lessons"]),
        "grade",
        "probe",
        "--batch",
        str(done["base"] / "subs"),
        "--export",
        str(done["base"] / "never"),
        "--overrides",
        str(path),
    )
    assert out.returncode == 2 and message in out.stderr and "grading" not in out.stderr, out.stderr
    assert not (done["base"] / "never").exists() and "Traceback" not in out.stderr


def test_overrides_go_with_an_export(done):
    out = tutor(
        done["base"] / "home",
        "--lessons",
        str(done["lessons"]),
        "grade",
        "probe",
        "--batch",
        str(done["base"] / "subs"),
        "--overrides",
        str(done["base"] / "overrides.csv"),
    )
    assert out.returncode == 2 and "--overrides goes with --export DIR" in out.stderr
