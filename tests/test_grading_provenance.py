"""Provenance, through the real CLI on downloads shaped as Canvas, Moodle and Blackboard make them
(tests/lms_downloads.py): whose a file is comes only from the LMS's layout at the top of the download,
when it was handed in only from the LMS's own record or the instructor's manifest, of a student's
several files the exercise's own is graded, every row says where each came from, and a roster that
lists a student twice is refused (tutor.grading.instructor.provenance, docs/instructor.md "Provenance").
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.grading_helpers import tutor
from tests.lms_downloads import (
    CANVAS_ROSTER,
    DEADLINE,
    OWN_TESTS,
    SOLUTION,
    STARTER,
    canvas_download,
    downloaded,
    moodle_download,
    moodle_worksheet,
    zip_of,
)

BO_ZIP = "chanbo_102_5002_sub.zip/leeann_101_9999_split_heads.py"
CY_ZIP = "dorncy_LATE_103_5003_work.zip/split_heads.py"
DEE = "deedee_104_5004_x_attempt_2026-05-01-00-00-00_split_heads.py"


def gradebook(folder: Path) -> dict[str, dict]:
    rows = csv.DictReader(io.StringIO((folder / "gradebook.csv").read_text(encoding="utf-8")))
    return {row["student_id"]: row for row in rows}


def report_rows(out) -> dict[str, dict]:
    return {row["file"]: row for row in json.loads(out.stdout)["results"]}


@pytest.fixture(scope="module")
def canvas(tmp_path_factory) -> dict:
    """Canvas's download unzipped, a deadline, a 10% a day penalty, a cutoff and a manifest:
    Ann (101) handed in a pass on time; Bo (102) a zip of his own holding a do-nothing file named as
    Ann's and dated far ahead; Cy (103), marked LATE by Canvas, a zip whose member says it was early;
    Dee (104) a file whose own name carries a Blackboard-style stamp before the deadline, handed in
    (says the instructor's manifest) after the cutoff."""
    base = tmp_path_factory.mktemp("canvas")
    subs = canvas_download(
        base / "subs",
        {
            "leeann_101_5001_split_heads.py": SOLUTION,
            "chanbo_102_5002_sub.zip": zip_of(
                {"leeann_101_9999_split_heads.py": STARTER}, (2030, 1, 1, 0, 0, 0)
            ),
            "dorncy_LATE_103_5003_work.zip": zip_of({"split_heads.py": SOLUTION}, (2026, 5, 1, 0, 0, 0)),
            DEE: SOLUTION,
        },
    )
    (base / "roster.csv").write_text(CANVAS_ROSTER + '"Dee, Dee",104,S-104,ddee,B,\n', encoding="utf-8")
    (base / "manifest.csv").write_text(f"file,submitted\n{DEE},2026-05-10T00:00:00+00:00\n", encoding="utf-8")
    out = tutor(
        base / "home",
        "grade",
        "split-heads",
        "--batch",
        str(subs),
        "--format",
        "json",
        "--export",
        str(base / "out"),
        "--roster",
        str(base / "roster.csv"),
        "--deadline",
        DEADLINE,
        "--late-per-day",
        "10",
        "--cutoff",
        "2026-05-08T00:00:00+00:00",
        "--manifest",
        str(base / "manifest.csv"),
    )
    return {"out": out, "book": gradebook(base / "out") if out.returncode == 0 else {}}


def test_a_file_in_a_students_own_zip_stays_his_whatever_its_name_or_date(canvas):
    assert canvas["out"].returncode == 0, canvas["out"].stderr
    ann, bo = canvas["book"]["101"], canvas["book"]["102"]
    assert (ann["file"], ann["total"], ann["files"]) == ("leeann_101_5001_split_heads.py", "6.0", "1")
    assert (bo["file"], bo["total"]) == (BO_ZIP, "0.0")
    assert ann["owner_from"] == bo["owner_from"] == "canvas"
    assert report_rows(canvas["out"])[BO_ZIP]["owner"] == {"id": "102", "from": "canvas"}


def test_a_time_a_student_sets_never_beats_the_lms_or_the_manifest(canvas):
    cy, dee = canvas["book"]["103"], canvas["book"]["104"]
    # Canvas's LATE with no time: one day late (10% of 6 points), whatever the zip member's date says
    assert (cy["total"], cy["submitted"], cy["submitted_from"], cy["late_days"]) == (
        "5.4",
        "",
        "canvas-late",
        "1",
    )
    # the manifest's time, after the cutoff, not the stamp in the file's own name
    assert (dee["total"], dee["submitted"], dee["submitted_from"]) == (
        "0.0",
        "2026-05-10T00:00:00Z",
        "manifest",
    )
    rows = report_rows(canvas["out"])
    assert rows[CY_ZIP]["submitted"] is None and rows[CY_ZIP]["submitted_from"] == "canvas-late"
    assert rows[CY_ZIP]["file_time"].startswith("2026-0")  # the member's date, shown and not used
    assert rows[DEE]["submitted"] == {"time": "2026-05-10T00:00:00Z", "from": "manifest"}


def test_a_file_with_no_trusted_time_is_never_late_and_the_batch_says_so(canvas):
    ann = canvas["book"]["101"]
    assert (ann["total"], ann["submitted"], ann["submitted_from"], ann["late_days"]) == (
        "6.0",
        "",
        "none",
        "",
    )
    assert "2 files have no time the tutor can trust (first: " in canvas["out"].stderr


def test_a_download_stamped_at_one_time_costs_no_honest_student_anything(tmp_path):
    """Canvas's zip as it comes: every member dated the download's time, two days after the deadline."""
    (tmp_path / "submissions.zip").write_bytes(
        zip_of({"leeann_101_5001_split_heads.py": SOLUTION, "chanbo_102_5002_split_heads.py": SOLUTION})
    )
    out = tutor(
        tmp_path / "home",
        "grade",
        "split-heads",
        "--batch",
        str(tmp_path / "submissions.zip"),
        "--export",
        str(tmp_path / "out"),
        "--deadline",
        DEADLINE,
        "--late-per-day",
        "60",
    )
    assert out.returncode == 0, out.stderr
    book = gradebook(tmp_path / "out")
    assert [
        (book[s]["total"], book[s]["submitted_from"], book[s]["late_penalty"]) for s in ("101", "102")
    ] == [("6.0", "none", ""), ("6.0", "none", "")]
    assert "every file's own time is within 5 s, one download's stamp" in out.stderr


def test_a_zip_of_a_student_of_no_lms_is_that_students(tmp_path):
    """Without a roster, bob.zip/ann.py is Bob's, not Ann's."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.py").write_text(SOLUTION, encoding="utf-8")
    (subs / "bob.zip").write_bytes(zip_of({"ann.py": STARTER}, (2030, 1, 1, 0, 0, 0)))
    out = tutor(
        tmp_path / "home",
        "grade",
        "split-heads",
        "--batch",
        str(downloaded(subs)),
        "--export",
        str(tmp_path / "out"),
    )
    assert out.returncode == 0, out.stderr
    book = gradebook(tmp_path / "out")
    assert (book["ann"]["file"], book["ann"]["total"], book["ann"]["files"]) == ("ann.py", "6.0", "1")
    assert (book["bob"]["file"], book["bob"]["total"]) == ("bob.zip/ann.py", "0.0")
    assert book["ann"]["owner_from"] == book["bob"]["owner_from"] == "file"


@pytest.fixture(scope="module")
def moodle(tmp_path_factory) -> dict:
    """Moodle's download in folders and its grading worksheet as the roster: Ann handed in her
    split_heads.py with her own test_split_heads.py beside it, on time; Bo two days late (the
    worksheet says; every folder carries the download's time); Cy's time is in German, which the tutor
    does not read."""
    base = tmp_path_factory.mktemp("moodle")
    subs = moodle_download(
        base / "subs",
        {
            "Ann Lee_101": {"split_heads.py": SOLUTION, "test_split_heads.py": OWN_TESTS},
            "Bo Chan_102": {"split_heads.py": SOLUTION},
            "Cy Dorn_103": {"split_heads.py": SOLUTION},
        },
    )
    worksheet = moodle_worksheet(
        [
            ("101", "Ann Lee", "ann@example.org", "Monday, 4 May 2026, 11:00 PM"),
            ("102", "Bo Chan", "bo@example.org", "Wednesday, 6 May 2026, 10:00 AM"),
            ("103", "Cy Dorn", "cy@example.org", "Mittwoch, 6. Mai 2026, 10:00"),
        ]
    )
    (base / "worksheet.csv").write_text(worksheet, encoding="utf-8")
    out = tutor(
        base / "home",
        "grade",
        "split-heads",
        "--batch",
        str(subs),
        "--format",
        "json",
        "--export",
        str(base / "out"),
        "--roster",
        str(base / "worksheet.csv"),
        "--deadline",
        "2026-05-04",
        "--late-per-day",
        "10",
    )
    return {"out": out, "book": gradebook(base / "out") if out.returncode == 0 else {}}


def test_of_a_students_files_the_exercises_own_is_graded(moodle):
    assert moodle["out"].returncode == 0, moodle["out"].stderr
    ann = moodle["book"]["101"]
    assert (ann["file"], ann["total"], ann["max"], ann["files"]) == (
        "Ann Lee_101_assignsubmission_file_/split_heads.py",
        "6.0",
        "6.0",
        "2",
    )
    assert (ann["picked_because"], ann["owner_from"]) == ("file-name", "moodle")


def test_moodles_worksheet_says_when_each_participant_handed_in(moodle):
    ann, bo = moodle["book"]["101"], moodle["book"]["102"]
    assert (ann["submitted_from"], ann["late_days"], ann["total"]) == ("moodle-worksheet", "0", "6.0")
    assert (bo["submitted_from"], bo["late_days"], bo["total"]) == ("moodle-worksheet", "2", "4.8")


def test_a_worksheet_time_the_tutor_cannot_read_is_no_time_and_said(moodle):
    cy = moodle["book"]["103"]
    assert (cy["submitted_from"], cy["late_days"], cy["total"]) == ("none", "", "6.0")
    err = moodle["out"].stderr
    assert (
        "1 Last modified (submission) of the worksheet is not a time the tutor reads (line 4: Mittwoch" in err
    )
    assert "1 file has no time the tutor can trust (Cy Dorn_103_assignsubmission_file_/split_heads.py)" in err
    assert "one download's stamp" in err  # every folder carries the download's time


def test_blackboards_stamp_counts_in_blackboards_own_layout(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for user, stamp in (("alee", "2026-05-06-10-00-00"), ("bchan", "2026-05-04-10-00-00")):
        (subs / f"Split heads_{user}_attempt_{stamp}_split_heads.py").write_text(SOLUTION, encoding="utf-8")
        (subs / f"Split heads_{user}_attempt_{stamp}.txt").write_text(f"Name: {user}\n", encoding="utf-8")
    out = tutor(
        tmp_path / "home",
        "grade",
        "split-heads",
        "--batch",
        str(downloaded(subs)),
        "--export",
        str(tmp_path / "out"),
        "--deadline",
        "2026-05-04",
        "--late-per-day",
        "10",
    )
    assert out.returncode == 0, out.stderr
    book = gradebook(tmp_path / "out")
    assert [
        (book[u]["owner_from"], book[u]["submitted_from"], book[u]["late_days"], book[u]["total"])
        for u in ("alee", "bchan")
    ] == [("blackboard", "blackboard", "2", "4.8"), ("blackboard", "blackboard", "0", "6.0")]


def test_what_a_student_names_after_the_lms_prefix_changes_nothing():
    from tutor.grading.instructor.provenance import owner_of

    canvas = owner_of("leeann_101_5001_x_7_assignsubmission_file_a_attempt_2026-05-01-00-00-00_b.py")
    assert (canvas.source, canvas.id, canvas.stamp) == ("canvas", "101", None)
    nested = owner_of("Ann Lee_101_assignsubmission_file_/chanbo_102_5002_split_heads.py")
    assert (nested.source, nested.id, nested.own_name) == ("moodle", "101", "chanbo_102_5002_split_heads.py")
    bb = owner_of("Lab_alee_attempt_2026-05-04-10-00-00_x_attempt_2020-01-01-00-00-00_split_heads.py")
    assert (bb.id, bb.own_name) == ("alee", "x_attempt_2020-01-01-00-00-00_split_heads.py")


@pytest.mark.parametrize(
    ("roster", "message"),
    [
        (
            "file,student_id,name\na.py,s1,Ann Lee\nb.py,s1,Bo Chan\n",
            "line 3: student s1 is Bo Chan here but Ann Lee on line 2",
        ),
        (
            moodle_worksheet(
                [("101", "Ann Lee", "ann@example.org", "-"), ("102", "Ann Lee", "ann@example.org", "-")]
            ),
            "line 3: Email address ann@example.org is already on line 2",
        ),
        (CANVAS_ROSTER.replace("S-102", "S-101"), "line 4: SIS User ID S-101 is already on line 3"),
    ],
    ids=["tutor", "moodle", "canvas"],
)
def test_a_roster_listing_a_student_twice_is_refused_naming_both_lines(tmp_path, roster, message):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.py").write_text(SOLUTION, encoding="utf-8")
    (tmp_path / "roster.csv").write_text(roster, encoding="utf-8")
    out = tutor(
        tmp_path / "home",
        "grade",
        "split-heads",
        "--batch",
        str(subs),
        "--export",
        str(tmp_path / "out"),
        "--roster",
        str(tmp_path / "roster.csv"),
    )
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "out").exists()
