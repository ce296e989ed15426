"""One way to run a tutor child process: JSON lines over a pipe, a deadline, cancel, and a kill of
its whole process tree.

Every child runs in a session of its own, so stopping it stops whatever it started: a terminate
(SIGTERM to the group, for children that save their work on the way out), then after a grace period
SIGKILL to the group. Its stdout carries one JSON object per line; a line that is not JSON (a
library's warning) is passed on as {"event": "stray", "text"}. Its stderr goes to a file whose tail
explains a failure.

    child = SyncChild(argv, env=env)                          # the CLI, the grader, tests
    child.send(job_bytes)
    for event in child.events(deadline=..., cancel=stop):     # ChildTimeout, ChildCancelled
        ...
    child.stop()

    child = await AsyncChild.start(argv, env=env)             # the app (asyncio, no threads)
    async for event in child.events(timeout=...):
        ...
    await child.stop(grace_s=5)                               # also on task cancellation

    server = ForkServer(argv, env=env)                        # a zygote: imports once, forks per request
    child = server.fork()                                     # a fresh process; send/events/stop as above
    server.close()

Users: experiments (tutor/experiments/runner.py), the app's grading (tutor/ui/grading_client.py) and the
grader (tutor/grading/runner.py: cold judges as SyncChild, warm ones forked by a ForkServer); the
judge forks its sandboxed worker itself, on top of this.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import IO, TYPE_CHECKING, Any

from tutor.settings import CHILD_LINE_LIMIT, CHILD_STDERR_TAIL

if TYPE_CHECKING:  # imported where used: a grade command starts its judge before it loads asyncio
    import asyncio


class ChildTimeout(Exception):
    """The deadline passed before the child finished; it has been stopped."""


class ChildCancelled(Exception):
    """`cancel` was set; the child has been stopped."""


def die_with_parent() -> None:
    """For a child's first lines: end when the process that started it ends, however that happens
    (a session of its own keeps it out of its parent's process group)."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent was already gone
            os._exit(1)


def parse_line(raw: bytes) -> dict[str, Any] | None:
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return {"event": "stray", "text": text[:2000]}
    return event if isinstance(event, dict) else {"event": "stray", "text": text[:2000]}


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the child leads its own session: the group is its whole tree
    except (ProcessLookupError, PermissionError):
        pass


def read_tail(stderr: IO[bytes]) -> str:
    stderr.seek(0, os.SEEK_END)
    size = stderr.tell()
    stderr.seek(max(0, size - CHILD_STDERR_TAIL * 4))
    return stderr.read().decode("utf-8", "replace")[-CHILD_STDERR_TAIL:]


def _read_events(
    fd: int, deadline: float | None, cancel: threading.Event | None, stop, alive
) -> Iterator[dict]:
    """JSON-line events from `fd` until it closes (or, once `alive()` says the writer has exited, until
    nothing more is waiting). `stop(grace_s)` ends the writer on a deadline or cancel."""
    buffer = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if cancel is not None and cancel.is_set():
                stop(grace_s=5.0)
                raise ChildCancelled()
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                stop()
                raise ChildTimeout()
            if not sel.select(0.1 if left is None else min(left, 0.1)):
                # once it has exited and its last words are read, stop: what it started may hold
                # the pipe open, and is not waited for
                if alive() or sel.select(0):
                    continue
                break
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if (event := parse_line(line)) is not None:
                    yield event
            if len(buffer) > CHILD_LINE_LIMIT:
                stop()
                raise ChildTimeout()  # a line that never ends is as good as a hang
    if (event := parse_line(buffer)) is not None:
        yield event


class SyncChild:
    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: str | None = None):
        self._stderr = tempfile.TemporaryFile()
        self._closed_tail = ""
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )

    def send(self, data: bytes = b"") -> None:
        """Write `data` to the child's stdin and close it (the child reads until the end)."""
        assert self.proc.stdin is not None  # stdin=PIPE
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.close()
        except BrokenPipeError:
            pass

    def events(
        self, *, deadline: float | None = None, cancel: threading.Event | None = None
    ) -> Iterator[dict]:
        assert self.proc.stdout is not None  # stdout=PIPE
        fd = self.proc.stdout.fileno()
        yield from _read_events(fd, deadline, cancel, self.stop, lambda: self.proc.poll() is None)
        self.proc.wait()

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def stderr_tail(self) -> str:
        return self._closed_tail if self._stderr.closed else read_tail(self._stderr)

    def stop(self, grace_s: float = 0.0) -> None:
        """Stop the child and everything it started; wait for it. Safe to call twice."""
        if self.proc.poll() is None and grace_s > 0:
            _signal_group(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        """Stop the child and release its pipes; `stderr_tail` still answers."""
        self.stop()
        self._closed_tail = read_tail(self._stderr)
        assert self.proc.stdout is not None  # stdout=PIPE
        for stream in (self.proc.stdout, self._stderr):
            stream.close()


class ServerGone(Exception):
    """The fork server exited: it can fork nothing more."""


class ForkServer:
    """A long-lived child that forks a fresh process per request: a zygote. It is started with the
    number of its end of a Unix socket pair as its last argument. A request is two pipe descriptors
    sent over that socket (the new process's input and its events), so the server never sees a
    request's data; it answers with the new process's pid and, where the kernel has pidfds, a pidfd to
    stop it by (no pid reuse can make that kill someone else). The server lives in a session of its own;
    `close` ends it, and what it forked dies with it (each fork's parent-death signal)."""

    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: str | None = None):
        self._sock, theirs = socket.socketpair()
        self._stderr = tempfile.TemporaryFile()
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            [*argv, str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env=env,
            cwd=cwd,
            pass_fds=[theirs.fileno()],
            start_new_session=True,
        )
        theirs.close()

    def fork(self) -> ForkedChild:
        """A fresh process from the server (it waits while the server is still starting)."""
        return ForkedChild(*self.fork_fds())

    def fork_fds(self) -> tuple[int, int | None, int, int]:
        """A fresh process as (pid, pidfd or None, its input's write end, its events' read end): for a
        caller that hands the process on (tutor.serve.forks: to a learner's app, over a socket)."""
        job_r, job_w = os.pipe()
        events_r, events_w = os.pipe()
        try:
            with self._lock:  # one request and its answer at a time
                socket.send_fds(self._sock, [b"fork"], [job_r, events_w])
                answer, fds, _, _ = socket.recv_fds(self._sock, 32, 1)
        except OSError:
            answer, fds = b"", []
        finally:
            os.close(job_r)
            os.close(events_w)
        if not answer:
            for fd in (job_w, events_r, *fds):
                os.close(fd)
            raise ServerGone(read_tail(self._stderr))
        return int(answer), fds[0] if fds else None, job_w, events_r

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr_tail(self) -> str:
        return read_tail(self._stderr)

    def close(self) -> None:
        self._sock.close()
        _signal_group(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._stderr.close()


class ForkedChild:
    """A process a ForkServer forked for us: its input, its events, and a way to stop it. Not our child,
    so there is no exit code; it has exited when its events end."""

    def __init__(self, pid: int, pidfd: int | None, job_w: int, events_r: int):
        self.pid, self._pidfd, self._job_w, self._events_r = pid, pidfd, job_w, events_r
        self._ended = False
        self.returncode: int | None = None

    def send(self, data: bytes = b"") -> None:
        """Write `data` to the process's input and close it (it reads until the end)."""
        try:
            with os.fdopen(self._job_w, "wb") as fh:
                fh.write(data)
        except BrokenPipeError:
            pass
        self._job_w = -1

    def events(
        self, *, deadline: float | None = None, cancel: threading.Event | None = None
    ) -> Iterator[dict]:
        yield from _read_events(self._events_r, deadline, cancel, self.stop, lambda: not self._ended)
        self._ended = True

    def stderr_tail(self) -> str:
        return ""  # the server's stderr holds every fork's: ForkServer.stderr_tail

    def stop(self, grace_s: float = 0.0) -> None:
        """Kill the process (its sandboxed children die with it). By pidfd where there is one; by pid
        only while its events have not ended (a pid is reused once it is reaped)."""
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass
        elif not self._ended:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        self._ended = True

    def close(self) -> None:
        self.stop()
        for fd in (self._job_w, self._events_r, self._pidfd):
            if fd is not None and fd >= 0:
                os.close(fd)
        self._job_w = self._events_r = -1
        self._pidfd = None


class AsyncChild:
    def __init__(self, proc: asyncio.subprocess.Process, stderr: IO[bytes]):
        self.proc, self._stderr = proc, stderr

    @classmethod
    async def start(cls, argv: list[str], *, env: dict[str, str], cwd: str | None = None) -> AsyncChild:
        import asyncio

        stderr = tempfile.TemporaryFile()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
            start_new_session=True,
            limit=CHILD_LINE_LIMIT,
        )
        return cls(proc, stderr)

    async def events(self, *, timeout: float | None = None) -> AsyncIterator[dict]:
        """The child's events until its stdout closes; ChildTimeout after `timeout` seconds. Cancelling
        the task that iterates stops the child (call `stop` in a finally)."""
        import asyncio

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                await self.stop()
                raise ChildTimeout()
            assert self.proc.stdout is not None  # stdout=PIPE
            reading = asyncio.ensure_future(self.proc.stdout.readline())
            exited = asyncio.ensure_future(self.proc.wait())
            done, _ = await asyncio.wait({reading, exited}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            exited.cancel()
            if not done:
                reading.cancel()
                await self.stop()
                raise ChildTimeout()
            if reading not in done:
                # it exited: read its last words, then stop (what it started may hold the pipe open)
                try:
                    await asyncio.wait_for(asyncio.shield(reading), 0.5)
                except TimeoutError:
                    reading.cancel()
                    break
            line = reading.result()
            if not line:
                break
            if (event := parse_line(line)) is not None:
                yield event
        await self.proc.wait()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def stderr_tail(self) -> str:
        return read_tail(self._stderr)

    async def stop(self, grace_s: float = 0.0) -> None:
        import asyncio

        if self.proc.returncode is None and grace_s > 0:
            _signal_group(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), grace_s)
            except TimeoutError:
                pass
        _signal_group(self.proc.pid, signal.SIGKILL)  # also what it started, if it exited first
        await self.proc.wait()
