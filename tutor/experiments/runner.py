"""Running experiments: in this thread (quick ones, against cached models) or in a child process
(long ones: training), with cancellation, progress events and a result cache.

    result = run_quick("alibi", {"n_head": 6}, should_stop=event.is_set)        # worker thread
    result = await run_in_child("train-compare", {"steps": 50}, on_event=print)  # asyncio (the app)
    result = run_child_sync("train-compare", {"steps": 50}, on_event=print, cancel=event)  # CLI, tests

The child is `python -m tutor experiment NAME --set K=V ... --jsonl`, which prints one JSON object
per line: {"event": "progress", ...} while it works, then {"event": "result", "result": {...}}, or
{"event": "cancelled"} / {"event": "error", "message"}. Cancelling terminates the child (SIGTERM, it
stops after the current step) and kills it after a grace period; subprocesses, not multiprocessing,
because multiprocessing cannot spawn inside a running Textual app.
"""

from __future__ import annotations

import asyncio
import json
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tutor.experiments.base import RunContext
from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.params import Params
from tutor.experiments.registry import ExperimentSpec, canonical_params, get_spec, validate_params
from tutor.experiments.result import Result
from tutor.paths import tutor_child_env

EventSink = Callable[[dict[str, Any]], None]
GRACE_S = 5.0
# The child's last line is the whole Result: a train-compare with long curves or a large heatmap passes
# asyncio's default 64 KiB line limit (measured: alibi at T=64 is 218 KB), so allow far more.
_LINE_LIMIT = 64 * 1024 * 1024
_CACHE_SIZE = 64
_results: OrderedDict[tuple[str, str], Result] = OrderedDict()
_results_lock = threading.Lock()


def prepare(name: str, raw: Mapping[str, Any] | Params | None = None) -> tuple[ExperimentSpec, Params]:
    spec = get_spec(name)
    if isinstance(raw, Params):
        return spec, raw
    return spec, validate_params(spec, raw or {})


def cached(name: str, params: Params) -> Result | None:
    with _results_lock:
        return _results.get((name, canonical_params(params)))


def _remember(result: Result, params: Params) -> None:
    with _results_lock:
        _results[(result.experiment, canonical_params(params))] = result
        while len(_results) > _CACHE_SIZE:
            _results.popitem(last=False)


def run_here(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    on_event: EventSink | None = None,
    home: Path | None = None,
    use_cache: bool = True,
) -> Result:
    """Run any experiment in the calling thread (the child process does this for long ones)."""
    spec, params = prepare(name, raw)
    if use_cache and (hit := cached(name, params)) is not None:
        return hit
    t0 = time.perf_counter()
    result = spec.function(params, RunContext(should_stop=should_stop, on_event=on_event, home=home))
    result.duration_s = time.perf_counter() - t0
    _remember(result, params)
    return result


def run_quick(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    use_cache: bool = True,
) -> Result:
    """A quick experiment in this thread (call it from a worker thread in the UI)."""
    spec, params = prepare(name, raw)
    if spec.long:
        raise ExperimentError(f"{name!r} trains models; run it with run_in_child / run_child_sync")
    _one_thread()
    return run_here(name, params, should_stop=should_stop, use_cache=use_cache)


def _one_thread() -> None:
    # Quick experiments work on tiny tensors. On a busy 2-core machine torch's thread pool hand-offs
    # cost far more than the work (measured: a 6×6 softmax 20 ms with 2 threads, 0.05 ms with 1), so
    # this process uses one intra-op thread; training runs in child processes with their own setting.
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


# --- child processes -----------------------------------------------------------------------------


def _set_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)


def child_command(name: str, params: Params, home: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "tutor", "experiment", name, "--jsonl"]
    if home is not None:
        cmd += ["--home", str(home)]
    for key, value in params.model_dump(mode="json").items():
        if value is not None:
            cmd += ["--set", f"{key}={_set_value(value)}"]
    return cmd


