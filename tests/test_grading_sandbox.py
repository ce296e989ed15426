"""Hostile submissions against the real judge and its sandboxed worker, through the real CLI.

Every attack class of the grader's security review is here: forged records and answers, frames and
raw memory, objects that lie to the checks, the store, processes that outlive the grade, signals to
the grader, process and disk limits, hangs and tracebacks in the tutor. Each ends in a non-pass with
a clear reason, the tutor survives, and the store keeps what it held.

Most run as one `grade --batch` per exercise (one judge, a fresh sandboxed worker per file), against a
small probe exercise whose checks need no model, or against split-heads and rope for torch attacks.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tests.grading_helpers import SOLUTION, grading_processes_left, probe_course
from tutor.progress.store import Store

IDENTITY_SPLIT = "def split_heads(x, h):\n    return x\n\n\ndef merge_heads(x):\n    return x\n"
SPLIT = (ROOT / "tutor/lessons/01-multi-head/exercises/split-heads/solution.py").read_text(encoding="utf-8")
ROPE = (ROOT / "tutor/lessons/03-rope-alibi/exercises/rope/solution.py").read_text(encoding="utf-8")

# name: (source, overall status, substring of the first non-passing check's message)
PROBE_ATTACKS = {
    "prints_pass": (
        'print("PASS")\nprint(\'{"event": "done"}\')\ndef add(a, b):\n    return 0\n',
        "fail",
        "add(2, 3): expected 5, got 0",
    ),
    "sys_exit_on_import": ("import sys\nsys.exit(0)\n", "error", "sys.exit(0)"),
    "os_exit_on_import": ("import os\nos._exit(0)\n", "error", "exit code 0 before grading finished"),
    "os_exit_in_check": (
        SOLUTION.replace(
            "    return a + b\n\n\ndef concat", "    import os\n    os._exit(0)\n\n\ndef concat"
        ),
        "error",
        "exit code 0 before grading finished",
    ),
    "raises_on_import": (
        'raise RuntimeError("boom at import")\n',
        "error",
        "RuntimeError: boom at import (at line 1",
    ),
    "syntax_error": ("def add(a, b)\n    return a + b\n", "error", "syntax error in line 1"),
    # the old in-process forgery: rewrite every record json writes. The worker's answers are data, not
    # verdicts, and an answer out of turn voids the run
    "forges_json_encoder": (
        'import json\njson.dumps = lambda *a, **k: \'{"id": 1, "ok": 5}\'\n'
        + SOLUTION.replace("a + b\n\n\ndef concat", "0\n\n\ndef concat"),
        "error",
        "broke the grading protocol",
    ),
    # frames and gc objects are reachable in the worker, and lead nowhere: answering 5 to everything
    "rewrites_its_answers": (
        "import gc\nw = next(o for o in gc.get_objects() if type(o).__name__ == 'Worker')\n_send = w.send\n"
        "w.send = lambda m: _send({**m, 'ok': 5} if 'ok' in m and m['id'] > 1 else m)\n" + SOLUTION,
        "fail",
        "concat('a', 'b'): expected 'ab', got int 5",
    ),
    # the box has no /proc, /tmp or home folder: what is not handed does not exist
    "reads_its_own_memory": (
        "open(b'/proc/self/mem', 'rb')\n" + SOLUTION,
        "error",
        "No such file or directory",
    ),
    "reads_the_graders_environment": (
        "import os\nopen(f'/proc/{os.getppid()}/environ', 'rb').read()\n" + SOLUTION,
        "error",
        "No such file or directory",
    ),
    "reads_the_home_folder": (
        f"import os\nos.listdir({str(Path.home())!r})\n" + SOLUTION,
        "error",
        "PermissionError",
    ),
    "writes_outside_scratch": (
        "open('/tmp/tutor-escape.txt', 'w').write('x')\n" + SOLUTION,
        "error",
        "No such file or directory",
    ),
    "kills_every_process": ("import os\nos.kill(-1, 9)\n" + SOLUTION, "error", "PermissionError"),
    "kills_the_graders_group": (
        "import os\nos.killpg(os.getpgid(os.getppid()), 9)\n" + SOLUTION,
        "error",
        "Error",
    ),
    "clears_its_parent_death_signal": (
        "import ctypes\nassert ctypes.CDLL(None).prctl(1, 0, 0, 0, 0) == 0, 'kept'\n" + SOLUTION,
        "error",
        "kept",
    ),
    "forks": ("import os\nos.fork()\n" + SOLUTION, "error", "PermissionError"),
    "starts_a_daemon": (
        "import subprocess\nsubprocess.Popen(['sleep', '60'], start_new_session=True)\n" + SOLUTION,
        "error",
        "Error",
    ),
    "writes_96_mb_in_six_files": (
        "for i in range(6):\n    open(f'f{i}', 'wb').write(b'x' * (16 * 2**20 - 1))\n" + SOLUTION,
        "error",
        "No space left on device",
    ),
    "floods_its_output": (
        "import sys\nsys.stdout.write('y' * (20 * 2**20))\nsys.stdout.flush()\n",
        "error",
        "more output than the grader allows",
    ),
    "connects_to_the_network": (
        "import socket\nsocket.create_connection(('127.0.0.1', 22), timeout=2)\n" + SOLUTION,
        "error",
        "Error",
    ),
    "allocates_10_gb_on_import": ("x = bytearray(10 * 2**30)\n", "error", "ran out of memory"),
    "segfaults": ("import faulthandler\nfaulthandler._sigsegv()\n", "error", "SIGSEGV"),
    "reads_stdin": ("input()\n", "error", "EOFError"),
    "lone_surrogate_in_an_error": ('raise RuntimeError("\\ud800")\n', "error", "RuntimeError: ?"),
    "stdout_into_a_fifo": (
        "import os\nos.mkfifo('f')\nfd = os.open('f', os.O_RDWR)\nos.dup2(fd, 1)\n"
        "print('x' * 200_000, flush=True)\n" + SOLUTION,
        "error",
        "Operation not permitted",
    ),
    "loops_in_scale": (
        SOLUTION.replace("    return [x * k for x in xs]", "    while k == 3:\n        pass"),
        "timeout",
        "timed out after 6 s",
    ),
}
TORCH_ATTACKS = {  # split-heads
    "tensor_subclass_says_equal": (
        "import torch\nclass T(torch.Tensor):\n    @classmethod\n"
        "    def __torch_function__(cls, f, types, args=(), kwargs=None):\n"
        "        return True if f is torch.equal else super().__torch_function__(f, types, args, kwargs or {})\n"
        "def split_heads(x, h):\n    return x.as_subclass(T)\ndef merge_heads(x):\n    return x.as_subclass(T)\n",
        "fail",
        "expected",
    ),
    "patches_tensor_methods": (
        "import torch\ntorch.Tensor.max = lambda *a, **k: torch.tensor(0.0)\n"
        "torch.equal = lambda a, b: True\n" + IDENTITY_SPLIT,
        "fail",
        "expected",
    ),
    "plants_a_fake_module": (
        "import sys, types\nsys.modules['tutor.model.corpus'] = types.ModuleType('fake')\n" + IDENTITY_SPLIT,
        "fail",
        "expected",
    ),
    "empty_file": ("", "fail", "defines no `split_heads`"),
    "nan_everywhere": (
        "import torch\ndef split_heads(x, h):\n    B, T, C = x.shape\n"
        "    return torch.full((B, h, T, C // h), float('nan'))\ndef merge_heads(x):\n    return x\n",
        "fail",
        "expected",
    ),
    "allocates_10_gb_tensor": (
        "import torch\ndef split_heads(x, h):\n    return torch.empty(10 * 2**30, dtype=torch.uint8)\n"
        "def merge_heads(x):\n    return x\n",
        "fail",
        "ran out of memory",
    ),
}


def _tutor(
    home: Path, *args: str, timeout: float = 240, tmpdir: Path | None = None
) -> subprocess.CompletedProcess:
    env = run_tutor_env(home) | ({"TMPDIR": str(tmpdir)} if tmpdir is not None else {})
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    """The shipped course plus a probe exercise whose checks need no model."""
    return probe_course(tmp_path_factory.mktemp("lessons"))


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A real store holding records that no attack may change."""
    home = tmp_path_factory.mktemp("home")
    with Store(home) as store:
        store.record_submission("alibi", sha256="0" * 64, status="pass", score=7, max_score=7)
        store.record_hint("alibi", "0")
    return home


