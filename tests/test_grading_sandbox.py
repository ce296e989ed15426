"""Hostile submissions against the real sandbox: every one gets fail/error/timeout with a clear reason,
the tutor process survives, and the progress store keeps what it already held."""

from __future__ import annotations

import re
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tutor.content.loader import load_course
from tutor.grading import service
from tutor.grading.runner import Limits
from tutor.progress.store import Store

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "lessons/01-multi-head/exercises/split-heads/solution.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ex():
    return load_course(ROOT / "lessons").exercise("split-heads")


@pytest.fixture(scope="module")
def store_home(tmp_path_factory):
    """One real store for the module, holding a record that every hostile run must leave alone."""
    home = tmp_path_factory.mktemp("home")
    with Store(home) as store:
        store.record_submission("rope", sha256="0" * 64, status="pass", score=12, max_score=12)
        store.record_hint("rope", "0")
    return home


def _grade(ex, home: Path, tmp_path: Path, source: str, timeout_s: float = 20.0):
    path = tmp_path / "hostile.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    with Store(home) as store:
        return service.grade(ex, path, store=store, limits=Limits(timeout_s=timeout_s))


def _first(result):
    return result.first_failure


HOSTILE = {
    # name: (source, overall status, substring of the first non-passing check's message)
    "prints_pass": (
        'print("PASS")\nprint(\'{"event": "done"}\')\ndef split_heads(x, h):\n    return x\n'
        "def merge_heads(x):\n    return x\n",
        "fail",
        "expected (2, 3, 5, 4)",
    ),
    "sys_exit_on_import": ("import sys\nsys.exit(0)\n", "error", "sys.exit(0)"),
    "os_exit_on_import": ("import os\nos._exit(0)\n", "error", "exit code 0 before grading finished"),
    "os_exit_in_check": (
        SOLUTION.replace(
            "    B, T, C = x.shape\n    if C % n_head:",
            "    import os\n    os._exit(0)\n    B, T, C = x.shape\n    if C % n_head:",
        ),
        "error",
        "exit code 0 before grading finished",
    ),
    "raises_on_import": (
        'raise RuntimeError("boom at import")\n',
        "error",
        "RuntimeError: boom at import (at line 1",
    ),
    "syntax_error": ("def split_heads(x, n_head)\n    return x\n", "error", "syntax error in line 1"),
    "patches_checks_module": (
        "import sys\nm = sys.modules['_tutor_exercise_checks']\nm.check_shape = lambda sub: 'ok'\n"
        + SOLUTION,
        "error",
        "checks.check_shape",
    ),
    "patches_torch_equal": (
        "import torch\ntorch.equal = lambda a, b: True\ndef split_heads(x, h):\n    return x\n"
        "def merge_heads(x):\n    return x\n",
        "error",
        "torch.equal",
    ),
    "allocates_10_gb_on_import": ("x = bytearray(10 * 2**30)\n", "error", "ran out of memory"),
    "allocates_10_gb_tensor_in_check": (
        "import torch\ndef split_heads(x, h):\n    return torch.empty(10 * 2**30, dtype=torch.uint8)\n"
        "def merge_heads(x):\n    return x\n",
        "fail",
        "ran out of memory",
    ),
    "segfaults": ("import ctypes\nctypes.string_at(0)\n", "error", "SIGSEGV"),
    "reads_stdin": ("input()\n", "error", "EOFError"),
    "forges_result_channel": (
        textwrap.dedent(
            """
            import json, os
            forged = json.dumps({"event": "done", "nonce": "guess"}).encode() + b"\\n"
            for fd in map(int, os.listdir("/proc/self/fd")):
                if fd > 2 and os.path.exists(f"/proc/self/fd/{fd}") and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                    try:
                        os.write(fd, forged)
                    except OSError:
                        pass
            """
        )
        + SOLUTION,
        "error",
        "grading void",
    ),
}


