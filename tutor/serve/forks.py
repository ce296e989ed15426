"""The server's warm processes, shared by the whole class, and each app's way to them.

One warm judge (tutor.grading.judges.WarmJudge: it imports torch and the grading code and never reads
a job) and one warm process for experiments (tutor.experiment_zygote) run per server. A learner's app asks
for a fresh fork of either over its relay, a socket pair made for that app alone (its end is passed
to the app; its number is in TUTOR_SERVED). The server forks, moves the new process into that
learner's bounds (tutor.serve.bounds) before it can read its job, writes the learner's home as the
first line of an experiment's input (the only home it may write), and hands the app the process's
input, its events and a pidfd. So torch is in memory once per server, not once per learner, and what a
grade or an experiment uses counts against its learner's cap.

The relay's messages, one request at a time, each answered:

    judge                   a fresh judge                 -> "PID" + (input, events, pidfd)
    experiment              a fresh experiment (quick)    -> the same
    experiment-long         one that may write the home   -> the same
    stop PID GRACE          SIGTERM, SIGKILL after GRACE  -> "ok"    (Landlock keeps the app's own
                                                                       signals from reaching it)
    oom                     the learner's count of kills at the memory cap -> "N"

Anything else is answered "?"; descriptors sent by the app are closed unread. At most MAX_FORKS of an
app's forks run at once ("busy"); when the app ends, every fork made for it is killed. A learner whose
forks the kernel keeps ending at the memory cap waits before the next (`Cooling`): the answer is then
"cooling S N", S seconds left after N such ends in a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import select
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tutor.proc.forkserver import ForkServer
from tutor.serve.bounds import LearnerBounds

MAX_FORKS = 6
COOL_AFTER = 2  # forks in a row ended by the kernel at the memory cap before the next one waits
COOL_FIRST_S, COOL_MAX_S = 5.0, 60.0  # the first wait; each end after it doubles it, up to the most
ZYGOTE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TUTOR_CHECKPOINTS", "TMPDIR")


def zygote_env() -> dict[str, str]:
    from tutor.settings import tutor_child_env

    env = {k: v for k, v in tutor_child_env().items() if k in ZYGOTE_ENV or k.startswith("PYTHON")}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


class Warm:
    """The class's warm judge and warm experiment process (started at once: each imports torch)."""

    def __init__(self, lessons_dir: Path) -> None:
        from tutor.grading.judges import WarmJudge

        self.judge = WarmJudge()
        self.experiments = ForkServer(
            [sys.executable, "-m", "tutor.experiment_zygote", str(lessons_dir)],
            env=zygote_env(),
            cwd=tempfile.gettempdir(),
        )

    def pids(self) -> list[int]:
        return [self.judge.server.proc.pid, self.experiments.proc.pid]

    def close(self) -> None:
        self.judge.close()
        self.experiments.close()


@dataclass
class Cooling:
    """One learner's forks ended at the memory cap, and the wait before their next. Each such end costs
    the host a cap's worth of page faults and reclaim, which the other learners' keys wait behind; a
    file that hits the cap on every grade hits it again, so the second end in a row gets a wait of
    COOL_FIRST_S, each one after it twice that, up to COOL_MAX_S. A fork that ends without being
    killed ends the streak. Kept per learner, so a reconnect (a new app) does not reset it."""

    seen: int = 0  # the group's count of kills at the last look
    streak: int = 0  # looks in a row that found a new kill
    forked: bool = False  # a fork was made since the last look
    until: float = 0.0  # no fork before this (time.monotonic)

    def wait_s(self, kills: int, running: bool, now: float) -> float:
        """Seconds before the next fork may be made, looking at the group's kills now; `running`: a
        fork made for the learner is still going."""
        if kills > self.seen:
            self.streak += 1
            if self.streak >= COOL_AFTER:
                self.until = now + min(COOL_MAX_S, COOL_FIRST_S * 2 ** (self.streak - COOL_AFTER))
        elif self.forked and not running:
            self.streak = 0  # the last one ended on its own
        self.seen = kills
        if not running:
            self.forked = False
        return max(0.0, self.until - now)


