"""head-count's six runs end to end, on every core against one after another on one thread, in one run.

The exercise's real job through the app's own path: `python -m tutor experiment train-compare --set
vary=heads --set "heads=[1, 4, 8]" --set steps=1000 --set seeds=2 --jsonl` (the app's child-process
protocol), each variant with a fresh TUTOR_HOME so nothing is read back from a store. "parallel" is the job
as a learner gets it (worker processes, one per core, one torch thread each); "serial" is the same command
with its affinity narrowed to one core (`taskset -c 0`): the tutor sees one core and trains the six runs one
after another in its own process on one thread, as it did before the pool. Per variant: the whole command's
seconds (start-up, timing and training), the length it announced (its "estimate" event) against the
seconds from that announcement to its result, and every run's final validation loss, which must be the same
bit for bit in both variants (a run's numbers do not depend on how it was scheduled).

    python benchmarks/bench_head_count.py                  # 1000 steps: the exercise's job (both variants about 10 min here)
    python benchmarks/bench_head_count.py --steps 200      # a shorter job, both variants alike
    python benchmarks/bench_head_count.py --order serial,parallel
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


def job(steps: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tutor",
        "experiment",
        "train-compare",
        "--set",
        "vary=heads",
        "--set",
        "heads=[1, 4, 8]",
        "--set",
        f"steps={steps}",
        "--set",
        "seeds=2",
        "--jsonl",
    ]


def _children_cpu() -> float:
    """CPU seconds of the children (and theirs: the job's workers) that have ended and been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_variant(variant: str, steps: int) -> dict:
    """One variant of the job in a fresh home: its wall seconds, announcement and runs' final losses."""
    cmd = job(steps) if variant == "parallel" else ["taskset", "-c", "0", *job(steps)]
    from tutor.proc.child import parse_line

    load, cpu = os.getloadavg()[0], _children_cpu()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "TUTOR_HOME": home}
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        announced_at = announced = workers = None
        result = None
        for line in proc.stdout:
            event = parse_line(line) or {}  # a blank or stray line: no event
            kind = event.get("event")
            if kind == "estimate":
                announced_at, announced = time.perf_counter(), float(event["seconds"])
                workers = event.get("workers")
            elif kind == "result":
                result = event["result"]
            elif kind == "error":
                raise SystemExit(f"{variant}: {event.get('message')}")
        end = time.perf_counter()
        if proc.wait() != 0 or result is None or announced_at is None:
            raise SystemExit(f"{variant}: the job ended with code {proc.returncode} and no result")
    # each run's final validation loss, by head count and seed (val_loss_h4_s1338)
    losses = {k: v for k, v in result["metrics"].items() if k.startswith("val_loss_h") and "_s" in k}
    # each run's own seconds (tutor.model.train's clock: its steps and validations), by head count and seed
    runs_s = {
        k[len("seconds_") :]: v
        for k, v in result["metrics"].items()
        if k.startswith("seconds_h") and "_s" in k[len("seconds_h") :]
    }
    return {
        "variant": variant,
        "runs_s": runs_s,
        "wall_s": end - t0,
        "announced_s": announced,
        "after_announce_s": end - announced_at,
        "workers": workers,
        "losses": losses,
        "load_before": load,
        "load_after": os.getloadavg()[0],
        "cpu_s": _children_cpu() - cpu,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000, help="steps per run (the exercise asks for 1000)")
    ap.add_argument("--order", default="parallel,serial", help="the variants, in the order they run")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from tutor.experiments.pool import cores

    print(f"head-count's job: 6 runs (1, 4, 8 heads × 2 seeds) of {args.steps} steps; {cores()} cores here")
    print(
        f"{'variant':<10}{'workers':>8}{'wall s':>9}{'announced s':>13}{'real s':>9}{'real/ann.':>10}{'load':>12}"
    )
    out = {}
    for variant in args.order.split(","):  # each row as soon as its variant has run
        out[variant] = r = run_variant(variant, args.steps)
        print(
            f"{variant:<10}{r['workers']:>8}{r['wall_s']:>9.1f}{r['announced_s']:>13.1f}"
            f"{r['after_announce_s']:>9.1f}{r['after_announce_s'] / r['announced_s']:>9.2f}x{r['cpu_s']:>8.1f}"
            f"{r['load_before']:>6.1f}-{r['load_after']:<5.1f}",
            flush=True,
        )
    for variant, r in out.items():
        print(
            f"{variant}: each run's own seconds (its steps and validations): "
            + ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["runs_s"].items()))
        )
    if {"parallel", "serial"} <= out.keys():
        par, ser = out["parallel"], out["serial"]
        same = par["losses"] == ser["losses"] and len(par["losses"]) == 6
        print(
            f"parallel / serial: {par['wall_s'] / ser['wall_s']:.2f}x on {cores()} cores "
            f"(the bound with every core free: {1 / cores():.2f}x)"
        )
        print(f"final validation losses the same bit for bit in both variants: {same}")
        for key in [] if same else sorted(set(par["losses"]) | set(ser["losses"])):
            print(f"  {key}: parallel {par['losses'].get(key)!r}, serial {ser['losses'].get(key)!r}")
    print("real: from the announcement (the job's 'estimate' event) to its result; wall: the whole command;")
    print(
        "CPU s: the CPU seconds of the command and its workers (on a busy machine, what the job itself cost)"
    )


if __name__ == "__main__":
    main()
