"""`python -m tutor grade` and `exercise` as real subprocesses: exit codes, JSON, batch output,
the workspace never overwritten, hints and submissions recorded, watch mode re-grading on save."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env, tutor_here
from tests.grading_helpers import exercise_course, tutor
from tutor.progress.store import Store

EX = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads"
ALIBI = ROOT / "tutor/lessons/03-rope-alibi/exercises/alibi"
GRADE_KEYS = {
    "version",
    "exercise",
    "status",
    "score",
    "max_score",
    "checks",
    "duration_s",
    "output",
    "isolation",
    "seed",
}
# in docs/formats.md's order
CHECK_KEYS = ["name", "title", "status", "message", "hint", "points", "max_points"]


PROBE_TOML = """
id = "probe"
file_name = "probe.py"
section = "probe"
timeout_s = 10
title = { en = "Probe" }
task = { en = "Write add(a, b) and neg(x)." }
hints = [{ en = "first hint" }, { en = "second hint" }]

[[checks]]
id = "add"
points = 2
title = { en = "adds" }
hint = { en = "use +" }

[[checks]]
id = "neg"
title = { en = "negates" }
hint = { en = "use -x" }
"""
PROBE_CHECKS = """
from tutor.grading.kit import expect


def check_add(learner):
    expect(learner.add(2, 3), 5)
    return "2 + 3 = 5"


def check_neg(learner):
    expect(learner.neg(4), -4)
