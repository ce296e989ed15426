"""`python -m tutor class DIR`: the instructor's view of a served class, read from real learner homes
(stores written by the Store API, real workspace files) and graded by the real grader."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from fsrs import Rating
from rich.cells import cell_len

from tests.conftest import tutor_here
from tests.grading_helpers import SOLUTION, probe_course
from tutor.progress.db import local_now
from tutor.progress.schema import FILE_NAME
from tutor.progress.store import Store
from tutor.quiz.schedule import review

WRONG = SOLUTION.replace("return xs[-1]", "return xs[0]")  # three checks of four pass


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The shipped lessons (real sections and quiz) and the probe exercise (cheap to grade)."""
    return probe_course(tmp_path_factory.mktemp("course"))


def _workspace_file(folder: Path, learner: str, text: str) -> Path:
    path = folder / "learners" / learner / "workspace/probe/probe.py"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def totals(course) -> tuple[int, int]:
    """The course's sections and quiz questions, all lessons together."""
    from tutor.course import open_course

    lessons = open_course(course).lessons
    return sum(len(x.sections) for x in lessons), sum(len(x.quiz) for x in lessons)


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    """A class folder as `serve --roster` leaves it: ada with progress and a passing file, bo with a
    home but no store and a failing file, cy who never opened her link, eve whose workspace file is a
    link to ada's, fay whose workspace folder is a link to ada's."""
    folder = tmp_path_factory.mktemp("class")
    learners = [
        ("ada", "Ada Lovelace", "en"),
        ("bo", "Bo 博", "zh"),
        ("cy", "Cy", "de"),
        ("eve", "Eve", "en"),
        ("fay", "Fay", "en"),
    ]
    rows = [{"id": i, "name": n, "language": lang} for i, n, lang in learners]
    (folder / "class.json").write_text(json.dumps({"learners": rows}), encoding="utf-8")
    past = local_now() - timedelta(days=3)
    with Store(folder / "learners/ada") as store:
        store.mark_read("positions", "order-blind")
        store.mark_read("positions", "two-lines")
        store.record_answer(
            "positions", "shuffle-equivariance", "p-times", True, card=review(None, Rating.Good, local_now())
        )
        store.record_answer(
            "positions", "why-end-in-jin", "x", False, card=review(None, Rating.Again, past), at=past
        )  # due today
        store.record_submission("probe", sha256="0" * 64, status="fail", score=1, max_score=4, at=past)
        store.record_submission("probe", sha256="1" * 64, status="pass", score=4, max_score=4)
    ada = _workspace_file(folder, "ada", SOLUTION)
    _workspace_file(folder, "bo", WRONG)
    (folder / "learners/eve/workspace/probe").mkdir(parents=True)
    (folder / "learners/eve/workspace/probe/probe.py").symlink_to(ada)
    (folder / "learners/fay").mkdir(parents=True)
    (folder / "learners/fay/workspace").symlink_to(folder / "learners/ada/workspace")
    return folder


@pytest.fixture(scope="module")
def shown(klass, course) -> dict:
    """The class as a table and as JSON (the table at 80 columns)."""
    os.environ["COLUMNS"] = "80"
    try:
        table = tutor_here("class", str(klass), "--lessons", str(course))
    finally:
        del os.environ["COLUMNS"]
    as_json = tutor_here("class", str(klass), "--json", "--lessons", str(course))
    return {"table": table, "json": as_json}


def test_the_table_shows_each_learners_progress_and_best_grade_within_80_columns(shown, klass, totals):
    sections, questions = totals
    out = shown["table"]
    assert out.returncode == 0, out.stderr
    assert max(cell_len(line) for line in out.stdout.splitlines()) <= 80, out.stdout
    progress, grades = out.stdout.split("Best recorded grade per exercise")
    rows = {line.split()[0]: line.split() for line in progress.splitlines() if line.strip()}
    # the progress table: id, name, language, sections read, quiz answered, right, due today
    assert rows["ada"][3:] == ["en", f"2/{sections}", f"2/{questions}", "1", "1"]
    assert rows["bo"][2:] == ["博", "zh", f"0/{sections}", f"0/{questions}", "0", "0"]
    assert "note: cy has not opened their link yet" in out.stderr
    words = grades.split()  # an exercise id over two lines at its hyphen, never folded inside a word
    assert {"context-", "scaling", "head-", "count", "three-", "layers"} <= set(words), grades
    assert str(klass / "learners/cy") in out.stderr
    # the grades table: the probe is the last column; ada's best of her two grades is the pass
    rows = {line.split()[0]: line.split() for line in grades.splitlines() if line.strip()}
    assert rows["learner"][-1] == "probe"
    assert rows["ada"][-2:] == ["4/4", "✓"] and rows["bo"][-1] == "-"