class _Outcome:
    """Collects the child's events; turns the last one into a Result or an exception."""

    def __init__(self, name: str, on_event: EventSink | None):
        self.name, self.on_event = name, on_event
        self.result: Result | None = None
        self.error: str | None = None
        self.cancelled = False

    def line(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        try:
            event = json.loads(text)
        except json.JSONDecodeError:
            return  # stray output (a library warning); the protocol lines are JSON
        kind = event.get("event")
        if kind == "result":
            self.result = Result.model_validate(event["result"])
        elif kind == "error":
            self.error = event.get("message", "unknown error")
        elif kind == "cancelled":
            self.cancelled = True
        elif self.on_event is not None:
            self.on_event(event)

    def finish(self, returncode: int, stderr_tail: str) -> Result:
        if self.result is not None and returncode == 0:
            return self.result
        if self.cancelled:
            raise Cancelled()
        if self.error:
            raise ExperimentError(self.error)
        tail = stderr_tail.strip().splitlines()[-5:]
        raise ExperimentError(
            f"experiment {self.name!r} failed: the child process exited with code {returncode}"
            + ("\n" + "\n".join(tail) if tail else "")
        )


async def run_in_child(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    on_event: EventSink | None = None,
    *,
    home: Path | None = None,
    use_cache: bool = True,
    grace_s: float = GRACE_S,
    niceness: int = 0,
) -> Result:
    """Run an experiment in a child process from asyncio (e.g. a Textual async worker).

    Cancel by cancelling the task: the child is terminated (killed after `grace_s`) and reaped
    before CancelledError propagates. A failure raises ExperimentError; a child that stopped on its
    own signal raises Cancelled.
    """
    spec, params = prepare(name, raw)
    if use_cache and (hit := cached(name, params)) is not None:
        return hit
    command = child_command(name, params, home)
    if niceness > 0 and shutil.which("nice"):  # e.g. the app: training must not starve the UI
        command = ["nice", "-n", str(niceness), *command]
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=tutor_child_env(),
        limit=_LINE_LIMIT,
    )
    outcome = _Outcome(name, on_event)
    stderr_chunks: list[bytes] = []

    async def read_stderr() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(4096):
            stderr_chunks.append(chunk)
            del stderr_chunks[:-4]  # keep the tail only

    err_task = asyncio.create_task(read_stderr())
    try:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            outcome.line(line.decode("utf-8", "replace"))
        returncode = await proc.wait()
        await err_task
    except BaseException:  # CancelledError included: never leave the child behind
        await _stop_async(proc, grace_s)
        err_task.cancel()
        raise
    result = outcome.finish(returncode, b"".join(stderr_chunks).decode("utf-8", "replace"))
    _remember(result, params)
    return result


async def _stop_async(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    if proc.returncode is not None:
        return
    try:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), grace_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
    except ProcessLookupError:
        pass


def run_child_sync(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    on_event: EventSink | None = None,
    *,
    cancel: threading.Event | None = None,
    home: Path | None = None,
    use_cache: bool = True,
    grace_s: float = GRACE_S,
) -> Result:
    """The same as run_in_child, blocking; setting `cancel` stops the child and raises Cancelled."""
    spec, params = prepare(name, raw)
    if use_cache and (hit := cached(name, params)) is not None:
        return hit
    proc = subprocess.Popen(
        child_command(name, params, home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=tutor_child_env(),
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    lines: queue.Queue[str | None] = queue.Queue()
    stderr_tail: list[str] = []

    def pump_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            stderr_tail.append(line)
            del stderr_tail[:-20]

    readers = [threading.Thread(target=f, daemon=True) for f in (pump_stdout, pump_stderr)]
    for t in readers:
        t.start()
    outcome = _Outcome(name, on_event)
    try:
        while True:
            if cancel is not None and cancel.is_set():
                _stop_sync(proc, grace_s)
                raise Cancelled()
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                break
            outcome.line(line)
        returncode = proc.wait()
    except BaseException:
        _stop_sync(proc, grace_s)
        raise
    finally:
        for t in readers:
            t.join(timeout=grace_s)
    result = outcome.finish(returncode, "".join(stderr_tail))
    _remember(result, params)
    return result


def _stop_sync(proc: subprocess.Popen, grace_s: float) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def run_async(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    on_event: EventSink | None = None,
    *,
    home: Path | None = None,
    use_cache: bool = True,
) -> Result:
    """For the app: a quick experiment in a thread, a long one in a child process; cancel the task
    to stop either (the thread stops at its next check, the child is terminated)."""
    spec, params = prepare(name, raw)
    if spec.long:
        return await run_in_child(name, params, on_event, home=home, use_cache=use_cache)
    stop = threading.Event()
    try:
        return await asyncio.to_thread(run_quick, name, params, should_stop=stop.is_set, use_cache=use_cache)
    except asyncio.CancelledError:
        stop.set()
        raise
