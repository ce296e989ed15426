"""`python -m tutor grade` and `exercise` as real subprocesses: exit codes, JSON, batch output,
the workspace never overwritten, hints and submissions recorded, watch mode re-grading on save."""

from __future__ import annotations

import csv
import io
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tutor.progress.store import Store

EX = ROOT / "lessons/01-multi-head/exercises/split-heads"
ALIBI = ROOT / "lessons/03-rope-alibi/exercises/alibi"
GRADE_KEYS = {"exercise", "status", "score", "max_score", "checks", "duration_s", "output"}
CHECK_KEYS = {"name", "status", "message", "hint", "points"}


def tutor(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args],
        capture_output=True,
        text=True,
        env=run_tutor_env(home),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def mhome(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli-home")


@pytest.fixture(scope="module")
def started(mhome) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess, Path]:
    first = tutor(mhome, "exercise", "start", "split-heads")
    ws = mhome / "workspace/split-heads/split_heads.py"
    ws.write_text("# my work\n" + ws.read_text(encoding="utf-8"), encoding="utf-8")
    again = tutor(mhome, "exercise", "start", "split-heads")
    return first, again, ws


def test_start_copies_the_starter_and_never_overwrites(started):
    first, again, ws = started
    assert first.returncode == 0 and f"Created {ws}" in first.stdout
    assert again.returncode == 0 and "Already started" in again.stdout and str(ws) in again.stdout
    assert ws.read_text(encoding="utf-8").startswith("# my work\n")


@pytest.fixture(scope="module")
def starter_json(mhome, started):
    return tutor(mhome, "grade", "split-heads", "--json")


def test_grading_the_starter_exits_1_with_grade_json(starter_json):
    assert starter_json.returncode == 1, starter_json.stderr
    data = json.loads(starter_json.stdout)
    assert set(data) == GRADE_KEYS and data["exercise"] == "split-heads" and data["status"] == "fail"
    assert [c["name"] for c in data["checks"]] == ["shape", "matches_view", "round_trip", "rejects_bad_split"]
    assert all(set(c) == CHECK_KEYS for c in data["checks"])
    assert data["score"] == 0 and data["max_score"] == 6


@pytest.fixture(scope="module")
def passed(mhome, starter_json):
    hint = tutor(mhome, "grade", "split-heads", str(EX / "solution.py"), "--hint", "--lang", "de")
    return hint


def test_reference_passes_in_german_with_a_hint_exit_0(passed):
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.startswith("hint 1/2: `x.view(B, T, n_head, d)` schneidet")
    assert "BESTANDEN  6/6 Punkte" in passed.stdout
    assert "python -m tutor exercise solution split-heads" in passed.stdout


def test_submissions_and_hints_are_recorded(mhome, passed):
    with Store(mhome) as store:
        subs = store.submissions("split-heads")
        assert [s.status for s in subs] == ["fail", "pass"]
        assert subs[1].hints_revealed == 1 and subs[1].score == 6
        import hashlib

        assert subs[1].sha256 == hashlib.sha256((EX / "solution.py").read_bytes()).hexdigest()
        assert [c["status"] for c in subs[0].checks] == ["error", "error", "error", "fail"]
        assert [h.hint for h in store.hint_reveals("split-heads")] == ["0"]


def test_solution_is_shown_only_after_a_pass(mhome, tmp_path, passed):
    fresh = tutor(tmp_path, "exercise", "solution", "split-heads")
    assert fresh.returncode == 2 and "shown after you pass it" in fresh.stderr and "def " not in fresh.stdout
    shown = tutor(mhome, "exercise", "solution", "split-heads")
    assert shown.returncode == 0 and shown.stdout == (EX / "solution.py").read_text(encoding="utf-8")


def test_reset_asks_then_keeps_a_backup(mhome, started, passed):
    _, _, ws = started
    refused = tutor(mhome, "exercise", "reset", "split-heads")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert ws.read_text(encoding="utf-8").startswith("# my work\n")
    done = tutor(mhome, "exercise", "reset", "split-heads", "--yes")
    assert done.returncode == 0
    assert ws.read_text(encoding="utf-8") == (EX / "starter.py").read_text(encoding="utf-8")
    (backup,) = ws.parent.glob("split_heads.py.*.bak")
    assert backup.read_text(encoding="utf-8").startswith("# my work\n")