def test_the_json_has_the_same_for_other_tools(shown, klass, totals):
    sections, questions = totals
    out = shown["json"]
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    learners = {x["id"]: x for x in data["learners"]}
    assert list(learners) == ["ada", "bo", "cy", "eve", "fay"]
    ada = learners["ada"]
    assert (ada["name"], ada["language"], ada["state"], ada["problem"]) == ("Ada Lovelace", "en", "ok", None)
    assert (ada["sections_read"], ada["sections_total"]) == (2, sections)
    assert ada["quiz"] == {"questions": questions, "answered": 2, "correct": 1, "due": 1}
    positions = next(x for x in ada["lessons"] if x["id"] == "positions")
    assert positions["sections_read"] == 2 and positions["quiz"]["answered"] == 2
    assert ada["exercises"]["probe"] == {
        "status": "pass",
        "score": 4.0,
        "max_score": 4.0,
        "attempts": 2,
        "passed": True,
    }
    assert ada["exercises"]["rope"] is None
    assert learners["cy"]["state"] == "new" and learners["cy"]["sections_read"] == 0
    assert learners["bo"]["quiz"] == {"questions": questions, "answered": 0, "correct": 0, "due": 0}
    assert "graded" not in data
    assert not (klass / "learners/bo" / FILE_NAME).exists()  # reading made no store
    assert [lesson["id"] for lesson in data["lessons"]][-1] == "probe-lesson"


def test_grade_grades_every_learners_file_as_one_batch_and_exports_it(klass, course, tmp_path):
    out_dir = tmp_path / "out"
    out = tutor_here(
        "class",
        str(klass),
        "--grade",
        "--jobs",
        "2",
        "--export",
        str(out_dir),
        "--json",
        "--lessons",
        str(course),
    )
    assert out.returncode == 0, out.stderr
    graded = {g["exercise"]: g["results"] for g in json.loads(out.stdout)["graded"]}
    # nobody started a shipped exercise; fay's linked workspace folder is refused for each
    assert [r["learner"] for r in graded["rope"]] == ["fay"]
    rows = {r["learner"]: r for r in graded["probe"]}
    assert list(rows) == ["ada", "bo", "eve", "fay"]  # cy has no file
    assert rows["ada"]["grade"]["status"] == "pass" and rows["ada"]["file"] == "ada/probe.py"
    assert rows["ada"]["sha256"] == hashlib.sha256(SOLUTION.encode()).hexdigest()
    assert (rows["bo"]["grade"]["status"], rows["bo"]["grade"]["score"]) == ("fail", 3.0)
    # a link is never followed: neither a linked file nor a linked folder gets ada's pass
    for who, where in (("eve", "eve/workspace/probe/probe.py"), ("fay", "fay/workspace")):
        assert rows[who]["grade"]["status"] == "error", rows[who]
        assert f"{where} is a symbolic link" in rows[who]["grade"]["checks"][0]["message"]
    book = list(csv.DictReader((out_dir / "probe/gradebook.csv").open(encoding="utf-8")))
    assert [(r["student_id"], r["name"], r["status"], r["in_roster"]) for r in book] == [
        ("ada", "Ada Lovelace", "pass", "yes"),
        ("bo", "Bo 博", "fail", "yes"),
        ("eve", "Eve", "error", "yes"),
        ("fay", "Fay", "error", "yes"),
    ]
    assert [r["isolation"] for r in book] == ["strong", "strong", "none", "none"]  # links: no code ran
    checks = list(csv.DictReader((out_dir / "probe/checks.csv").open(encoding="utf-8")))
    assert ("bo", "last", "fail") in {(r["student_id"], r["check"], r["status"]) for r in checks}
    assert sorted(p.name for p in (out_dir / "probe/feedback").iterdir()) == [
        "ada.md",
        "bo.md",
        "eve.md",
        "fay.md",
    ]
    with Store(klass / "learners/ada") as store:  # a batch grade is recorded nowhere
        assert len(store.submissions()) == 2


