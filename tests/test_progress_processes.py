"""The store across real processes: SIGKILL mid-write loses nothing committed; two writers both work."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import PYTHON, ROOT, run_in_two_threads, run_tutor_env

from tutor.errors import TutorError
from tutor.progress.db import StoreBusy
from tutor.progress.schema import FILE_NAME
from tutor.progress.store import Store

WRITER = str(ROOT / "tests" / "progress_writer.py")


def start_writer(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, WRITER, str(home), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=run_tutor_env(),
    )


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_kill_9_mid_run_keeps_every_committed_answer(home: Path) -> None:
    proc = start_writer(home)
    committed = []
    for line in proc.stdout:  # ids the writer saw committed
        committed.append(int(line))
        if len(committed) == 150:
            break
    os.kill(proc.pid, signal.SIGKILL)  # while it is in the middle of further writes
    proc.wait(timeout=10)
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    with Store(home) as store:
        assert store.notices == []  # the file is fine: nothing moved aside
        ids = {a.id for a in store.answers("lesson")}
        assert set(committed) <= ids
        assert len(ids) >= 150
    conn = sqlite3.connect(home / FILE_NAME)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_writing_at_once_both_succeed(home: Path) -> None:
    Store(home).close()
    a, b = start_writer(home, "a", "150"), start_writer(home, "b", "150")
    with Store(home) as store:  # and this process writes too, meanwhile
        for i in range(50):
            store.mark_read("lesson", f"s{i}")
    for proc in (a, b):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert len(out.split()) == 150
    with Store(home) as store:
        questions = {a.question for a in store.answers("lesson")}
        assert len(questions) == 300 and {"a-149", "b-149"} <= questions
        assert len(store.sections_read("lesson")) == 50


def test_a_store_held_too_long_by_another_process_says_so(home: Path) -> None:
    Store(home).close()
    holder = subprocess.Popen(
        [
            PYTHON,
            "-c",
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(home / FILE_NAME)!r}, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE'); print('holding', flush=True); time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        with Store(home, timeout_s=0.3) as store:
            assert store.sections_read() == []  # reading still works under WAL
            started = time.monotonic()
            with pytest.raises(StoreBusy, match="locked by another tutor process"):
                store.mark_read("l", "s")
            assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_a_read_does_not_wait_for_a_write_waiting_on_another_process(home: Path) -> None:
    """The app's writer thread waits (up to the busy timeout) while another process holds the lock;
    a read of the same store in another thread (the UI's) answers meanwhile."""
    with Store(home) as store:
        store.mark_read("l", "s")
        other = sqlite3.connect(home / FILE_NAME, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process's write lock
        writer = threading.Thread(target=lambda: store.mark_read("l", "t"))
        try:
            writer.start()
            while store.db._lock.acquire(blocking=False):  # until the writer holds the store's write side
                store.db._lock.release()
                time.sleep(0.005)
            started = time.monotonic()
            read = [r.section for r in store.sections_read("l")]
            assert time.monotonic() - started < 1 and writer.is_alive()  # read while the write waits
            assert read == ["s"]
        finally:
            other.execute("ROLLBACK")
            other.close()
            writer.join()
        assert [r.section for r in store.sections_read("l")] == ["s", "t"]  # the write went on after


def _open_together(home: Path) -> list[object]:
    """Two threads open the store in `home` at the same moment; the notices and errors they met."""
    start = threading.Barrier(2)
    said: list[object] = []

    def open_store() -> None:
        start.wait()
        try:
            with Store(home) as store:
                said.extend(store.notices)
        except TutorError as err:
            said.append(err)

    run_in_two_threads(open_store)
    return said


def test_tutors_opening_a_new_store_at_the_same_moment_take_turns(tmp_path: Path) -> None:
    """Two tutors starting together on a fresh home (threads, each with its own connection, as two
    processes would have): neither takes the other's half-made store for another program's file
    and moves it aside, and neither gives up as busy. Before opening took a lock, 4 pairs in 300
    did one or the other."""
    for n in range(150):
        home = tmp_path / f"home{n}"
        said = _open_together(home)
        assert said == [] and not list(home.glob("*corrupt*")), (n, said)
