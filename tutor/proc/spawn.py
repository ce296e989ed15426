"""Starting a program: every child in a session of its own (stopping its group stops all it started),
its environment given whole (tutor.settings.tutor_child_env when the caller gives none), niced with its
session when asked; a short command's exit code; a child's death with its parent. It imports only the
standard library when loaded (the judge and the zygotes load it before their work).

    proc = spawn(argv, stdin=PIPE, stdout=PIPE, stderr=file, niceness=n)          # subprocess.Popen
    proc = await spawn_async(argv, stdout=PIPE, env=env, pass_fds=(fd,))         # asyncio's Process
    code = run(argv, timeout_s=10)                                               # None: not run in time
    code = run_in_terminal([editor, file])                                       # in the foreground
    die_with_parent()                                                            # a child's first lines
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
Stream = int | IO[Any] | None

_PR_SET_PDEATHSIG = 1


def die_with_parent(*, orphan_check: bool = True) -> None:
    """For a child's first lines: end when the process that started it ends, however that happens (a
    session of its own keeps it out of its parent's process group). With `orphan_check`, end at once if
    the parent is already gone (this process was handed to init). Off for a process forked into a new
    PID namespace, where the parent's pid reads as 0 or 1 while it lives."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if orphan_check and os.getppid() == 1:
            os._exit(1)


def lower_priority(pid: int, niceness: int, *, session: int | None = None) -> None:
    """Process `pid` at `niceness` at least, and so is the session it leads. Linux's scheduler shares the CPU
    between sessions (autogroups) first and weighs a process's niceness only against the others of its own
    session: a niced process in a session of its own, as every child here is, took as much CPU as the app's
    whole session, so the screen froze while a job trained. The session's niceness lives in
    /proc/PID/autogroup (absent without autogroups, and on macOS: then the process's niceness is all);
    `session`: that file as `open_session` opened it, for a process that has confined itself since."""
    if niceness <= 0:
        return
    try:
        os.setpriority(os.PRIO_PROCESS, pid, max(niceness, os.getpriority(os.PRIO_PROCESS, pid)))
    except OSError:  # ended already
        return
    _nice_session(pid, niceness, session)


def open_session(pid: int) -> int | None:
    """/proc/PID/autogroup opened for writing (None where there is none), for `lower_priority` after a
    confinement: Landlock refuses the open once /proc is read-only, not a write to what is open."""
    try:
        return os.open(f"/proc/{pid}/autogroup", os.O_WRONLY)
    except OSError:
        return None


def _nice_session(pid: int, niceness: int, session: int | None = None) -> None:
    try:
        if session is not None:
            os.write(session, str(niceness).encode())
            return
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(niceness))
    except OSError:
        pass


def _niced(argv: list[str], niceness: int) -> list[str]:
    """`argv` under `nice` when `niceness` is above this process's: the child's every thread is niced
    from its first instruction (a later setpriority reaches only its main thread)."""
    more = niceness - os.getpriority(os.PRIO_PROCESS, 0)
    if more > 0 and shutil.which("nice"):
        return ["nice", "-n", str(more), *argv]
    return list(argv)


def _lower_started(pid: int, argv: list[str], niceness: int) -> None:
    """After a start: the session's niceness; the process's too unless `nice` sets it (setting both
    races: `nice` adds to what it finds, and found 7 set from here, so ran at 14)."""
    if argv[:1] == ["nice"]:
        _nice_session(pid, niceness)
    else:
        lower_priority(pid, niceness)


def _env(env: dict[str, str] | None) -> dict[str, str]:
    if env is not None:
        return env
    from tutor.settings import tutor_child_env

    return tutor_child_env()


def spawn(
    argv: list[str],
    *,
    stdin: Stream = DEVNULL,
    stdout: Stream = DEVNULL,
    stderr: Stream = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    pass_fds: tuple[int, ...] = (),
    niceness: int = 0,
) -> subprocess.Popen[bytes]:
    """`argv` started in a session of its own, at `niceness` at least (and its session too)."""
    command = _niced(argv, niceness)
    proc = subprocess.Popen(
        command,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=_env(env),
        cwd=cwd,
        pass_fds=pass_fds,
        start_new_session=True,
    )
    _lower_started(proc.pid, command, niceness)
    return proc


async def spawn_async(
    argv: list[str],
    *,
    stdin: Stream = DEVNULL,
    stdout: Stream = DEVNULL,
    stderr: Stream = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    pass_fds: tuple[int, ...] = (),
    niceness: int = 0,
    limit: int = 2**16,
) -> asyncio.subprocess.Process:
    """As `spawn`, for asyncio: its pipes are streams (`limit`: the longest line they read; asyncio's default)."""
    import asyncio

    command = _niced(argv, niceness)
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=_env(env),
        cwd=cwd,
        pass_fds=pass_fds,
        start_new_session=True,
        limit=limit,
    )
    _lower_started(proc.pid, command, niceness)
    return proc


def run(argv: list[str], *, timeout_s: float) -> int | None:
    """A short command's exit code, its output dropped; None when it cannot start or overruns."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode


def run_in_terminal(argv: list[str]) -> int:
    """A program in this terminal's foreground until it ends (the learner's own editor, while the app is
    suspended): this process's session, environment and terminal, unlike `spawn`, since a program in a
    session of its own cannot read the terminal. Its exit code; OSError when it cannot start."""
    return subprocess.call(argv)