def test_the_graded_table_says_which_box_the_files_had(klass, course):
    out = tutor_here("class", str(klass), "--grade", "--lessons", str(course))
    assert out.returncode == 0, out.stderr
    assert "2 files graded in a strong box" in out.stdout.splitlines(), out.stdout  # ada's and bo's


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no class file"),
        ("{not json", "is not valid JSON"),
        ('{"people": []}', "is not a class file"),
        ('{"learners": [{"id": "ada", "name": "A"}]}', "learner 1: each learner needs id, name and language"),
        (
            '{"learners": [{"id": "../ada", "name": "A", "language": "en"}]}',
            "learner 1: the id ../ada cannot name a learner's folder",
        ),
        (
            '{"learners": [{"id": "ada", "name": "A", "language": "en"}, {"id": "ADA", "name": "B", '
            '"language": "en"}]}',
            "learner 2: the id ADA is already learner 1's",
        ),
    ],
)
def test_a_missing_or_malformed_class_file_is_exit_2_naming_it(tmp_path, content, says):
    if content is not None:
        (tmp_path / "class.json").write_text(content, encoding="utf-8")
    (tmp_path / "learners/ada").mkdir(parents=True)
    out = tutor_here("class", str(tmp_path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"error: {tmp_path / 'class.json'}") or out.stderr.startswith(
        "error: no class"
    )
    assert says in out.stderr and "Traceback" not in out.stderr


def test_an_unreadable_store_is_shown_as_unreadable_and_left_as_it_is(tmp_path, course):
    """A file that is not a store is named and left alone (the app would move it aside; the view
    only reads), a home that is a link to another's is not followed; the others are shown, then
    exit 2."""
    rows = [{"id": i, "name": i.upper(), "language": "de"} for i in ("ada", "bo", "cy")]
    (tmp_path / "class.json").write_text(json.dumps({"learners": rows}), encoding="utf-8")
    (tmp_path / "learners/ada").mkdir(parents=True)
    store = tmp_path / "learners/ada" / FILE_NAME
    store.write_bytes(b"not a database at all")
    with Store(tmp_path / "learners/bo") as bo:
        bo.mark_read("positions", "order-blind")
    (tmp_path / "learners/cy").symlink_to(tmp_path / "learners/bo")
    out = tutor_here("class", str(tmp_path), "--json", "--lessons", str(course), "--lang", "de")
    assert out.returncode == 2
    learners = {x["id"]: x for x in json.loads(out.stdout)["learners"]}
    assert learners["ada"]["state"] == "unreadable" and learners["ada"]["quiz"] is None
    assert str(store) in learners["ada"]["problem"]
    assert learners["bo"]["sections_read"] == 1
    cy = tmp_path / "learners/cy"
    assert learners["cy"]["state"] == "unreadable" and learners["cy"]["sections_read"] is None
    assert learners["cy"]["problem"] == f"{cy} ist ein symbolischer Link, der nicht verfolgt wird"
    assert f"Hinweis: der Fortschritt von ada ist nicht lesbar und wird als ? gezeigt: {store}" in out.stderr
    assert out.stderr.rstrip().endswith(
        "der Fortschritt von 2 Personen war nicht lesbar (siehe die Hinweise oben)"
    )
    assert store.read_bytes() == b"not a database at all"
    assert sorted(p.name for p in store.parent.iterdir()) == [FILE_NAME]


def test_grade_options_need_grade(tmp_path):
    out = tutor_here("class", str(tmp_path), "--export", str(tmp_path / "out"))
    assert (out.returncode, out.stderr) == (2, "error: --jobs and --export go with --grade\n")


def test_a_learner_writing_meanwhile_neither_waits_nor_is_waited_for(tmp_path, course):
    """A learner's session in the middle of a write: the view reads the last committed state at once,
    and the session's write then commits (the view held no lock)."""
    (tmp_path / "class.json").write_text(
        json.dumps({"learners": [{"id": "ada", "name": "A", "language": "en"}]}), encoding="utf-8"
    )
    with Store(tmp_path / "learners/ada") as store:
        store.mark_read("positions", "order-blind")
        with store.db.write() as conn:  # the write lock held, a row not yet committed
            conn.execute(
                "INSERT INTO section_reads (lesson, section, first_at, last_at) VALUES (?, ?, ?, ?)",
                ("positions", "two-lines", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00"),
            )
            during = tutor_here("class", str(tmp_path), "--json", "--lessons", str(course))
        after = tutor_here("class", str(tmp_path), "--json", "--lessons", str(course))
        assert len(store.sections_read()) == 2
    assert during.returncode == 0, during.stderr
    assert json.loads(during.stdout)["learners"][0]["sections_read"] == 1
    assert json.loads(after.stdout)["learners"][0]["sections_read"] == 2


def test_before_a_deadline_the_best_grade_is_the_best_recorded_by_then(klass, course):
    """ada's fail was recorded three days ago, her pass today: before yesterday's end, her best is the fail."""
    day = (local_now() - timedelta(days=1)).date().isoformat()
    os.environ["COLUMNS"] = "80"
    try:
        out = tutor_here("class", str(klass), "--lessons", str(course), "--before", day)
    finally:
        del os.environ["COLUMNS"]
    assert out.returncode == 0, out.stderr
    grades = out.stdout.split(f"Best recorded grade per exercise before {day}")[1]
    ada = next(line.split() for line in grades.splitlines() if line.split()[:1] == ["ada"])
    assert ada[-1] == "1/4", grades
    as_json = tutor_here("class", str(klass), "--json", "--lessons", str(course), "--before", day)
    data = json.loads(as_json.stdout)
    assert data["before"].startswith(f"{day}T23:59:59")
    assert data["learners"][0]["exercises"]["probe"]["score"] == 1
    bad = tutor_here("class", str(klass), "--lessons", str(course), "--before", "next friday")
    assert bad.returncode == 2 and "--before takes a date or a time such as 2026-05-04" in bad.stderr