"""
PROBE_SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef neg(x):\n    return -x\n"
PROBE_WRONG = "def add(a, b):\n    return a + b\n\n\ndef neg(x):\n    return x\n"
PROBE_STARTER = (
    "def add(a, b):\n    raise NotImplementedError\n\n\ndef neg(x):\n    raise NotImplementedError\n"
)


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    """A one-lesson course whose exercise needs no torch: the CLI paths, fast."""
    files = {
        "exercise.toml": PROBE_TOML,
        "checks.py": PROBE_CHECKS,
        "solution.py": PROBE_SOLUTION,
        "starter.py": PROBE_STARTER,
    }
    return exercise_course(tmp_path_factory.mktemp("lessons"), files, shipped=False, order=1)


@pytest.fixture(scope="module")
def mhome(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli-home")


def probe(home: Path, lessons: Path, *args: str) -> subprocess.CompletedProcess:
    return tutor(home, *args, "--lessons", str(lessons))


@pytest.fixture(scope="module")
def started(mhome, lessons):
    first = probe(mhome, lessons, "exercise", "start", "probe")
    ws = mhome / "workspace/probe/probe.py"
    ws.write_text("# my work\n" + ws.read_text(encoding="utf-8"), encoding="utf-8")
    again = probe(mhome, lessons, "exercise", "start", "probe")
    return first, again, ws


def test_start_copies_the_starter_and_never_overwrites(started):
    first, again, ws = started
    assert first.returncode == 0 and f"Created {ws}" in first.stdout
    assert again.returncode == 0 and "Already started" in again.stdout and str(ws) in again.stdout
    assert ws.read_text(encoding="utf-8").startswith("# my work\n")


@pytest.fixture(scope="module")
def starter_json(mhome, lessons, started):
    return probe(mhome, lessons, "grade", "probe", "--json")


def test_grading_the_starter_exits_1_with_grade_json(starter_json):
    assert starter_json.returncode == 1, starter_json.stderr
    data = json.loads(starter_json.stdout)
    assert set(data) == GRADE_KEYS and data["exercise"] == "probe" and data["status"] == "fail"
    assert list(data)[0] == "version" and data["version"] == 1  # the format's, first as in docs/formats.md
    assert [c["name"] for c in data["checks"]] == ["add", "neg"]
    assert all(list(c) == CHECK_KEYS for c in data["checks"])
    assert [(c["title"], c["max_points"]) for c in data["checks"]] == [("adds", 2), ("negates", 1)]
    assert data["score"] == 0 and data["max_score"] == 3
    assert data["checks"][0]["hint"] == "use +" and "NotImplementedError" in data["checks"][0]["message"]


@pytest.fixture(scope="module")
def solution_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sol") / "mine.py"
    path.write_text(PROBE_SOLUTION, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def passed(mhome, lessons, starter_json, solution_file):
    return probe(mhome, lessons, "grade", "probe", str(solution_file), "--hint")


def test_a_pass_exits_0_and_shows_the_hint_first(passed):
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.startswith("hint 1/2: first hint\n")
    assert "probe — Probe: PASS  3/3 points" in passed.stdout
    assert "python -m tutor exercise solution probe" in passed.stdout


def test_submissions_and_hints_are_recorded(mhome, passed, solution_file):
    with Store(mhome) as store:
        subs = store.submissions("probe")
        assert [s.status for s in subs] == ["fail", "pass"]
        assert subs[1].hints_revealed == 1 and subs[1].score == 3
        assert subs[1].sha256 == hashlib.sha256(solution_file.read_bytes()).hexdigest()
        assert [c["status"] for c in subs[0].checks] == ["error", "error"]
        assert [h.hint for h in store.hint_reveals("probe")] == ["0"]


def test_solution_is_shown_only_after_a_pass(mhome, lessons, tmp_path, passed):
    fresh = probe(tmp_path, lessons, "exercise", "solution", "probe")
    assert fresh.returncode == 2 and "shown after you pass it" in fresh.stderr and "def " not in fresh.stdout
    shown = probe(mhome, lessons, "exercise", "solution", "probe")
    assert shown.returncode == 0 and shown.stdout == PROBE_SOLUTION


def test_reset_asks_then_keeps_a_backup(mhome, lessons, started, passed):
    _, _, ws = started
    refused = probe(mhome, lessons, "exercise", "reset", "probe")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert ws.read_text(encoding="utf-8").startswith("# my work\n")
    done = probe(mhome, lessons, "exercise", "reset", "probe", "--yes")
    assert done.returncode == 0
    assert ws.read_text(encoding="utf-8") == PROBE_STARTER
    (backup,) = ws.parent.glob("probe.py.*.bak")
    assert backup.read_text(encoding="utf-8").startswith("# my work\n")


def test_list_shows_state_and_best_score(mhome, lessons, passed):
    rows = json.loads(probe(mhome, lessons, "exercise", "list", "--json").stdout)
    assert [(r["id"], r["state"], r["best_score"], r["max_score"]) for r in rows] == [
        ("probe", "passed", 3, 3)
    ]
    shipped = {r["id"]: r["state"] for r in json.loads(tutor(mhome, "exercise", "list", "--json").stdout)}
    assert shipped == dict.fromkeys(
        ["head-count", "split-heads", "three-layers", "alibi", "context-scaling", "rope"], "new"
    )


def test_a_failing_grade_says_what_is_wrong_and_the_fix_comes_one_hint_at_a_time(lessons, tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(PROBE_WRONG, encoding="utf-8")
    shown = []
    for extra in ((), ("--hint",), ("--hint",)):
        shown.append(probe(tmp_path, lessons, "grade", "probe", str(wrong), *extra).stdout)
    first, second, third = shown
    assert "expected" in first and "use -x" not in first
    assert "--hint shows hint 1 of 2" in first
    assert second.startswith("hint 1/2: first hint") and "use -x" not in second and "hint 2 of 2" in second
    assert third.startswith("hint 2/2: second hint") and "hint: use -x" in third  # all seen: the check's own


def test_list_shows_the_latest_grade_beside_the_best(lessons, tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(PROBE_WRONG, encoding="utf-8")
    right = tmp_path / "right.py"
    right.write_text(PROBE_SOLUTION, encoding="utf-8")
    for path in (right, wrong):  # passed first, then a worse file
        probe(tmp_path, lessons, "grade", "probe", str(path))
    (row,) = json.loads(probe(tmp_path, lessons, "exercise", "list", "--json").stdout)
    assert (row["state"], row["best_score"], row["latest_status"], row["latest_score"]) == (
        "passed",
        3,
        "fail",
        2,
    )
    text = probe(tmp_path, lessons, "exercise", "list").stdout
    assert "3/3  fail 2/3" in text


def test_the_split_heads_reference_passes_in_german(tmp_path):
    out = tutor(tmp_path, "--lang", "de", "grade", "split-heads", str(EX / "solution.py"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "split-heads — In Köpfe aufteilen und wieder zusammensetzen: BESTANDEN  6/6 Punkte" in out.stdout
    assert "Bestanden. Die Referenzlösung: python -m tutor exercise solution split-heads" in out.stdout


def test_usage_errors_exit_2_with_a_message(tmp_path):
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    cases = [
        (("grade", "no-such"), "no exercise 'no-such'"),
        (("grade", "rope"), "exercise start rope"),
        (("grade", "rope", str(tmp_path / "missing.py")), "missing.py: no such file"),
        (("grade", "rope", "--timeout", "0"), "--timeout must be between 0 and 600"),
        (("exercise", "start"), "needs an exercise id"),
        (("exercise", "start", "rope", "--home", str(tmp_path / "a-file")), "cannot create "),
        (("grade", "head-count", "--batch", str(tmp_path)), "--batch grades code exercises"),
    ]
    for i, (args, message) in enumerate(cases):  # the first as a real process, the rest in this one
        out = tutor(tmp_path, *args) if i == 0 else tutor_here(*args, home=tmp_path)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr
    assert cold_judges_running() == []  # the judge a grade starts early ends with the refused command


def cold_judges_running() -> list[int]:
    """The pids of judges (judge.py, not a warm one) this process started that are still running."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            argv = stat.with_name("cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and any(a.endswith(b"judge.py") for a in argv) and b"--zygote" not in argv:
            found.append(int(stat.parent.name))
    return found