def _batch(lessons: Path, home: Path, exercise: str, attacks: dict, folder: Path, timeout: float) -> dict:
    folder.mkdir()
    for name, (source, _, _) in attacks.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8", errors="surrogatepass")
    out = _tutor(
        home,
        "grade",
        exercise,
        "--batch",
        str(folder),
        "--format",
        "json",
        "--timeout",
        str(timeout),
        "--lessons",
        str(lessons),
    )
    assert out.returncode == 0, out.stderr
    return {Path(r["file"]).stem: r["grade"] for r in json.loads(out.stdout)["results"]}


def _busy_grade(lessons: Path, folder: Path) -> subprocess.CompletedProcess:
    """A grade of the split-heads reference in a home of its own whose store's write lock another
    connection holds for the whole grade: the grade waits out every try to save (seconds of waiting,
    no work)."""
    home = folder / "home"
    with Store(home) as store:
        store.record_submission("alibi", sha256="0" * 64, status="pass", score=7, max_score=7)
    holder = sqlite3.connect(next(home.glob("*.sqlite3")), timeout=1)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, held for the whole grade
    try:
        path = folder / "split_heads.py"
        path.write_text(SPLIT, encoding="utf-8")
        return _tutor(home, "grade", "split-heads", str(path), "--lessons", str(lessons))
    finally:
        holder.rollback()
        holder.close()