def _vm_size(pid: int) -> int:
    """A process's address space (bytes), from /proc/PID/status."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


class AppRelay:
    """The server's end of one app's relay."""

    def __init__(self, warm: Warm, bounds: LearnerBounds, home: Path, cooling: Cooling | None = None) -> None:
        self.warm, self.bounds, self.home = warm, bounds, home
        self.cooling = cooling if cooling is not None else Cooling()
        self.mine, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.mine.setblocking(False)
        self.forks: dict[int, int] = {}  # pid -> our pidfd (-1: none)
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Serve the app's requests (its end has been passed to it: ours is closed here)."""
        self.theirs.close()
        asyncio.get_running_loop().add_reader(self.mine.fileno(), self._readable)
        self._task = asyncio.create_task(self._serve())

    def _readable(self) -> None:
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(self.mine, 256, 4)
            except BlockingIOError:
                return
            except OSError:
                message, fds = b"", []
            for fd in fds:
                os.close(fd)
            if not message:
                with contextlib.suppress(Exception):
                    asyncio.get_running_loop().remove_reader(self.mine.fileno())
                self._queue.put_nowait(None)
                return
            if self._queue.qsize() < 16:  # an app waits for each answer: more is not the app's doing
                self._queue.put_nowait(message)

    async def _serve(self) -> None:
        while (message := await self._queue.get()) is not None:
            try:
                text, fds = await self._answer(message)
            except (OSError, ValueError):
                text, fds = b"?", []
            try:
                socket.send_fds(self.mine, [text], fds)
            except OSError:
                return
            finally:
                for fd in fds:
                    os.close(fd)

    async def _answer(self, message: bytes) -> tuple[bytes, list[int]]:
        kind, *args = message.split()
        if kind == b"judge":
            return await self._fork(self.warm.judge.server, None)
        if kind in (b"experiment", b"experiment-long"):
            home = str(self.home) if kind == b"experiment-long" else None
            return await self._fork(self.warm.experiments, json.dumps({"home": home}).encode() + b"\n")
        if kind == b"stop" and len(args) == 2:
            self._stop(int(args[0]), min(max(float(args[1]), 0.0), 30.0))
            return b"ok", []
        if kind == b"oom":
            return str(self.bounds.oom_kills()).encode(), []
        return b"?", []

    async def _fork(self, server: ForkServer, header: bytes | None) -> tuple[bytes, list[int]]:
        self._prune()
        if len(self.forks) >= MAX_FORKS:
            return b"busy", []
        if (wait := self.cooling.wait_s(self.bounds.oom_kills(), bool(self.forks), time.monotonic())) > 0:
            return b"cooling %d %d" % (math.ceil(wait), self.cooling.streak), []
        pid, pidfd, job_w, events_r = await asyncio.to_thread(server.fork_fds)
        self.cooling.forked = True
        self.bounds.adopt(pid, _vm_size(server.proc.pid))
        if header is not None:
            os.write(job_w, header)  # before the app has the pipe: its job can only come after
        self.forks[pid] = pidfd if pidfd is not None else -1
        given = [job_w, events_r] + ([os.dup(pidfd)] if pidfd is not None else [])
        return str(pid).encode(), given

    def _signal(self, pid: int, sig: int) -> None:
        pidfd = self.forks.get(pid)
        if pidfd is None:
            return  # not a fork of this app's
        with contextlib.suppress(OSError):
            if pidfd >= 0:
                signal.pidfd_send_signal(pidfd, sig)
            elif pid in self.bounds.pids():
                os.kill(pid, sig)

    def _stop(self, pid: int, grace_s: float) -> None:
        if grace_s <= 0:
            self._signal(pid, signal.SIGKILL)
            return
        self._signal(pid, signal.SIGTERM)
        asyncio.get_running_loop().call_later(grace_s, self._signal, pid, signal.SIGKILL)

    def busy(self) -> bool:
        """A grade or a run made for the app is going (its learner is not idle, even without a key)."""
        self._prune()
        return bool(self.forks)

    def _prune(self) -> None:
        """Forget forks that have ended (a pidfd reads as ready once its process has exited)."""
        for pid, pidfd in list(self.forks.items()):
            ended = (
                not Path(f"/proc/{pid}").exists() if pidfd < 0 else bool(select.select([pidfd], [], [], 0)[0])
            )
            if ended:
                if pidfd >= 0:
                    os.close(pidfd)
                del self.forks[pid]

    async def close(self) -> None:
        """Kill every fork made for the app; stop serving it."""
        for pid in list(self.forks):
            self._signal(pid, signal.SIGKILL)
        for pidfd in self.forks.values():
            if pidfd >= 0:
                os.close(pidfd)
        self.forks.clear()
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.mine.fileno())
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.mine.close()
        with contextlib.suppress(OSError):
            self.theirs.close()