def test_a_file_that_does_not_load_is_exit_2(tmp_path, lessons):
    bad = tmp_path / "bad.py"
    bad.write_text("def add(:\n", encoding="utf-8")
    out = probe(tmp_path, lessons, "grade", "probe", str(bad), "--json")
    assert out.returncode == 2
    data = json.loads(out.stdout)
    assert data["status"] == "error" and "syntax error in line 1" in data["checks"][0]["message"]
    assert data["checks"][1]["status"] == "skipped"


# --- batch ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("submissions")
    (d / "anna.py").write_text(PROBE_SOLUTION, encoding="utf-8")
    (d / "ben.py").write_text(PROBE_WRONG, encoding="utf-8")
    (d / "cleo.py").write_bytes(b"\xff\xfe not utf-8")
    (d / "dan.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    (d / "notes.txt").write_text("not graded", encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def batch_outputs(
    batch_dir, lessons, tmp_path_factory
) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """The folder graded as a table (the default), JSON and CSV, the three at once: (home, output)."""
    homes = {fmt: tmp_path_factory.mktemp(f"batch-{fmt}") for fmt in ("table", "json", "csv")}

    def run(fmt: str) -> tuple[Path, subprocess.CompletedProcess]:
        chosen = () if fmt == "table" else ("--format", fmt)
        return homes[fmt], probe(homes[fmt], lessons, "grade", "probe", "--batch", str(batch_dir), *chosen)

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(homes, pool.map(run, homes), strict=True))


def test_batch_json_has_one_grade_per_py_file(batch_outputs):
    tmp_path, out = batch_outputs["json"]
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["exercise"] == "probe"
    rows = {r["file"]: r for r in data["results"]}
    assert list(rows) == ["anna.py", "ben.py", "cleo.py", "dan.py"]
    assert all(set(r["grade"]) == GRADE_KEYS for r in rows.values())
    status = {f: r["grade"]["status"] for f, r in rows.items()}
    assert status == {"anna.py": "pass", "ben.py": "fail", "cleo.py": "error", "dan.py": "error"}
    assert "not UTF-8" in rows["cleo.py"]["grade"]["checks"][0]["message"]
    assert "sys.exit(0)" in rows["dan.py"]["grade"]["checks"][0]["message"]
    assert (
        not (tmp_path / "progress.sqlite3").exists() or not Store(tmp_path).submissions()
    )  # batch records nothing


def test_batch_table_and_csv(batch_outputs):
    _, table = batch_outputs["table"]
    lines = table.stdout.splitlines()
    assert table.returncode == 0 and lines[0].split()[:3] == ["file", "status", "score"]
    assert any(line.startswith("ben.py") and "fail" in line and "neg" in line for line in lines)
    assert lines[-2:] == ["1 of 4 passed", "3 files graded in a strong box"]  # cleo's was not UTF-8
    _, out = batch_outputs["csv"]
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["file"], r["status"], r["first_failure"], r["score"]) for r in rows] == [
        ("anna.py", "pass", "", "3.0"),
        ("ben.py", "fail", "neg", "2.0"),
        ("cleo.py", "error", "add", "0.0"),
        ("dan.py", "error", "add", "0.0"),
    ]
    assert rows[1]["message"] == "neg(4): expected -4, got 4" and len(rows[1]["sha256"]) == 64


