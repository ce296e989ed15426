"""Running experiments: in this thread (quick ones, against cached models) or in a child process
(long ones: training), with cancellation, progress events and a result cache.

    result = run_quick("alibi", {"n_head": 6}, should_stop=event.is_set)        # the CLI; run_async's thread
    result = await run_async("train-compare", {"steps": 50}, on_event=print)  # asyncio (the app): either kind

The child is `python -m tutor experiment NAME --set K=V ... --jsonl`, which prints one JSON object
per line: {"event": "progress", ...} while it works, then {"event": "result", "result": {...}}, or
{"event": "cancelled"} / {"event": "error", "message", "said"} (`said`: the error's catalogue key and
values as a Msg, so the parent words it in the learner's language). The child runs through tutor.proc.child:
cancelling terminates its session (SIGTERM, it stops after the current step) and kills it after a
grace period; subprocesses, not multiprocessing, because multiprocessing cannot spawn inside a
running Textual app.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.params import Params
from tutor.experiments.registry import ExperimentSpec, canonical_params, get_spec, validate_params
from tutor.experiments.result import Msg, Result
from tutor.experiments.run_context import RunContext, StoredRun
from tutor.proc.child import AsyncChild
from tutor.settings import CHILD_GRACE_S, RESULT_CACHE_SIZE, tutor_child_env

EventSink = Callable[[dict[str, Any]], None]
# (experiment, its parameters, the home a child run read and wrote: a long experiment's result comes from
# that learner's stored runs) -> the result
_results: OrderedDict[tuple[str, str, str], Result] = OrderedDict()
_results_lock = threading.Lock()


def prepare(name: str, raw: Mapping[str, Any] | Params | None = None) -> tuple[ExperimentSpec, Params]:
    spec = get_spec(name)
    if isinstance(raw, Params):
        return spec, raw
    return spec, validate_params(spec, raw or {})


def cached(name: str, params: Params, home: Path | None = None) -> Result | None:
    with _results_lock:
        return _results.get((name, canonical_params(params), str(home or "")))


def _remember(result: Result, params: Params, home: Path | None = None) -> None:
    with _results_lock:
        _results[(result.experiment, canonical_params(params), str(home or ""))] = result
        while len(_results) > RESULT_CACHE_SIZE:
            _results.popitem(last=False)


def run_here(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    on_event: EventSink | None = None,
    stored_run: Callable[[str], StoredRun | None] | None = None,
    use_cache: bool = True,
) -> Result:
    """Run any experiment in the calling thread (the child process does this for long ones).
    `stored_run` hands the caller's finished training runs back by key; new ones arrive as "trained"
    events for the caller to keep (see training.py)."""
    spec, params = prepare(name, raw)
    if use_cache and (hit := cached(name, params)) is not None:
        return hit
    t0 = time.perf_counter()
    context = RunContext(should_stop=should_stop, on_event=on_event, stored_run=stored_run)
    result = spec.function(params, context)
    result.duration_s = time.perf_counter() - t0
    _remember(result, params)
    return result


def run_quick(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    on_event: EventSink | None = None,
    use_cache: bool = True,
) -> Result:
    """A quick experiment in this thread: the CLI calls it directly, run_async (the app) in a thread.
    `on_event` gets what it streams (the poem of `write`, as it is written)."""
    spec, params = prepare(name, raw)
    if spec.long:
        raise ExperimentError(f"{name!r} trains models; run it with run_in_child")
    _one_thread()
    return run_here(name, params, should_stop=should_stop, on_event=on_event, use_cache=use_cache)


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


class ChildOutcome:
    """Collects a child's events; turns the last one into a Result or an exception (also for a run the
    served class's warm process forks: tutor.serve.session)."""

    def __init__(self, name: str, on_event: EventSink | None):
        self.name, self.on_event = name, on_event
        self.result: Result | None = None
        self.error: ExperimentError | None = None
        self.cancelled = False

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "result":
            self.result = Result.model_validate(event["result"])
        elif kind == "error":
            said = event.get("said")
            if said is not None:
                said = Msg.model_validate(said)
                self.error = ExperimentError(said.key, **said.args)
            else:  # not one of ours: Python's own words, as they are
                self.error = ExperimentError(str(event.get("message", "?")))
        elif kind == "cancelled":
            self.cancelled = True
        elif kind != "stray" and self.on_event is not None:
            self.on_event(event)

    def finish(self, returncode: int | None, stderr_tail: str) -> Result:
        if self.result is not None and returncode == 0:
            return self.result
        if self.cancelled:
            raise Cancelled()
        if self.error:
            raise self.error
        tail = stderr_tail.strip().splitlines()[-5:]
        raise ExperimentError(
            "err.experiment.child_exit",
            name=self.name,
            code=str(returncode),
            tail="".join("\n" + line for line in tail),
        )


async def run_in_child(
    name: str,
    raw: Mapping[str, Any] | Params | None = None,
    on_event: EventSink | None = None,
    *,
    home: Path | None = None,
    use_cache: bool = True,
    grace_s: float = CHILD_GRACE_S,
    niceness: int = 0,
) -> Result:
    """Run an experiment in a child process from asyncio (e.g. a Textual async worker).

    Cancel by cancelling the task: the child is terminated (killed after `grace_s`) and reaped
    before CancelledError propagates. A failure raises ExperimentError; a child that stopped on its
    own signal raises Cancelled.
    """
    spec, params = prepare(name, raw)
    if use_cache and (hit := cached(name, params, home)) is not None:
        return hit
    command = child_command(name, params, home)
    # niced (e.g. the app: training must not starve the UI), its session too (tutor.proc.spawn says why)
    child = await AsyncChild.start(command, env=tutor_child_env(), niceness=niceness)
    outcome = ChildOutcome(name, on_event)
    try:
        async for event in child.events():
            outcome.event(event)
    except BaseException:  # CancelledError included: never leave the child behind
        await child.stop(grace_s)
        raise
    await child.stop()
    result = outcome.finish(child.returncode, child.stderr_tail())
    _remember(result, params, home)
    return result


async def run_async(
    name: str, raw: Mapping[str, Any] | Params | None = None, on_event: EventSink | None = None, **child: Any
) -> Result:
    """For asyncio callers (the app's experiment panels): a quick experiment in a thread, a long one
    in a child process; cancel the task to stop either (the thread stops at its next check, the child is
    terminated). `child` holds run_in_child's keyword options (home, use_cache, grace_s, niceness); a quick
    experiment uses only use_cache."""
    spec, params = prepare(name, raw)
    if spec.long:
        return await run_in_child(name, params, on_event, **child)
    use_cache = child.get("use_cache", True)
    stop = threading.Event()
    loop = asyncio.get_running_loop()

    def stream(event: dict[str, Any]) -> None:  # from the thread to the caller's event loop
        assert on_event is not None  # stream is passed on only with a sink
        loop.call_soon_threadsafe(on_event, event)

    try:
        return await asyncio.to_thread(
            run_quick,
            name,
            params,
            should_stop=stop.is_set,
            on_event=stream if on_event else None,
            use_cache=use_cache,
        )
    except asyncio.CancelledError:
        stop.set()
        raise
