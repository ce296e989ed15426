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

A zygote's forks (tutor.proc.forkserver.ForkedChild) read their events here too.

Users: experiments (tutor/experiments/runner.py), the app's grading (tutor/ui/grading_client.py) and the
grader (tutor/grading/runner.py: cold judges as SyncChild, warm ones forked by a ForkServer); the
judge forks its sandboxed worker itself (tutor/grading/judging/judge.py).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import IO, TYPE_CHECKING, Any

from tutor.proc.spawn import DEVNULL, PIPE, spawn, spawn_async
from tutor.settings import CHILD_LINE_LIMIT, CHILD_STDERR_TAIL

if TYPE_CHECKING:  # imported where used: a grade command starts its judge before it loads asyncio
    import asyncio


class ChildTimeout(Exception):
    """The deadline passed before the child finished; it has been stopped."""


class ChildCancelled(Exception):
    """`cancel` was set; the child has been stopped."""


def parse_line(raw: bytes) -> dict[str, Any] | None:
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return {"event": "stray", "text": text[:2000]}
    return event if isinstance(event, dict) else {"event": "stray", "text": text[:2000]}


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the child leads its own session: the group is its whole tree
    except (ProcessLookupError, PermissionError):
        pass


def read_tail(stderr: IO[bytes]) -> str:
    stderr.seek(0, os.SEEK_END)
    size = stderr.tell()
    stderr.seek(max(0, size - CHILD_STDERR_TAIL * 4))
    return stderr.read().decode("utf-8", "replace")[-CHILD_STDERR_TAIL:]


def read_events(
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
        self.proc = spawn(argv, stdin=PIPE, stdout=PIPE, stderr=self._stderr, env=env, cwd=cwd)

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
        yield from read_events(fd, deadline, cancel, self.stop, lambda: self.proc.poll() is None)
        self.proc.wait()

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def stderr_tail(self) -> str:
        return self._closed_tail if self._stderr.closed else read_tail(self._stderr)

    def stop(self, grace_s: float = 0.0) -> None:
        """Stop the child and everything it started; wait for it. Safe to call twice."""
        if self.proc.poll() is None and grace_s > 0:
            signal_group(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        signal_group(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        """Stop the child and release its pipes; `stderr_tail` still answers."""
        self.stop()
        self._closed_tail = read_tail(self._stderr)
        assert self.proc.stdout is not None  # stdout=PIPE
        for stream in (self.proc.stdout, self._stderr):
            stream.close()


class AsyncChild:
    def __init__(self, proc: asyncio.subprocess.Process, stderr: IO[bytes]):
        self.proc, self._stderr = proc, stderr

    @classmethod
    async def start(
        cls, argv: list[str], *, env: dict[str, str], cwd: str | None = None, niceness: int = 0
    ) -> AsyncChild:
        """`argv` started; at `niceness` at least, its session too (tutor.proc.spawn.lower_priority)."""
        stderr = tempfile.TemporaryFile()
        proc = await spawn_async(
            argv,
            stdin=DEVNULL,
            stdout=PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
            niceness=niceness,
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
            signal_group(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), grace_s)
            except TimeoutError:
                pass
        signal_group(self.proc.pid, signal.SIGKILL)  # also what it started, if it exited first
        await self.proc.wait()
