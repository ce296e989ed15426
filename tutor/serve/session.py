"""A served session as the learner's app sees it (no Textual here): what the server set, and the relay
to the server's warm processes (tutor.serve.forks).

    served = session()                      # None outside a served session
    tutor_warm = RelayJudge(served.relay)   # the app's warm judge: each grade's judge forked by the server
    result = await run_experiment(served, "dk-scaling", params, on_event, home=home)

The server starts each app with TUTOR_SERVED, a JSON object: the relay's descriptor, the learner's id,
the class folder (to hide, tutor.serve.confine), and the learner's caps (memory, CPU, file size).
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tutor.errors import TutorError
from tutor.proc.child import ChildCancelled
from tutor.proc.forkserver import ForkedChild, ServerGone

ENV = "TUTOR_SERVED"


@dataclass(frozen=True)
class Served:
    relay_fd: int
    learner: str
    folder: str | None  # the class folder (None: the single learner's server)
    memory_bytes: int
    cpu_cores: float
    home_bytes: int

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @property
    def relay(self) -> Relay:
        return _relay(self.relay_fd)


def session() -> Served | None:
    """This process's served session, from TUTOR_SERVED; None when it is not one (or the value is not
    the server's)."""
    from tutor.settings import env

    value = env(ENV)
    if value is None:
        return None
    try:
        return Served(**json.loads(value))
    except (ValueError, TypeError):
        return None


class Cooling(TutorError):
    """The server makes this learner wait before their next grade or run: the kernel ended their last
    ones at the memory cap (tutor.serve.forks.Cooling)."""


class Relay:
    """The app's end of its relay: one request and its answer at a time (grades and experiments ask
    from their threads)."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self._lock = threading.Lock()
        self.alive = True

    def ask(self, message: bytes) -> tuple[bytes, list[int]]:
        with self._lock:
            try:
                self.sock.sendmsg([message])
                answer, fds, _, _ = socket.recv_fds(self.sock, 64, 3)
            except OSError:
                answer, fds = b"", []
        if not answer:
            self.alive = False
        return answer, fds

    def fork(self, kind: bytes) -> RelayedChild:
        """A fresh process of `kind` in this learner's bounds; Cooling while the server makes the learner
        wait (their last ones ended at the memory cap), ServerGone when it forks nothing."""
        answer, fds = self.ask(kind)
        if not answer.isdigit() or len(fds) < 2:
            for fd in fds:
                os.close(fd)
            word, *numbers = answer.split()
            if word == b"cooling" and len(numbers) == 2 and all(n.isdigit() for n in numbers):
                raise Cooling("err.serve.cooling", n=int(numbers[1]), s=int(numbers[0]))
            raise ServerGone(answer.decode("ascii", "replace"))
        return RelayedChild(int(answer), fds[2] if len(fds) > 2 else None, fds[0], fds[1], self)

    def oom_kills(self) -> int:
        answer, _ = self.ask(b"oom")
        return int(answer) if answer.isdigit() else 0


_relays: dict[int, Relay] = {}


def _relay(fd: int) -> Relay:
    if fd not in _relays:
        _relays[fd] = Relay(fd)
    return _relays[fd]


class RelayedChild(ForkedChild):
    """A process the server forked for this app: stopped through the server (the app's own signals do
    not leave its Landlock domain), by its pidfd too where they may."""

    def __init__(self, pid: int, pidfd: int | None, job_w: int, events_r: int, relay: Relay) -> None:
        super().__init__(pid, pidfd, job_w, events_r)
        self.relay, self.handle = relay, pidfd

    def stop(self, grace_s: float = 0.0) -> None:
        """SIGTERM, and SIGKILL after `grace_s` (0: at once); waits up to `grace_s` for it to end."""
        self.relay.ask(b"stop %d %.1f" % (self.pid, grace_s))
        if grace_s > 0 and self.handle is not None:
            select.select([self.handle], [], [], grace_s)  # a pidfd reads as ready once it has exited
        super().stop()


class RelayJudge:
    """The app's warm judge in a served session (what tutor.ui.state.Tutor.warm_judge hands out): each
    grade's judge is forked by the server's one warm judge and placed in this learner's bounds."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.server = relay  # `server.alive`, as a WarmJudge's ForkServer answers

    def judge(self) -> ForkedChild:
        return self.relay.fork(b"judge")

    def close(self) -> None:
        pass  # the server's judge is the class's: it stays


async def run_experiment(
    served: Served,
    name: str,
    raw: Mapping[str, Any] | Any,
    on_event: Callable[[dict], None] | None = None,
    *,
    home: Path,
    niceness: int = 0,
    grace_s: float = 5.0,
) -> Any:
    """Run an experiment in a process the server forks for it (in this learner's bounds), as
    tutor.experiments.runner.run_async would run it here; cancel the task to stop it."""
    from tutor.experiments.errors import Cancelled, ExperimentError
    from tutor.experiments.runner import ChildOutcome, cached, child_command, prepare

    spec, params = prepare(name, raw)
    if (hit := cached(name, params, home if spec.long else None)) is not None:
        return hit
    argv = child_command(name, params, home if spec.long else None)[3:]  # after "python -m tutor"
    job = json.dumps({"argv": argv, "nice": niceness if spec.long else 0}).encode()
    relay, loop = served.relay, asyncio.get_running_loop()
    outcome, cancel = ChildOutcome(name, on_event), threading.Event()

    def work() -> int:
        kills = relay.oom_kills()
        child = relay.fork(b"experiment-long" if spec.long else b"experiment")
        try:
            child.send(job)
            for event in child.events(cancel=cancel):
                loop.call_soon_threadsafe(outcome.event, event)
        finally:
            child.close()
        return relay.oom_kills() - kills

    try:
        killed = await asyncio.to_thread(work)
    except asyncio.CancelledError:
        cancel.set()  # the thread stops the fork and ends
        raise
    except ChildCancelled:
        raise Cancelled() from None
    except ServerGone as gone:
        raise ExperimentError("err.serve.no_fork", why=str(gone) or "-") from None
    except Cooling as cooling:
        raise ExperimentError(cooling.key, **cooling.values) from None
    await asyncio.sleep(0)  # the events the thread handed over are in
    if outcome.result is None and outcome.error is None and not outcome.cancelled and killed > 0:
        raise ExperimentError("err.serve.memory_cap", mib=served.memory_bytes >> 20)
    return outcome.finish(0 if outcome.result is not None else None, "")


def home_size(home: Path, most_entries: int = 100_000) -> int:
    """Bytes the files in `home` hold (links not followed; a home of more entries than `most_entries`
    counts as full)."""
    total, seen = 0, 0
    for here, folders, files in os.walk(home):
        for name in files:
            seen += 1
            try:
                total += os.lstat(os.path.join(here, name)).st_size
            except OSError:
                continue
        seen += len(folders)
        if seen > most_entries:
            return 1 << 62
    return total
