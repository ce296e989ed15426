"""Hostile submissions against the real sandbox: every one gets fail/error/timeout with a clear reason,
the tutor process survives, and the progress store keeps what it already held.

Most run against a small probe exercise whose checks need no torch, so each child starts in a
fraction of a second; the torch-specific attacks run against split-heads."""

from __future__ import annotations

import re
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tutor.content.loader import load_course
from tutor.content.schema import CheckDecl, Exercise
from tutor.grading import service
from tutor.grading.runner import Limits
from tutor.progress.store import Store

ROOT = Path(__file__).resolve().parents[1]
SPLIT = (ROOT / "lessons/01-multi-head/exercises/split-heads/solution.py").read_text(encoding="utf-8")
SCALING = (ROOT / "lessons/03-rope-alibi/exercises/context-scaling/solution.py").read_text(encoding="utf-8")
ROPE_NO_SCALE = (ROOT / "lessons/03-rope-alibi/exercises/rope/broken/no_scale.py").read_text(encoding="utf-8")

PROBE_CHECKS = """
from tutor.grading.kit import fail, need


def check_add(sub):
    got = need(sub, "add")(2, 3)
    if got != 5:
        raise fail("add(2, 3) = 5", repr(got))
    return "2 + 3 = 5"


def check_concat(sub):
    got = need(sub, "concat")("a", "b")
    if got != "ab":
        raise fail("'ab'", repr(got))


def check_scale(sub):
    got = need(sub, "scale")([1, 2], 3)
    if got != [3, 6]:
        raise fail("[3, 6]", repr(got))


def check_last(sub):
    got = need(sub, "last")([1, 2, 3])
    if got != 3:
        raise fail("3", repr(got))
"""
SOLUTION = """
def add(a, b):
    return a + b


def concat(a, b):
    return a + b


def scale(xs, k):
    return [x * k for x in xs]


def last(xs):
    return xs[-1]
"""

FORGE = """
import json, os
forged = json.dumps({"event": "done", "nonce": "guess"}).encode() + b"\\n"
for fd in map(int, os.listdir("/proc/self/fd")):
    link = f"/proc/self/fd/{fd}"
    if fd > 2 and os.path.exists(link) and os.readlink(link).startswith("pipe:"):
        try:
            os.write(fd, forged)
        except OSError:
            pass
"""

HOSTILE = {
    # name: (exercise, source, overall status, substring of the first non-passing check's message)
    "prints_pass": (
        "probe",
        'print("PASS")\nprint(\'{"event": "done"}\')\ndef add(a, b):\n    return 0\n',
        "fail",
        "expected add(2, 3) = 5, got 0",
    ),
    "sys_exit_on_import": ("probe", "import sys\nsys.exit(0)\n", "error", "sys.exit(0)"),
    "os_exit_on_import": (
        "probe",
        "import os\nos._exit(0)\n",
        "error",
        "exit code 0 before grading finished",
    ),
    "os_exit_in_check": (
        "probe",
        SOLUTION.replace(
            "    return a + b\n\n\ndef concat", "    import os\n    os._exit(0)\n\n\ndef concat"
        ),
        "error",
        "exit code 0 before grading finished",
    ),
    "raises_on_import": (
        "probe",
        'raise RuntimeError("boom at import")\n',
        "error",
        "RuntimeError: boom at import (at line 1",
    ),
    "syntax_error": ("probe", "def add(a, b)\n    return a + b\n", "error", "syntax error in line 1"),
    "patches_checks_module": (
        "probe",
        "import sys\nm = sys.modules['_tutor_exercise_checks']\nm.check_add = lambda sub: 'ok'\n" + SOLUTION,
        "error",
        "checks.check_add",
    ),
    "swaps_check_code": (
        "probe",
        "import sys\nm = sys.modules['_tutor_exercise_checks']\n"
        "m.check_scale.__code__ = (lambda sub: 'ok').__code__\n" + SOLUTION.replace("x * k", "x"),
        "error",
        "checks.check_scale",
    ),
    "edits_the_expected_values": (  # a table of expected values, changed in place: same name, same dict
        "context-scaling",
        "import sys\nsys.modules['_tutor_exercise_checks'].REFERENCE[('pi', 8)][0] = 0.5\n" + SCALING,
        "error",
        "checks.REFERENCE",
    ),
    "patches_builtins": (
        "probe",
        "import builtins\nbuiltins.repr = lambda x: 'fine'\n" + SOLUTION,
        "error",
        "builtins.repr",
    ),
    "patches_torch_equal": (
        "split-heads",
        "import torch\ntorch.equal = lambda a, b: True\ndef split_heads(x, h):\n    return x\n"
        "def merge_heads(x):\n    return x\n",
        "error",
        "torch.equal",
    ),
    "patches_the_reference_attention": (  # F.sdpa without the 1/√d scale makes a no-scale attention "right"
        "rope",
        "import torch.nn.functional as F\n_sdpa = F.scaled_dot_product_attention\n"
        "F.scaled_dot_product_attention = lambda q, k, v, is_causal=False: _sdpa(q, k, v, is_causal=is_causal,"
        " scale=1.0)\n" + ROPE_NO_SCALE,
        "error",
        "torch.nn.functional.scaled_dot_product_attention",
    ),
    "allocates_10_gb_on_import": ("probe", "x = bytearray(10 * 2**30)\n", "error", "ran out of memory"),
    "allocates_10_gb_tensor_in_check": (
        "split-heads",
        "import torch\ndef split_heads(x, h):\n    return torch.empty(10 * 2**30, dtype=torch.uint8)\n"
        "def merge_heads(x):\n    return x\n",
        "fail",
        "ran out of memory",
    ),
    "segfaults": ("probe", "import faulthandler\nfaulthandler._sigsegv()\n", "error", "SIGSEGV"),
    "reads_raw_memory": (
        "probe",
        "import ctypes\nctypes.string_at(id(object()), 16)\n",
        "error",
        "ctypes.string_at is not available",
    ),
    "walks_up_to_the_harness": (  # the nonce-holding emit() lives in the harness's frames
        "probe",
        "import sys\nf = sys._getframe()\nwhile f is not None and 'emit' not in f.f_locals:\n    f = f.f_back\n"
        "f.f_locals['emit']({'event': 'imported'})\n" + SOLUTION,
        "error",
        "stack frames are not available to code being graded",
    ),
    "jumps_to_a_harness_frame": (
        "probe",
        "import sys\nsys._getframe(1).f_locals\n" + SOLUTION,
        "error",
        "stack frames are not available to code being graded",
    ),
    "lists_all_objects": ("probe", "import gc\ngc.get_objects()\n" + SOLUTION, "error", "gc.get_objects"),
    "reads_the_graders_command_line": (  # it names --home, and so the progress store
        "probe",
        "import os\nopen(f'/proc/{os.getppid()}/cmdline').read()\n" + SOLUTION,
        "error",
        "is not available to code being graded",
    ),
    "signals_the_grader": (
        "probe",
        "import os, signal\nos.kill(os.getppid(), signal.SIGTERM)\n" + SOLUTION,
        "error",
        "may not signal the grader",
    ),
    "reads_stdin": ("probe", "input()\n", "error", "EOFError"),
    "writes_20_mb": (
        "probe",
        "import sys\nsys.stdout.write('y' * (20 * 2**20))\n",
        "error",
        "more output than the grader allows",
    ),
    "floods_result_channel": (  # sys.argv[2] is the channel's number; no newline, ever
        "probe",
        "import os, sys\nfor _ in range(64):\n    os.write(int(sys.argv[2]), b'x' * 2**20)\n" + SOLUTION,
        "error",
        "grading void: the result channel carried an overlong record",
    ),
    "forges_result_channel": ("probe", FORGE + SOLUTION, "error", "grading void"),
}

