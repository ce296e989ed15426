"""How long a job of training runs takes, and what it tells its caller while it runs.

A job is a list of runs, each planned before the job starts (RunPlan: timed here for a few steps), trained on
`workers` worker processes side by side (pool.py), each free worker taking the next run in job order. The
JobClock turns the plan and what the runs report into the whole job's time left; Progress turns each run's
report into the job's "progress" events. Plain Python: no torch.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tutor.experiments.run_context import RunContext
from tutor.settings import TRAINING_PROGRESS_EVERY_S


@dataclass(frozen=True)
class RunPlan:
    """One run of a job as planned: its steps (0 for a run read back from the store), a step's seconds,
    every `eval_every` steps and at the last a validation's seconds (tutor.model.train validates so), the seconds
    from its start to its first step (`setup_s`: model, optimizer, data; context-finetune's scoring before it
    trains) and after its last step (`end_s`: context-finetune's scoring after it trained)."""

    steps: int
    step_s: float
    eval_every: int = 0
    eval_s: float = 0.0
    setup_s: float = 0.0
    end_s: float = 0.0

    def seconds(self, upto: int) -> float:
        """The planned seconds of its first `upto` steps, validations included."""
        evals = 0
        if self.eval_every:
            evals = upto // self.eval_every + (upto == self.steps and self.steps % self.eval_every != 0)
        return upto * self.step_s + evals * self.eval_s


class JobClock:
    """The time left of a whole job of training runs on `workers` workers, from its plan (per run a RunPlan,
    timed before the job starts, or equal relative weights when `timed` is False) and the runs' reports.

    The time left is the plan's work still to do, laid out over the workers as the pool hands it out (each
    run still to start to the worker that is free first): its steps at the pace measured over the whole job
    so far (the runs' own clocks against the plan), its set-up at the mean measured so far (the planned one
    before any is measured) and its end as planned. Cumulative figures, so the ETA settles instead of
    swinging with each step or jumping when a slower setting begins. While few steps are done, the timed plan
    counts as PRIOR_STEPS steps already run at its own pace."""

    PRIOR_STEPS = 20

    def __init__(self, plan: list[RunPlan], timed: bool = True, workers: int = 1) -> None:
        self.plan, self.timed, self.workers = plan, timed, max(1, workers)
        self.done_s = 0.0  # seconds the finished runs trained
        self.done_plan = 0.0  # their planned seconds
        self.setups: list[float] = []  # seconds from each run's start to its first step
        # run -> (step, seconds trained, phase, seconds in that phase) as last reported
        self.running: dict[int, tuple[int, float, str, float]] = {}
        self.finished: set[int] = set()

    @property
    def planned_s(self) -> float:
        """The whole job's expected seconds, set-ups included, before any run has started."""
        return self._layout([], [r for r in self.plan if r.steps], 1.0, None)

    def setup(self, seconds: float) -> None:
        self.setups.append(max(seconds, 0.0))

    def finish(self, index: int, seconds: float) -> None:
        """Run `index` has ended, having trained `seconds` (its steps and validations)."""
        if index in self.finished:
            return
        run = self.plan[index]
        self.running.pop(index, None)
        self.finished.add(index)
        self.done_s += seconds
        self.done_plan += run.seconds(run.steps)

    def eta(
        self, index: int, step: int, elapsed_s: float, phase: str = "train", phase_s: float = 0.0
    ) -> float:
        """Seconds left of the job now that run `index` (from 0) is at `step`, having trained `elapsed_s`; in
        `phase` "setup" (before its first step) or "end" (after its last) for `phase_s` seconds so far. Once
        `finish` has counted a run, what the other runs still take."""
        if index not in self.finished:
            self.running[index] = (step, elapsed_s, phase, phase_s)
        actual, planned = self.done_s, self.done_plan
        for i, (at, seconds, _, _) in self.running.items():
            actual, planned = actual + seconds, planned + self.plan[i].seconds(at)
        prior = self.PRIOR_STEPS * self.plan[index].step_s if self.timed else 0.0
        pace = (actual + prior) / (planned + prior) if planned + prior > 0 else 0.0
        setup = sum(self.setups) / len(self.setups) if self.setups else None
        left = []
        for i, (at, _, phase_now, in_phase) in self.running.items():
            run = self.plan[i]
            steps_left = (run.seconds(run.steps) - run.seconds(at)) * pace
            if phase_now == "setup":
                steps_left += max(0.0, (run.setup_s if setup is None else setup) - in_phase)
            left.append(steps_left + (max(0.0, run.end_s - in_phase) if phase_now == "end" else run.end_s))
        waiting = [
            r for i, r in enumerate(self.plan) if r.steps and i not in self.running and i not in self.finished
        ]
        return self._layout(left, waiting, pace, setup)

    def _layout(self, left: list[float], waiting: list[RunPlan], pace: float, setup: float | None) -> float:
        """When the last worker ends: the running runs' seconds `left`, then each waiting run on the worker
        that is free first, its steps at `pace`, with its set-up (`setup`, else its planned one) and its end."""
        loads = list(left) + [0.0] * max(0, self.workers - len(left))
        heapq.heapify(loads)
        for run in waiting:
            start = heapq.heappop(loads)
            setup_s = run.setup_s if setup is None else setup
            heapq.heappush(loads, start + run.seconds(run.steps) * pace + setup_s + run.end_s)
        return max(loads, default=0.0)


class Progress:
    """The "progress" events of a job of training runs, one for each report a run sends (its task sends one
    every TRAINING_PROGRESS_EVERY_S seconds at most, plus each validation and the last step). Each event
    names its run and step and carries the whole job's ETA (JobClock), as `done` and `total` the steps
    trained of all the job's runs (several run at once: `done` never goes back, where one run's step does
    between two runs' reports) and as `finished` its runs ended (those read back from the store included)."""

    def __init__(self, ctx: RunContext, runs: int, steps: int, clock: JobClock | None = None) -> None:
        self.ctx, self.runs, self.steps = ctx, runs, steps
        self.clock = clock or JobClock([RunPlan(steps, 1.0)] * runs, timed=False)
        self.at: dict[int, int] = {}
        self.total = sum(r.steps for r in self.clock.plan)

    def update(self, index: int, label: Mapping[str, Any] | str, report: Mapping[str, Any]) -> None:
        """Run `index` (from 0), shown as `label`, reports `report`: step, steps, loss, val_loss, tokens_per_s,
        elapsed_s (its seconds of training), in its first report from a step setup_s (from its start to its
        first step); while it is not training, phase ("setup" or "end") and phase_s (its seconds in it so far);
        finished (default: at its last step) once it has ended."""
        step, steps, elapsed = int(report["step"]), int(report["steps"]), float(report["elapsed_s"])
        phase, phase_s = str(report.get("phase", "train")), float(report.get("phase_s", 0.0))
        if "setup_s" in report:
            self.clock.setup(float(report["setup_s"]))
        if report.get("finished", step >= steps and phase == "train"):
            self.clock.finish(index, elapsed)
        self.at[index] = step
        self.ctx.emit(
            {
                "event": "progress",
                "run": index + 1,
                "runs": self.runs,
                "label": label,
                "step": step,
                "steps": steps,
                "loss": report.get("loss"),
                "val_loss": report.get("val_loss"),
                "tokens_per_s": report.get("tokens_per_s"),
                "eta_s": self.clock.eta(index, step, elapsed, phase, phase_s),
                "done": sum(self.at.values()),
                "total": self.total,
                "finished": len(self.clock.finished) + sum(1 for r in self.clock.plan if not r.steps),
            }
        )


def reporter(
    emit: Callable[[dict[str, Any]], None], started: float, ends: bool = True
) -> Callable[[Any], None]:
    """The `on_progress` of a run's task (tutor.model.train's Progress): a "report" event (Progress.update reads
    it) at the first step, with the seconds since `started` (time.perf_counter()) before it as setup_s, then
    at most every TRAINING_PROGRESS_EVERY_S seconds, at each validation and at the last step (not yet the
    run's end unless `ends`)."""
    last = 0.0
    first = True

    def on_progress(pr) -> None:
        nonlocal last, first
        now = time.perf_counter()
        if (
            not first
            and pr.val_loss is None
            and pr.step < pr.steps
            and now - last < TRAINING_PROGRESS_EVERY_S
        ):
            return
        last = now
        report = {
            "event": "report",
            "step": pr.step,
            "steps": pr.steps,
            "loss": pr.loss,
            "val_loss": pr.val_loss,
            "tokens_per_s": pr.tokens_per_s,
            "elapsed_s": pr.elapsed_s,
        }
        if first:
            report["setup_s"] = max(0.0, now - started - pr.elapsed_s)
            first = False
        if not ends:
            report["finished"] = False
        emit(report)

    return on_progress


def phase_reporter(
    emit: Callable[[dict[str, Any]], None], phase: str, step: int, steps: int, elapsed_s: float = 0.0
) -> Callable[[], None]:
    """A call per unit of work while a run is in `phase` ("setup" or "end", at `step` of `steps`, having
    trained `elapsed_s`): a "report" at most every TRAINING_PROGRESS_EVERY_S seconds, with its seconds in
    the phase."""
    started = last = time.perf_counter()

    def tick() -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last < TRAINING_PROGRESS_EVERY_S:
            return
        last = now
        emit(
            {
                "event": "report",
                "step": step,
                "steps": steps,
                "loss": None,
                "val_loss": None,
                "tokens_per_s": None,
                "elapsed_s": elapsed_s,
                "phase": phase,
                "phase_s": now - started,
                "finished": False,
            }
        )

    return tick


def measuring_line(event: Mapping[str, Any], lang: str) -> str:
    """A "measuring" event (extension.MeasureClock) in the learner's words: what is measured, the batches done,
    the time left and, at the start of a long measurement, how many windows would be quicker."""
    from tutor.experiments.result import about, words
    from tutor.texts import say

    offer = words(event.get("offer"), lang) if event.get("offer") else ""
    return say(
        "run.measuring",
        lang,
        what=words(event.get("what"), lang),
        done=int(event.get("done", 0)),
        total=int(event.get("total", 0)),
        time=about(float(event.get("eta_s") or 0)),
        offer=offer,
    )