def test_list_shows_state_and_best_score(mhome, passed):
    out = tutor(mhome, "exercise", "list", "--json")
    rows = {r["id"]: r for r in json.loads(out.stdout)}
    assert rows["split-heads"]["state"] == "passed" and rows["split-heads"]["best_score"] == 6
    assert rows["rope"]["state"] == "new" and set(rows) == {
        "split-heads", "head-count", "three-layers", "rope", "alibi", "context-scaling"
    }  # fmt: skip


def test_usage_errors_exit_2_with_a_message(tmp_path):
    cases = [
        (("grade", "no-such"), "no exercise 'no-such'"),
        (("grade", "rope"), "exercise start rope"),
        (("grade", "rope", str(tmp_path / "missing.py")), "missing.py: no such file"),
        (("grade", "rope", "--timeout", "0"), "--timeout must be between 0 and 600"),
        (("exercise", "start"), "needs an exercise id"),
    ]
    for args, message in cases:
        out = tutor(tmp_path, *args)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_a_file_that_does_not_load_is_exit_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def split_heads(:\n", encoding="utf-8")
    out = tutor(tmp_path, "grade", "split-heads", str(bad), "--json")
    assert out.returncode == 2
    data = json.loads(out.stdout)
    assert data["status"] == "error" and "syntax error in line 1" in data["checks"][0]["message"]


# --- batch ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("submissions")
    (d / "anna.py").write_bytes((ALIBI / "solution.py").read_bytes())
    (d / "ben.py").write_bytes((ALIBI / "broken/wrong_sign.py").read_bytes())
    (d / "cleo.py").write_bytes(b"\xff\xfe not utf-8")
    (d / "dan.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    (d / "notes.txt").write_text("not graded", encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def batch_json(batch_dir, tmp_path_factory):
    return tutor(
        tmp_path_factory.mktemp("h"), "grade", "alibi", "--batch", str(batch_dir), "--format", "json"
    )


def test_batch_json_has_one_grade_per_py_file(batch_json):
    assert batch_json.returncode == 0, batch_json.stderr
    data = json.loads(batch_json.stdout)
    assert data["exercise"] == "alibi"
    rows = {r["file"]: r for r in data["results"]}
    assert list(rows) == ["anna.py", "ben.py", "cleo.py", "dan.py"]
    assert all(set(r["grade"]) == GRADE_KEYS for r in rows.values())
    status = {f: r["grade"]["status"] for f, r in rows.items()}
    assert status == {"anna.py": "pass", "ben.py": "fail", "cleo.py": "error", "dan.py": "error"}
    assert "not UTF-8" in rows["cleo.py"]["grade"]["checks"][0]["message"]
    assert "sys.exit(0)" in rows["dan.py"]["grade"]["checks"][0]["message"]


def test_batch_table_and_csv(batch_dir, tmp_path):
    small = tmp_path / "two"
    small.mkdir()
    for name in ("ben.py", "cleo.py"):
        (small / name).write_bytes((batch_dir / name).read_bytes())
    table = tutor(tmp_path, "grade", "alibi", "--batch", str(small))
    lines = table.stdout.splitlines()
    assert table.returncode == 0 and lines[0].split()[:3] == ["file", "status", "score"]
    assert any(line.startswith("ben.py") and "fail" in line and "bias_values" in line for line in lines)
    assert lines[-1] == "0 of 2 passed"
    out = tutor(tmp_path, "grade", "alibi", "--batch", str(small), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["file"], r["status"], r["first_failure"]) for r in rows] == [
        ("ben.py", "fail", "bias_values"),
        ("cleo.py", "error", "slopes_8"),
    ]
    assert rows[0]["score"] == "5.0" and rows[0]["max_score"] == "7.0" and len(rows[0]["sha256"]) == 64


# --- watch --------------------------------------------------------------------------------------------


def test_watch_regrades_on_save_and_stops_cleanly_on_ctrl_c(tmp_path):
    home = tmp_path / "home"
    sub = tmp_path / "mine.py"
    sub.write_bytes((EX / "starter.py").read_bytes())
    proc = subprocess.Popen(
        [PYTHON, "-m", "tutor", "grade", "split-heads", str(sub), "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=run_tutor_env(home),
    )
    try:
        first = json.loads(proc.stdout.readline())
        assert first["status"] == "fail"
        time.sleep(0.05)
        sub.write_bytes((EX / "solution.py").read_bytes())  # "save" in the editor
        second = json.loads(proc.stdout.readline())
        assert second["status"] == "pass"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=20)
    finally:
        proc.kill() if proc.poll() is None else None
    err = proc.stderr.read()
    assert code == 0 and "stopped watching" in err and "Traceback" not in err
    with Store(home) as store:
        assert [s.status for s in store.submissions("split-heads")] == ["fail", "pass"]