LOOP_IN_SCALE = SOLUTION.replace("    return [x * k for x in xs]", "    while k == 3:\n        pass")
SHOWS_ENV = (
    "import os, sys\nprint('ENV', sorted(k for k in os.environ if k.startswith('TUTOR')))\n"
    "print('HOME', os.environ.get('HOME'))\nprint('CWD', os.getcwd())\nprint('ARGV', sys.argv)\n" + SOLUTION
)
FORKS = (
    "import os, time\nif os.fork() == 0:  # the forked child holds a copy of the result channel\n"
    "    time.sleep(60)\n    os._exit(0)\n" + SOLUTION
)
SPAWNS = "import subprocess\np = subprocess.Popen(['sleep', '60'])\nprint('PID', p.pid)\n" + SOLUTION
OTHERS = {  # name: (exercise, source, timeout_s)
    "loop_in_scale": ("probe", LOOP_IN_SCALE, 2.0),
    "loop_on_import": ("probe", "while True:\n    pass\n", 1.0),
    "shows_env": ("probe", SHOWS_ENV, 20.0),
    "long_output": ("probe", "print('x' * 200_000)\n" + SOLUTION, 20.0),
    "starts_a_process": ("probe", SPAWNS, 20.0),
    "forks_and_lingers": ("probe", FORKS, 20.0),
    "split_heads_reference": ("split-heads", SPLIT, 20.0),
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> Exercise:
    folder = tmp_path_factory.mktemp("probe")
    (folder / "checks.py").write_text(PROBE_CHECKS, encoding="utf-8")
    ids = ("add", "concat", "scale", "last")
    checks = [CheckDecl(id=c, title={"en": c}, hint={"en": f"hint for {c}"}) for c in ids]
    return Exercise(
        id="probe",
        title={"en": "Probe"},
        task={"en": "t"},
        file_name="probe.py",
        checks=checks,
        folder=folder,
    )


@pytest.fixture(scope="module")
def store_home(tmp_path_factory):
    """One real store for the module, holding records that every hostile run must leave alone."""
    home = tmp_path_factory.mktemp("home")
    with Store(home) as store:
        store.record_submission("alibi", sha256="0" * 64, status="pass", score=7, max_score=7)
        store.record_hint("alibi", "0")
    return home


@pytest.fixture(scope="module")
def results(probe, store_home, tmp_path_factory):
    """Every file graded once, two at a time (each in its own sandboxed child), with the tutor's own
    settings in the environment, which the child must not see."""
    course = load_course(ROOT / "lessons")
    exercises = {"probe": probe} | {i: course.exercise(i) for i in ("split-heads", "rope", "context-scaling")}
    jobs = {name: (ex, src, 20.0) for name, (ex, src, _, _) in HOSTILE.items()} | OTHERS
    folder = tmp_path_factory.mktemp("hostile")

    def one(name):
        ex, source, timeout_s = jobs[name]
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        with Store(store_home) as store:
            return name, service.grade(exercises[ex], path, store=store, limits=Limits(timeout_s=timeout_s))

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TUTOR_HOME", str(store_home))
        mp.setenv("TUTOR_LANG", "de")
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(pool.map(one, sorted(jobs, key=lambda n: (jobs[n][0], -jobs[n][2]))))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_submission_gets_the_right_verdict(name, results):
    _, _, status, reason = HOSTILE[name]
    result = results[name]
    assert result.status == status, (result.status, [c.message for c in result.checks])
    assert result.exit_code == {"fail": 1, "error": 2}[status]
    first = result.first_failure
    assert reason in first.message, first.message
    # a check that did not pass earns nothing, and no hostile file reaches full marks
    assert all(c.points == 0 for c in result.checks if c.status != "pass")
    assert result.score < result.max_score


def test_hostile_runs_leave_the_store_unharmed(results, store_home):
    with Store(store_home) as store:
        alibi = store.submissions("alibi")  # no hostile file grades alibi
        assert [(s.status, s.score, s.sha256) for s in alibi] == [("pass", 7, "0" * 64)]
        assert [h.hint for h in store.hint_reveals("alibi")] == ["0"]
        mine = [s for e in ("probe", "split-heads", "rope", "context-scaling") for s in store.submissions(e)]
        assert len(mine) == len(results)
        assert {s.status for s in mine} == {"error", "fail", "timeout", "pass"}


def test_a_flooded_result_channel_is_void_at_once(results):
    # the child is still blocked writing its flood: it is stopped, not waited for until the 20 s limit
    assert results["floods_result_channel"].duration_s < 10


def test_infinite_loop_times_out_and_keeps_finished_checks(results):
    result = results["loop_in_scale"]
    assert result.status == "timeout" and result.exit_code == 1
    assert [(c.name, c.status) for c in result.checks] == [
        ("add", "pass"), ("concat", "pass"), ("scale", "timeout"), ("last", "skipped")
    ]  # fmt: skip
    assert result.checks[2].message == "timed out after 2 s"
    assert result.checks[3].message == "not run: timed out after 2 s"
    assert result.score == 1 + 1 and 2 <= result.duration_s < 5


def test_loop_on_import_times_out_while_loading(results):
    result = results["loop_on_import"]
    assert result.status == "timeout" and result.exit_code == 1
    assert result.checks[0].message == "timed out after 1 s while loading your file"


def test_the_split_heads_reference_passes_in_the_sandbox(results):
    result = results["split_heads_reference"]
    assert result.status == "pass" and result.score == 6 and result.output == ""


def test_child_never_sees_the_store_path_and_runs_in_scratch(results, store_home):
    result = results["shows_env"]
    assert result.status == "pass"
    assert "ENV []" in result.output
    assert str(store_home) not in result.output
    cwd = re.search(r"CWD (\S+)", result.output).group(1)
    assert "tutor-grade-" in cwd and not Path(cwd).exists()  # the scratch folder is gone afterwards


def test_long_output_is_truncated_and_says_so(results):
    result = results["long_output"]
    assert result.status == "pass"
    assert len(result.output) < 9000
    assert "[output truncated: 200,001 bytes in total, the first 8,000 characters shown]" in result.output


def test_a_forked_child_holding_the_channel_does_not_turn_a_pass_into_a_timeout(results):
    result = results["forks_and_lingers"]
    assert result.status == "pass" and result.score == result.max_score
    assert result.duration_s < 5  # the grace after "done" is 1 s; the time limit is 20 s


def test_processes_started_by_the_submission_die_with_it(results):
    result = results["starts_a_process"]
    assert result.status == "pass"
    pid = int(re.search(r"PID (\d+)", result.output).group(1))
    status = Path(f"/proc/{pid}/status")
    state = status.read_text().split("State:")[1].split()[0] if status.exists() else "gone"
    assert state in ("gone", "Z")  # killed with its process group (a zombie until reaped)


SHIPPED = load_course(Path(__file__).resolve().parents[1] / "lessons")
CODE_EXERCISES = [ex for ex in SHIPPED.exercises() if ex.kind == "code"]


@pytest.mark.parametrize("ex", CODE_EXERCISES, ids=lambda ex: ex.id)
def test_reference_solution_passes_in_the_sandbox(ex):
    # the exercise tests grade references in one trusted process; this is the learner's path, guard included
    result = service.grade(ex, ex.folder / "solution.py", record=False)
    assert result.status == "pass", [(c.name, c.message) for c in result.checks if c.status != "pass"]