@pytest.fixture(scope="module")
def batches(lessons, home, tmp_path_factory) -> tuple[dict, dict, subprocess.CompletedProcess]:
    """Both batches at once, one per core, and beside them the grade that waits out a busy store:
    (probe results, split-heads results, the busy-store grade)."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        probe = pool.submit(
            _batch, lessons, home, "probe", PROBE_ATTACKS, tmp_path_factory.mktemp("p") / "probe", 6
        )
        split = pool.submit(
            _batch, lessons, home, "split-heads", TORCH_ATTACKS, tmp_path_factory.mktemp("t") / "split", 20
        )
        busy = pool.submit(_busy_grade, lessons, tmp_path_factory.mktemp("busy"))
        return probe.result(), split.result(), busy.result()


@pytest.fixture(scope="module")
def probe_results(batches) -> dict:
    return batches[0]


@pytest.fixture(scope="module")
def torch_results(batches) -> dict:
    return batches[1]


def _first_failure(grade: dict) -> dict:
    return next(c for c in grade["checks"] if c["status"] != "pass")


@pytest.mark.parametrize("name", sorted(PROBE_ATTACKS))
def test_attack_on_the_probe_exercise_ends_in_a_clear_non_pass(name, probe_results):
    _, status, reason = PROBE_ATTACKS[name]
    grade = probe_results[name]
    assert grade["status"] == status, (grade["status"], [c["message"] for c in grade["checks"]])
    assert reason in _first_failure(grade)["message"], _first_failure(grade)["message"]
    assert grade["score"] < grade["max_score"]
    assert grade["isolation"]["level"] == "strong"


@pytest.mark.parametrize("name", sorted(TORCH_ATTACKS))
def test_attack_with_torch_objects_ends_in_a_clear_non_pass(name, torch_results):
    _, status, reason = TORCH_ATTACKS[name]
    grade = torch_results[name]
    assert grade["status"] == status, (grade["status"], [c["message"] for c in grade["checks"]])
    assert reason in _first_failure(grade)["message"], _first_failure(grade)["message"]
    assert grade["score"] == 0 or grade["score"] < grade["max_score"]


def test_no_escape_file_was_written(probe_results):
    assert not Path("/tmp/tutor-escape.txt").exists()


def test_output_reaches_the_terminal_without_escape_sequences(lessons, home, tmp_path):
    path = tmp_path / "ansi.py"
    path.write_text(
        "print('\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred\\x1b[0m\\x07')\n" + SOLUTION, encoding="utf-8"
    )
    out = _tutor(home, "grade", "probe", str(path), "--lessons", str(lessons))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "red" in out.stdout


def test_a_lone_surrogate_leaves_the_batch_report_whole(probe_results):
    message = _first_failure(probe_results["lone_surrogate_in_an_error"])["message"]
    assert message.encode("utf-8")  # no lone surrogate left: it encodes
    assert len(probe_results) == len(PROBE_ATTACKS)


def test_long_output_is_truncated_and_says_so(lessons, home, tmp_path):
    path = tmp_path / "long.py"
    path.write_text("print('x' * 200_000)\n" + SOLUTION, encoding="utf-8")
    grade = json.loads(_tutor(home, "grade", "probe", str(path), "--json", "--lessons", str(lessons)).stdout)
    assert grade["status"] == "pass"
    assert "[output truncated: 200,001 bytes in total, the first 8,000 characters shown]" in grade["output"]


def test_attacks_through_the_store_leave_it_unharmed_and_nothing_running(lessons, home, tmp_path):
    store_file = next(home.glob("*.sqlite3"))
    attack = (
        f"import sqlite3, subprocess\ntry:\n    c = sqlite3.connect({str(store_file)!r})\n"
        "    c.execute(\"UPDATE submissions SET status = 'pass'\")\n    c.commit()\nfinally:\n"
        "    subprocess.Popen(['sleep', '60'], start_new_session=True)\n" + IDENTITY_SPLIT
    )
    before_rows = sqlite3.connect(store_file).execute("SELECT * FROM submissions ORDER BY id").fetchall()
    scratch = tmp_path / "tmp"  # the graders' TMPDIR: their scratch folders are made in it
    scratch.mkdir()
    for source in (attack, IDENTITY_SPLIT):
        path = tmp_path / "split_heads.py"
        path.write_text(source, encoding="utf-8")
        out = _tutor(
            home, "grade", "split-heads", str(path), "--json", "--lessons", str(lessons), tmpdir=scratch
        )
        assert json.loads(out.stdout)["status"] in ("fail", "error"), out.stdout
    assert grading_processes_left(scratch) == set()
    rows = sqlite3.connect(store_file).execute("SELECT * FROM submissions ORDER BY id").fetchall()
    assert rows[: len(before_rows)] == before_rows  # what was there is untouched
    new = rows[len(before_rows) :]
    assert len(new) == 2 and all(r[1] == "split-heads" and r[4] in ("fail", "error") for r in new)


def test_a_fifo_or_a_device_is_refused_without_reading(lessons, home, tmp_path):
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.py"
    zero.symlink_to("/dev/zero")
    for path, kind in ((fifo, "is a FIFO"), (zero, "is a device")):
        out = _tutor(home, "grade", "split-heads", str(path), "--lessons", str(lessons), timeout=60)
        assert out.returncode == 2 and kind in out.stderr, out.stderr


@pytest.mark.slow  # 6.5 s: head-count's answer files are also read hostilely in test_grading_hostile_input
def test_a_hostile_answer_file_gets_a_message(lessons, home, tmp_path):
    deep = tmp_path / "head_count.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    nan = tmp_path / "nan.toml"
    nan.write_text("best_heads = 4\nloss_gap = nan\nsame_params = true\n", encoding="utf-8")
    out = _tutor(home, "grade", "head-count", str(deep), "--lessons", str(lessons))
    assert out.returncode == 2 and "nests tables or arrays too deeply" in out.stdout, out.stdout + out.stderr
    out = _tutor(home, "grade", "head-count", str(nan), "--lessons", str(lessons))
    assert "Traceback" not in out.stderr and out.returncode in (1, 2), out.stderr


def test_a_busy_store_still_shows_the_verdict_and_says_it_was_not_saved(batches):
    out = batches[2]
    assert out.returncode == 0 and "PASS" in out.stdout, out.stdout + out.stderr
    assert "NOT saved" in out.stdout


def test_the_rope_reference_passes_in_the_sandbox(lessons, home, tmp_path):
    path = tmp_path / "rope.py"
    path.write_text(ROPE, encoding="utf-8")
    grade = json.loads(_tutor(home, "grade", "rope", str(path), "--json", "--lessons", str(lessons)).stdout)
    assert grade["status"] == "pass", grade
    assert grade["isolation"]["level"] == "strong"
