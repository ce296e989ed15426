"""Shared by the grading tests: a probe exercise whose checks need no model, the command line run in a
home of its own, and a look for grading processes left running."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tests.processes import still_running

PROBE_TOML = """
id = "probe"
file_name = "probe.py"
section = "probe"
timeout_s = 10
title = { en = "Probe" }
task = { en = "Write add, concat, scale and last." }

[[checks]]
id = "add"
title = { en = "adds" }
hint = { en = "use +" }

[[checks]]
id = "concat"
title = { en = "joins" }
hint = { en = "use +" }

[[checks]]
id = "scale"
title = { en = "scales" }
hint = { en = "a list comprehension" }

[[checks]]
id = "last"
title = { en = "last" }
hint = { en = "xs[-1]" }
"""
PROBE_CHECKS = """
from tutor.grading.kit import expect


def check_add(learner):
    expect(learner.add(2, 3), 5)
    return "2 + 3 = 5"


def check_concat(learner):
    expect(learner.concat("a", "b"), "ab")


def check_scale(learner):
    expect(learner.scale([1, 2], 3), [3, 6])


def check_last(learner):
    expect(learner.last([1, 2, 3]), 3)
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


def exercise_course(root: Path, files: dict[str, str], *, shipped: bool = True, order: int = 9) -> Path:
    """`root` made into a course folder: the shipped lessons (linked) unless `shipped` is False, plus a
    lesson holding one exercise "probe" whose files are `files` (exercise.toml, checks.py,
    solution.py, starter.py)."""
    root.mkdir(parents=True, exist_ok=True)
    for lesson in (ROOT / "tutor" / "lessons").iterdir() if shipped else ():
        if lesson.is_dir() and (lesson / "lesson.toml").is_file():
            (root / lesson.name).symlink_to(lesson)
    lesson = root / f"{order:02d}-probe"
    ex = lesson / "exercises/probe"
    ex.mkdir(parents=True)
    (lesson / "lesson.toml").write_text(
        f'id = "probe-lesson"\norder = {order}\ntitle = {{ en = "Probe" }}\n', encoding="utf-8"
    )
    (lesson / "en.md").write_text("# Probe\n\n## Probe {#probe}\n\nText.\n", encoding="utf-8")
    for name, text in files.items():
        (ex / name).write_text(text, encoding="utf-8")
    return root


# the probe exercise's files: its starter fails every check
PROBE_FILES = {
    "exercise.toml": PROBE_TOML,
    "checks.py": PROBE_CHECKS,
    "solution.py": SOLUTION,
    "starter.py": SOLUTION.replace("return", "raise NotImplementedError #"),
}


def probe_course(root: Path) -> Path:
    """The shipped course plus lesson 9 with the probe exercise (stdlib only: its worker is handed
    nothing but the standard library)."""
    return exercise_course(root, PROBE_FILES)


def probe_lessons(root: Path) -> Path:
    """A course of the probe exercise alone (lesson 1, nothing shipped): what the instructor's tests
    grade batches of."""
    return exercise_course(root, PROBE_FILES, shipped=False, order=1)


def tutor(
    home: Path, *args: str, lang: str | None = None, timeout: float = 180
) -> subprocess.CompletedProcess:
    """`python -m tutor ARGS` with `home` as its home (and TUTOR_LANG=`lang`), nothing on stdin."""
    env = run_tutor_env(home)
    if lang is not None:
        env["TUTOR_LANG"] = lang
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def grading_processes(tmpdir: Path) -> set[int]:
    """Processes of a grade started with TMPDIR=`tmpdir`: judges, the boxes' parents and workers
    (forks of a judge, whose environment block says TMPDIR), and anything working in a scratch folder
    made there. Other tests' grading, in this run or another, has another TMPDIR."""
    found = set()
    marker = f"TMPDIR={tmpdir}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.add(int(entry.name))
            elif os.readlink(entry / "cwd").startswith(f"{tmpdir}/"):
                found.add(int(entry.name))
        except OSError:
            continue
    return found


def grading_processes_left(tmpdir: Path, timeout: float = 30.0) -> set[int]:
    """The processes of a grade that has ended which outlive it: waits for each one running now to end
    (up to `timeout`), then looks again. Anything one of them started is seen the first time, as it
    has TMPDIR too, so the second look finds what survives, never what has not ended yet."""
    still_running(grading_processes(tmpdir), timeout)
    return grading_processes(tmpdir)
