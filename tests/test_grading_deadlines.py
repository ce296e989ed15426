"""Deadlines and a late policy, through the real CLI: a file's time from Blackboard's own layout (its
attempt stamp) or a manifest, never its own mtime (a file with none is never late), each said in the
report; a per-day penalty after the deadline and zero after the cutoff, in the gradebook, the LMS
exports and the feedback.
"""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import UTC, datetime

import pytest

from tests.grading_helpers import SOLUTION, probe_lessons, tutor

BLACKBOARD = (
    "Probe_ann_attempt_2026-05-06-10-00-00_probe.py"  # two days after the deadline, in any usual zone
)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("deadlines")
    lessons = probe_lessons(base / "lessons")
    subs = base / "subs"
    subs.mkdir()
    for name in (BLACKBOARD, "bo.py", "cy.py", "dee.py"):
        (subs / name).write_text(SOLUTION, encoding="utf-8")
    late = datetime(2026, 5, 20, tzinfo=UTC).timestamp()  # cy's own time: after the cutoff
    os.utime(subs / "cy.py", (late, late))
    early = datetime(2026, 5, 1, tzinfo=UTC).timestamp()
    os.utime(subs / "dee.py", (early, early))
    (base / "manifest.csv").write_text("file,submitted\nbo.py,2026-05-04T12:00:00+00:00\n", encoding="utf-8")
    out = tutor(
        base / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(subs),
        "--format",
        "json",
        "--manifest",
        str(base / "manifest.csv"),
        "--deadline",
        "2026-05-04T23:59:59+00:00",
        "--late-per-day",
        "10",
        "--cutoff",
        "2026-05-10T00:00:00+00:00",
        "--export",
        str(base / "out"),
    )
    return {"base": base, "out": out, "lessons": lessons}


def test_each_files_time_and_where_it_came_from_are_in_the_report(graded):
    assert graded["out"].returncode == 0, graded["out"].stderr
    rows = {r["file"]: r["submitted"] for r in json.loads(graded["out"].stdout)["results"]}
    assert rows["bo.py"] == {"time": "2026-05-04T12:00:00Z", "from": "manifest"}
    assert rows["cy.py"] is None  # its own time is the student's to set
    assert rows[BLACKBOARD]["from"] == "blackboard" and rows[BLACKBOARD]["time"].startswith("2026-05-0")


def test_the_late_policy_is_applied_to_the_exports(graded):
    text = (graded["base"] / "out/gradebook.csv").read_text(encoding="utf-8")
    book = {r["file"]: r for r in csv.DictReader(io.StringIO(text))}
    assert (book["bo.py"]["total"], book["bo.py"]["late_days"], book["bo.py"]["late_penalty"]) == (
        "4.0",
        "0",
        "0.0",
    )
    assert (book["dee.py"]["total"], book["dee.py"]["submitted_from"]) == ("4.0", "none")
    assert (book[BLACKBOARD]["total"], book[BLACKBOARD]["late_days"]) == ("3.2", "2")  # 10% of 4 a day
    assert (book["cy.py"]["total"], book["cy.py"]["late_penalty"], book["cy.py"]["submitted"]) == (
        "4.0",
        "",
        "",
    )
    canvas = (graded["base"] / "out/canvas.csv").read_text(encoding="utf-8")
    assert ",3.2\n" in canvas
    cy = (graded["base"] / "out/feedback/cy.md").read_text(encoding="utf-8")
    assert "Handed in" not in cy and "late:" not in cy
    bo = (graded["base"] / "out/feedback/bo.md").read_text(encoding="utf-8")
    assert "Handed in at 2026-05-04T12:00:00Z (from the manifest)." in bo and "late:" not in bo


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--deadline", "friday"), "--deadline takes a date or a time such as 2026-05-04"),
        (("--late-per-day", "10"), "--late-per-day and --cutoff go with --deadline TIME"),
        (
            ("--deadline", "2026-05-04", "--late-per-day", "150"),
            "--late-per-day must be a percentage from 0 to 100",
        ),
        (("--deadline", "2026-05-04", "--cutoff", "2026-05-01"), "--cutoff must not be before --deadline"),
    ],
)
def test_a_bad_deadline_stops_before_anything_is_graded(graded, args, message):
    out = tutor(
        graded["base"] / "home",
        "--lessons",
        str(graded["lessons"]),
        "grade",
        "probe",
        "--batch",
        str(graded["base"] / "subs"),
        "--export",
        str(graded["base"] / "never"),
        *args,
    )
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