@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
def test_batch_keeps_the_timeout_given_for_the_loading_and_for_each_check_naming_the_phase_that_hung(
    lessons, tmp_path
):
    """--timeout 2: a file that hangs while loading, one that hangs in its second check (the first keeps
    its points), and one whose two checks take 1.3 s each (2.6 s in all, each check within its own 2 s)."""
    d = tmp_path / "subs"
    d.mkdir()
    (d / "loops.py").write_text("while True:\n    pass\n", encoding="utf-8")
    (d / "hangs.py").write_text(
        PROBE_SOLUTION.replace("return -x", "while True:\n        pass"), encoding="utf-8"
    )
    slow = "import time\n\n\ndef add(a, b):\n    time.sleep(1.3)\n    return a + b\n\n\ndef neg(x):\n    time.sleep(1.3)\n    return -x\n"
    (d / "slow.py").write_text(slow, encoding="utf-8")
    out = probe(
        tmp_path,
        lessons,
        "grade",
        "probe",
        "--batch",
        str(d),
        "--timeout",
        "2",
        "--jobs",
        "3",
        "--format",
        "json",
    )
    rows = {r["file"]: r["grade"] for r in json.loads(out.stdout)["results"]}
    loops, hangs = rows["loops.py"], rows["hangs.py"]
    assert (loops["status"], loops["checks"][0]["message"]) == (
        "timeout",
        "timed out after 2 s while loading your file",
    )
    assert (hangs["status"], hangs["score"]) == ("timeout", 2)  # add passed before neg hung
    assert [(c["status"], c["points"]) for c in hangs["checks"]] == [("pass", 2), ("timeout", 0)]
    assert hangs["checks"][1]["message"] == (
        "timed out after 2 s while the check negates [neg] ran (each check has its own time limit; the checks"
        " before it keep their points)"
    )
    assert (rows["slow.py"]["status"], rows["slow.py"]["score"]) == ("pass", 3), rows["slow.py"]
    assert rows["slow.py"]["duration_s"] > 2.6


@pytest.mark.slow  # by default test_grading_lang and test_grading_sandbox batch split-heads through the CLI
def test_batch_grades_a_real_exercise(tmp_path):
    d = tmp_path / "subs"
    d.mkdir()
    (d / "ok.py").write_bytes((ALIBI / "solution.py").read_bytes())
    (d / "sign.py").write_bytes((ALIBI / "broken/wrong_sign.py").read_bytes())
    out = tutor(tmp_path, "grade", "alibi", "--batch", str(d), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["file"], r["status"], r["first_failure"]) for r in rows] == [
        ("ok.py", "pass", ""),
        ("sign.py", "fail", "bias_values"),
    ]


# --- watch --------------------------------------------------------------------------------------------


def test_watch_regrades_on_save_and_stops_cleanly_on_ctrl_c(tmp_path, lessons):
    home = tmp_path / "home"
    sub = tmp_path / "mine.py"
    sub.write_text(PROBE_STARTER, encoding="utf-8")
    proc = subprocess.Popen(
        [PYTHON, "-m", "tutor", "grade", "probe", str(sub), "--watch", "--json", "--lessons", str(lessons)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=run_tutor_env(home),
    )
    try:
        first = json.loads(proc.stdout.readline())
        assert first["status"] == "fail"
        sub.write_text(PROBE_SOLUTION, encoding="utf-8")  # "save" in the editor
        second = json.loads(proc.stdout.readline())
        assert second["status"] == "pass"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read()
    assert code == 0 and "stopped watching" in err and "Traceback" not in err
    with Store(home) as store:
        assert [s.status for s in store.submissions("probe")] == ["fail", "pass"]


@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
def test_tutor_check_reports_a_starter_that_passes(lessons, tmp_path):
    import shutil

    course = tmp_path / "lessons"
    shutil.copytree(lessons, course)
    good = tutor(tmp_path, "check", "--lessons", str(course))
    assert good.returncode == 0, good.stdout
    (course / "01-probe/exercises/probe/starter.py").write_text(PROBE_SOLUTION, encoding="utf-8")
    bad = tutor(tmp_path, "check", "--lessons", str(course))
    assert bad.returncode == 2
    assert "exercises/probe/starter.py: the starter of 'probe' passes every check; it must fail" in bad.stdout
