"""Every core busy: the runs of a training job in worker processes side by side.

The runs of a job are independent: each seeds itself, builds its model and draws its own windows, so they
can train at the same time. `Pool` starts `workers` processes (`python -m tutor.experiments.worker THREADS`),
each with `threads` torch threads, so that workers × threads is the machine's core count; it hands every
free worker the next task in job order and collects the tasks' events and results. A run trains in one
process from start to end on `threads` threads, as it would alone: its numbers are the same bit for bit
however many run beside it (tests/test_pool.py), so a stored run's key says nothing about how it was
scheduled.

Why processes and not one batched step for several same-shaped models (`torch.func.stack_module_state` +
`vmap`): on this CPU torch has no vmap rule for its fused attention (it loops over the models), so a batched
step was slower than the runs one after another when this was built (a measurement no benchmark here repeats);
it also rounds differently from a run trained alone, which would tie a run's numbers to the company it
trained in. benchmarks/bench_head_count.py times the pool against the runs one after another.

A short job, or one on a single core, runs its tasks in its own process (`InlinePool`): no process to start,
the same events.

    with Pool(pool_size(len(tasks), threads), threads, ctx.should_stop) as pool:   # or InlinePool(threads, ...)
        results = pool.map([("train", args), ...], on_event)   # on_event(task index, event dict)

Workers end with the pool (and with this process, whatever ends it); a cancel kills them at once (a run
that is cancelled saves nothing). They train at this process's priority, whatever their session (see
tutor.proc.spawn.lower_priority): the app starts a job niced, so the screen the learner uses comes first.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.proc.spawn import PIPE, spawn

# the worker's tasks: name -> "module:function", each (args, emit, should_stop) -> a JSON-able result;
# `emit(event)` reports what the task does, `should_stop()` (or None) is polled between its steps
TASKS = {
    "time": "tutor.experiments.course.training:time_task",
    "train": "tutor.experiments.course.training:train_task",
    "finetune-time": "tutor.experiments.course.finetune:time_task",
    "finetune": "tutor.experiments.course.finetune:finetune_task",
}

EventSink = Callable[[int, dict[str, Any]], None]

# a job that would take less than this one run after another trains in its own process: starting workers
# (torch, the corpus, timing) costs seconds that so short a job does not win back
POOL_WORTH_S = 20.0


def cores() -> int:
    """The cores this process may run on (its affinity, which a container or `taskset` may narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS
        return max(1, os.cpu_count() or 1)


def pool_size(tasks: int, threads: int) -> int:
    """Workers for `tasks` runs of `threads` threads each: one per `threads` cores, no more than the runs."""
    return max(1, min(tasks, cores() // max(1, threads)))


def task_function(name: str) -> Callable[[dict, Callable[[dict], None], Callable[[], bool] | None], Any]:
    import importlib

    module, attr = TASKS[name].split(":")
    return getattr(importlib.import_module(module), attr)


class InlinePool:
    """The tasks one after another in this process, with the events a Pool gives."""

    workers = 1

    def __init__(self, threads: int | None, should_stop: Callable[[], bool] | None = None) -> None:
        self.threads, self.should_stop = threads, should_stop

    def __enter__(self) -> InlinePool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, tasks: list[tuple[str, dict[str, Any]]], on_event: EventSink | None = None) -> list[Any]:
        if self.threads:
            import torch

            torch.set_num_threads(self.threads)
        results = []
        for index, (name, args) in enumerate(tasks):
            if self.should_stop is not None and self.should_stop():
                raise Cancelled()

            def emit(event: dict[str, Any], index: int = index) -> None:
                if on_event is not None:
                    on_event(index, event)

            results.append(task_function(name)(args, emit, self.should_stop))
            emit({"event": "done", "result": results[-1]})
        return results


class _Worker:
    def __init__(self, threads: int) -> None:
        from tutor.settings import tutor_child_env

        env = tutor_child_env()
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        self.stderr = tempfile.TemporaryFile()
        argv = [sys.executable, "-m", "tutor.experiments.worker", str(threads)]
        niceness = os.getpriority(os.PRIO_PROCESS, 0)  # its session: as niced as this one
        self.proc = spawn(argv, stdin=PIPE, stdout=PIPE, stderr=self.stderr, env=env, niceness=niceness)
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both PIPE
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.buffer = b""
        self.task: int | None = None  # the index of the task it works on, in the current map
        self.ident = 0  # that task's id

    def send(self, task: dict[str, Any]) -> None:
        assert self.proc.stdin is not None  # stdin=PIPE
        self.proc.stdin.write((json.dumps(task, ensure_ascii=False) + "\n").encode())
        self.proc.stdin.flush()

    def lines(self) -> list[bytes] | None:
        """The complete lines that have arrived; None once the worker's output has ended."""
        assert self.proc.stdout is not None  # stdout=PIPE
        chunk = self.proc.stdout.read()
        if chunk == b"":
            return None
        self.buffer += chunk or b""
        *done, self.buffer = self.buffer.split(b"\n")
        return done

    def tail(self) -> str:
        from tutor.proc.child import read_tail

        return read_tail(self.stderr)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both PIPE
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            try:
                stream.close()
            except OSError:  # a pipe to a killed worker may refuse its last flush
                pass


class Pool:
    """`workers` worker processes of `threads` torch threads each; see the module's docstring."""

    def __init__(
        self, name: str, workers: int, threads: int, should_stop: Callable[[], bool] | None = None
    ) -> None:
        self.name, self.workers, self.threads, self.should_stop = name, workers, threads, should_stop
        self._procs: list[_Worker] = []
        self._sent = 0

    def __enter__(self) -> Pool:
        self._procs = [_Worker(self.threads) for _ in range(self.workers)]
        return self

    def __exit__(self, *exc: object) -> None:
        for worker in self._procs:
            worker.kill()
        self._procs = []

    def map(self, tasks: list[tuple[str, dict[str, Any]]], on_event: EventSink | None = None) -> list[Any]:
        """Run `tasks` ((name, args) each) over the workers, the next one to whichever is free; their results
        in task order. `on_event(index, event)` gets every event a task emits, then {"event": "done", "result"}
        as it ends, in this thread."""
        results: list[Any] = [None] * len(tasks)
        pending = list(range(len(tasks)))[::-1]
        running = 0
        with selectors.DefaultSelector() as sel:
            for worker in self._procs:
                assert worker.proc.stdout is not None  # stdout=PIPE
                sel.register(worker.proc.stdout, selectors.EVENT_READ, worker)
            idle = list(self._procs)
            while pending or running:
                while pending and idle:
                    worker, index = idle.pop(0), pending.pop()
                    name, args = tasks[index]
                    # ids are unique over the pool's life: a task that failed may still talk
                    worker.task, self._sent = index, self._sent + 1
                    worker.ident = self._sent
                    worker.send({"id": worker.ident, "task": name, "args": args})
                    running += 1
                if self.should_stop is not None and self.should_stop():
                    raise Cancelled()
                for key, _ in sel.select(0.1):
                    worker = key.data
                    lines = worker.lines()
                    if lines is None:
                        raise ExperimentError(
                            "err.experiment.child_exit",
                            name=self.name,
                            code=str(worker.proc.wait()),
                            tail=_last_lines(worker.tail()),
                        )
                    for line in lines:
                        event = _parse(line)
                        if event is None or event.get("id") != worker.ident:
                            continue
                        kind = event.get("event")
                        if kind == "done":
                            results[worker.task] = event.get("result")
                            if on_event is not None:
                                on_event(worker.task, event)
                            worker.task, running = None, running - 1
                            idle.append(worker)
                        elif kind == "failed":
                            said = event.get("said")
                            if isinstance(said, dict):
                                raise ExperimentError(str(said.get("key")), **dict(said.get("args") or {}))
                            raise ExperimentError(str(event.get("message", "?")))
                        elif on_event is not None:
                            on_event(worker.task, event)
        return results


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(line.decode("utf-8", "replace"))
    except ValueError:  # a library's stray output
        return None
    return event if isinstance(event, dict) else None


def _last_lines(text: str) -> str:
    return "".join("\n" + line for line in text.strip().splitlines()[-5:])
