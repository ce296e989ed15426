import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Started in the background by a script (`nohup`, `cmd &`), the test run inherits SIGINT ignored, and
# so would every `python -m tutor` it starts: Ctrl-C tests would wait for an exit that never comes.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler is reset to default on exec

# The run keeps both cores busy (a worker per core, and the children they start), where torch's thread
# pool spins while its threads wait on each other: a `generate` took about 9.6 s of CPU with two threads
# during a run, 2.8 s with one. So this process and every process it starts (`python -m tutor`, the app's
# children) use one intra-op thread, as the judges and training children of the tutor already do; set
# before torch is imported. A test of a thread setting passes its own (`--threads`, `threads=`).
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh learner home for one test."""
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture(autouse=True)
def _no_editor_variable(monkeypatch):
    """The lab's keys depend on $VISUAL/$EDITOR (with one, `i` opens the built-in editor beside it): every
    test starts without them, as CI and the browser do, and a test that wants one sets it."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)


def run_tutor_env(home: Path | None = None) -> dict[str, str]:
    """Environment for a `python -m tutor` child process in tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUTOR_")}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONIOENCODING"] = "utf-8"
    if home is not None:
        env["TUTOR_HOME"] = str(home)
    return env


PYTHON = sys.executable


def tutor_here(*args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m tutor ARGS` run in this process (tutor.cli.main): the same code, exit code and output
    as the child process, without starting Python and the tutor again (~0.5 s of CPU each). For a
    command whose real process other tests cover; stdin is empty, as a child's DEVNULL, and the
    environment is the child's (run_tutor_env): no TUTOR_ variable but TUTOR_HOME for `home`."""
    import contextlib
    import io

    from tutor.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: v for k, v in os.environ.items() if k.startswith("TUTOR_")}
    for key in saved:
        del os.environ[key]
    if home is not None:
        os.environ["TUTOR_HOME"] = str(home)
    stdin = sys.stdin
    sys.stdin = io.StringIO()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}  # train sets its own
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit:  # argparse's usage errors and --help
                code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        sys.stdin = stdin
        os.environ.pop("TUTOR_HOME", None)
        os.environ.update(saved)
    return subprocess.CompletedProcess(["python", "-m", "tutor", *args], code, out.getvalue(), err.getvalue())


def add_experiment_run(store, name: str, params: dict, metrics: dict, note: str | None = None) -> None:
    """An experiment_runs row, as an export from an earlier tutor brings one in (the tutor itself does
    not write them any more; the table stays for import and export)."""
    import json

    from tutor.progress.db import to_text

    with store.db.write() as c:
        c.execute(
            "INSERT INTO experiment_runs (name, params, metrics, note, at) VALUES (?, ?, ?, ?, ?)",
            (name, json.dumps(params), json.dumps(metrics), note, to_text(store.now())),
        )


def run_in_two_threads(target: Callable[[], None]) -> None:
    """`target` in two threads at once (each typically opens its own Store: its own connection, as a
    second process would have); returns when both have ended."""
    pair = [threading.Thread(target=target) for _ in range(2)]
    for t in pair:
        t.start()
    for t in pair:
        t.join()


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto` (addopts): for the default run one worker more than the cores this run may use. A third of
    a worker's time goes to waiting on the processes its tests start (apps, judges, servers), when another
    worker can use the core; on 2 cores three workers took 228 s where two took 248 s, all passing. The
    marked runs (slow, browser, hub) keep one worker per core: their tests time their own work.
    --maxprocesses 4 caps either."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1 if "not slow" in (config.getoption("markexpr") or "") else cores


def pytest_collection_modifyitems(config, items) -> None:
    """The largest test files first (a file's tests keep their order): xdist hands out whole files
    (--dist loadfile) in this order, and the heaviest files, the app's, sort last by name, so the run
    ended with one worker on a big file while the others waited. A file's size stands for its cost."""
    sizes: dict[Path, int] = {}
    items.sort(key=lambda item: -sizes.setdefault(item.path, item.path.stat().st_size))
