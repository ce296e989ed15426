"""Announced against real durations of every training job, through the paths the app and the CLI use.

Each job says how long it will take once it has measured itself here (its first "estimate" or "measuring"
event that is not train-compare's first word from the job's size, "rough": bench_announce.py times that); this benchmark takes the seconds from that announcement to the job's end and prints the two side by
side (goal: within ±25%). The jobs:

- train-compare, quick: `python -m tutor experiment train-compare --set steps=200 --set seeds=1 --jsonl`
  (1, 4 and 8 heads, one seed each);
- head-count: the exercise's six runs, `--set steps=1000 --set seeds=2` (skip with --no-head-count; the same
  job is in bench_head_count.py);
- context-finetune at its defaults (four methods, 100 steps each);
- context-scaling at a scale the checkpoint does not store (3) on 256 windows, through `run_quick` with an
  event sink as the app calls it (its first "measuring" event says the length);
- rope's `t`: the rope exercise's reference solution trained in the grading box beside the course GPT with the
  learned table (`train_own_model`, what `python -m tutor exercise train rope` and the lab's t call).

Every CLI job runs with a fresh TUTOR_HOME, so nothing is read back from a store.

    python benchmarks/bench_eta.py [--no-head-count] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = [sys.executable, "-m", "tutor", "experiment"]

HEAD_COUNT = ["--set", "vary=heads", "--set", "heads=[1, 4, 8]", "--set", "steps=1000", "--set", "seeds=2"]
# context-scaling is a quick experiment: the app runs it in a thread with an event sink (run_quick), and the
# CLI's --jsonl passes no quick experiment's events on, so it is called here as the app calls it
SCALING = (
    "import json; from tutor.experiments.runner import run_quick; run_quick('context-scaling', "
    "{'scale': 3, 'windows': 256}, on_event=lambda e: print(json.dumps(e), flush=True))"
)
JOBS = {
    "train-compare quick": [
        *EXPERIMENT,
        "train-compare",
        "--set",
        "steps=200",
        "--set",
        "seeds=1",
        "--jsonl",
    ],
    "head-count": [*EXPERIMENT, "train-compare", *HEAD_COUNT, "--jsonl"],
    "context-finetune": [*EXPERIMENT, "context-finetune", "--jsonl"],
    "context-scaling s=3": [sys.executable, "-c", SCALING],
}


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children (and theirs) that have ended and been waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cli_job(cmd: list[str]) -> tuple[float, float, float]:
    """(announced seconds, seconds from the announcement to the result, the command's whole seconds)."""
    from tutor.proc.child import parse_line

    with tempfile.TemporaryDirectory() as home:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env={**os.environ, "TUTOR_HOME": home},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        announced = at = None
        for line in proc.stdout:
            event = parse_line(line) or {}  # a blank or stray line: no event
            kind = event.get("event")
            if (
                kind in ("estimate", "measuring") and at is None and not event.get("rough")
            ):  # timed, not sized
                at, announced = time.perf_counter(), float(event["seconds"])
            elif kind == "error":
                raise SystemExit(f"{' '.join(cmd[2:])}: {event.get('message')}")
        end = time.perf_counter()
        if proc.wait() != 0 or at is None:
            raise SystemExit(f"{' '.join(cmd[2:])}: ended with code {proc.returncode}, announced nothing")
    return announced, end - at, end - t0


def rope_t() -> tuple[float, float, float]:
    """rope's `t` with the reference solution: its "estimate" against its "trained" seconds (both from the
    run's start in the judge), and the whole call's seconds."""
    from tutor.course import open_course
    from tutor.grading.submissions import train_own_model
    from tutor.settings import shipped_lessons_dir

    ex = open_course(shipped_lessons_dir()).exercise("rope")
    solution = next(shipped_lessons_dir().glob("*/exercises/rope/solution.py"))
    events: list[dict] = []
    t0 = time.perf_counter()
    run = train_own_model(ex, solution, on_event=events.append)
    whole = time.perf_counter() - t0
    if run.stop is not None:
        raise SystemExit(f"rope t: {run.stop}")
    estimate = next(e for e in events if e.get("event") == "estimate")
    trained = next(e for e in events if e.get("event") == "trained")
    return float(estimate["seconds"]), float(trained["seconds"]), whole


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-head-count", action="store_true", help="leave out head-count's 6 × 1000 steps")
    ap.add_argument("--only", default="", help="comma-separated job names (default: all)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    names = [*JOBS, "rope t"]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    if args.no_head_count and "head-count" in names:
        names.remove("head-count")
    print(
        f"{'job':<22}{'announced s':>12}{'real s':>9}{'real/ann.':>11}{'whole s':>9}{'CPU s':>8}{'load':>12}"
    )
    for name in names:  # each row as soon as its job has run
        load, cpu = os.getloadavg()[0], cpu_seconds()
        announced, real, whole = rope_t() if name == "rope t" else cli_job(JOBS[name])
        verdict = "ok" if abs(real / announced - 1) <= 0.25 else "MISS"
        print(
            f"{name:<22}{announced:>12.1f}{real:>9.1f}{real / announced:>10.2f}x{whole:>9.1f}"
            f"{cpu_seconds() - cpu:>8.1f}{load:>6.1f}-{os.getloadavg()[0]:<5.1f}{verdict}",
            flush=True,
        )
    print("real: from the announcement to the job's end; whole: the command from its start (goal ±25%);")
    print("CPU s: the CPU seconds of the job's processes (this one's and every child's that has ended)")


if __name__ == "__main__":
    main()