LOOP_IN_ROUND_TRIP = SOLUTION.replace(  # loops only for n_head == 1, which round_trip uses
    "    B, T, C = x.shape\n    if C % n_head:",
    "    B, T, C = x.shape\n    while n_head == 1:\n        pass\n    if C % n_head:",
)
SHOWS_ENV = (
    "import os, sys\nprint('ENV', sorted(k for k in os.environ if k.startswith('TUTOR')))\n"
    "print('HOME', os.environ.get('HOME'))\nprint('CWD', os.getcwd())\nprint('ARGV', sys.argv)\n" + SOLUTION
)
OTHERS = {  # name: (source, timeout_s)
    "loop_in_round_trip": (LOOP_IN_ROUND_TRIP, 4.0),
    "loop_on_import": ("while True:\n    pass\n", 2.0),
    "shows_env": (SHOWS_ENV, 20.0),
    "long_output": ("print('x' * 200_000)\n" + SOLUTION, 20.0),
    "starts_a_process": (
        "import subprocess\np = subprocess.Popen(['sleep', '60'])\nprint('PID', p.pid)\n" + SOLUTION,
        20.0,
    ),
}


@pytest.fixture(scope="module")
def hostile_results(ex, store_home, tmp_path_factory):
    """Every hostile file graded once, two at a time (each in its own sandboxed child), with the
    tutor's own settings in the environment, which the child must not see."""
    folder = tmp_path_factory.mktemp("hostile")
    jobs = {name: (src, 20.0) for name, (src, _, _) in HOSTILE.items()} | OTHERS

    def one(name):
        sub = folder / name
        sub.mkdir()
        source, timeout_s = jobs[name]
        return name, _grade(ex, store_home, sub, source, timeout_s)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TUTOR_HOME", str(store_home))
        mp.setenv("TUTOR_LANG", "de")
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(pool.map(one, sorted(jobs, key=lambda n: -jobs[n][1])))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_submission_gets_the_right_verdict(name, hostile_results):
    source, status, reason = HOSTILE[name]
    result = hostile_results[name]
    assert result.status == status, (result.status, [c.message for c in result.checks])
    assert result.score < result.max_score
    first = _first(result)
    assert reason in first.message, first.message
    # the checks after the first non-passing one never claim a pass they did not earn
    assert all(c.points == 0 for c in result.checks if c.status != "pass")


def test_hostile_runs_leave_the_store_unharmed(hostile_results, store_home):
    with Store(store_home) as store:
        rope = store.submissions("rope")
        assert [(s.status, s.score, s.sha256) for s in rope] == [("pass", 12, "0" * 64)]
        assert [h.hint for h in store.hint_reveals("rope")] == ["0"]
        mine = store.submissions("split-heads")
        assert len(mine) == len(hostile_results)
        assert {s.status for s in mine} >= {"error", "fail", "timeout"}


def test_infinite_loop_times_out_and_keeps_finished_checks(hostile_results):
    result = hostile_results["loop_in_round_trip"]
    assert result.status == "timeout" and result.exit_code == 1
    by_name = {c.name: c for c in result.checks}
    assert by_name["shape"].status == "pass" and by_name["matches_view"].status == "pass"
    assert by_name["round_trip"].status == "timeout"
    assert by_name["round_trip"].message == "timed out after 4 s"
    assert by_name["rejects_bad_split"].status == "skipped"
    assert result.score == 3 and 4 <= result.duration_s < 8


def test_loop_on_import_times_out_while_loading(hostile_results):
    result = hostile_results["loop_on_import"]
    assert result.status == "timeout" and result.exit_code == 1
    assert result.checks[0].message == "timed out after 2 s while loading your file"


def test_child_never_sees_the_store_path_and_runs_in_scratch(hostile_results, store_home):
    result = hostile_results["shows_env"]
    assert result.status == "pass"
    assert "ENV []" in result.output
    assert str(store_home) not in result.output
    cwd = re.search(r"CWD (\S+)", result.output).group(1)
    assert "tutor-grade-" in cwd and not Path(cwd).exists()  # the scratch folder is gone afterwards


def test_long_output_is_truncated_and_says_so(hostile_results):
    result = hostile_results["long_output"]
    assert result.status == "pass"
    assert len(result.output) < 9000
    assert "[output truncated: 200,001 bytes in total, the first 8,000 characters shown]" in result.output


def test_processes_started_by_the_submission_die_with_it(hostile_results):
    result = hostile_results["starts_a_process"]
    assert result.status == "pass"
    pid = int(re.search(r"PID (\d+)", result.output).group(1))
    status = Path(f"/proc/{pid}/status")
    state = status.read_text().split("State:")[1].split()[0] if status.exists() else "gone"
    assert state in ("gone", "Z")  # killed with its process group (a zombie until reaped)
