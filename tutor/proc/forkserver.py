"""A zygote: a long-lived process that imports once and forks a fresh process per request. Both ends
of its protocol are here, one implementation with two users: the warm judge (tutor/grading/judging/
judge.py --zygote, started by tutor/grading/judges.py) and the served class's experiments
(tutor/experiment_zygote.py, started by tutor/serve/forks.py).

    server = ForkServer(argv, env=env)      # the client: starts `argv FD`, a zygote of its own session
    child = server.fork()                   # a fresh process; send/events/stop as tutor.proc.child's
    server.close()

    serve(control_fd, run)                  # the zygote's loop (never returns): each fork calls `run()`
                                            # with the request's input as fd 0 and its events' pipe as 1

A request is two pipe descriptors sent over a Unix socket (the new process's input and its events), so the
zygote never sees a request's data; it answers with the new process's pid and, where the kernel has
pidfds, a pidfd to stop it by (no pid reuse can make that kill someone else). Every fork leads a session
of its own and dies with the zygote, which dies with its starter.
"""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import NoReturn

from tutor.proc.child import read_events, read_tail, signal_group
from tutor.proc.spawn import die_with_parent, spawn


def serve(control_fd: int, run: Callable[[], object]) -> NoReturn:
    """The zygote's loop: for each request on the control socket fork a process that reads its input
    from fd 0 and writes its events to fd 1 (the request's two pipes), in a session of its own, ended
    with this process; it runs `run()` and exits (1 if `run` raises or returns). Answers each request
    with the fork's pid and pidfd. Ends when the socket closes or a request is not two descriptors."""
    sock = socket.socket(fileno=control_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the forks
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(sock, 16, 2)
        except OSError:
            fds = []
        if len(fds) != 2:
            os._exit(0)  # the client is gone, or asked for nothing
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            sock.close()
            _forked(parent, fds, run)
        for fd in fds:
            os.close(fd)
        _answer(sock, pid)


def _forked(parent: int, fds: list[int], run: Callable[[], object]) -> NoReturn:
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # it waits for its own children
        os.setsid()
        die_with_parent(orphan_check=False)
        if os.getppid() != parent:  # the zygote ended before the line above
            os._exit(1)
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        for fd in fds:
            os.close(fd)
        run()
    finally:
        os._exit(1)


def _answer(sock: socket.socket, pid: int) -> None:
    try:
        handle = [os.pidfd_open(pid)]
    except (AttributeError, OSError):  # before Linux 5.3: the client kills by pid
        handle = []
    try:
        socket.send_fds(sock, [str(pid).encode()], handle)
    except OSError:
        os._exit(0)
    finally:
        for fd in handle:
            os.close(fd)


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
        fd = theirs.fileno()
        self.proc = spawn([*argv, str(fd)], stderr=self._stderr, env=env, cwd=cwd, pass_fds=(fd,))
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
        """End the server (again: nothing; once reaped, its pid may be another's)."""
        self._sock.close()
        if self.proc.returncode is None:
            signal_group(self.proc.pid, signal.SIGKILL)
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
        yield from read_events(self._events_r, deadline, cancel, self.stop, lambda: not self._ended)
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
