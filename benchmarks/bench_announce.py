"""How soon a training job says its length, and how near the truth each of its words is (issue 42).

train-compare says its length twice before its first step: at once from the job's size (its "estimate"
event with "rough": true, training.rough_estimate; the app's panel says the same as `r` is pressed, see
tests/test_ui_screen_first.py), then as its workers timed it. For each job this prints the seconds from
the command's start to each word and to the first step, the seconds each word announced, and, for a job
run to its end, the real seconds from each word to the result (goal ±25% for the timed word).

- quick: `python -m tutor experiment train-compare --set steps=200 --set seeds=1 --jsonl` (1, 4, 8 heads),
  run to its end;
- tiny: the app test's job (1 block of width 8, windows of 8, 20,000 steps, two seeds), stopped at its
  first step.

Every job runs with a fresh TUTOR_HOME, so nothing is read back from a store.

    python benchmarks/bench_announce.py [--only quick|tiny]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = [sys.executable, "-m", "tutor", "experiment", "train-compare", "--jsonl"]
TINY = {"steps": 20000, "batch": 1, "n_layer": 1, "n_embd": 8, "context": 8, "heads": "[1]"}
JOBS = {
    "quick": ([*EXPERIMENT, "--set", "steps=200", "--set", "seeds=1"], True),
    "tiny": ([*EXPERIMENT, *(a for k, v in TINY.items() for a in ("--set", f"{k}={v}"))], False),
}


def job(cmd: list[str], to_end: bool) -> dict[str, float]:
    """Seconds from the start to the rough word, the timed word and the first step; the seconds each word
    said; with `to_end`, the seconds from the start to the result."""
    from tutor.proc.child import parse_line

    seen: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env={**os.environ, "TUTOR_HOME": home},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None  # stdout=PIPE
        for line in proc.stdout:
            event = parse_line(line) or {}  # a blank or stray line: no event
            kind, now = event.get("event"), time.perf_counter() - t0
            if kind == "estimate":
                word = "rough" if event.get("rough") else "timed"
                seen[f"{word}_at"], seen[word] = now, float(event["seconds"])
            elif kind == "progress" and "step_at" not in seen:
                seen["step_at"] = now
                if not to_end:
                    break
            elif kind == "result":
                seen["end_at"] = now
            elif kind == "error":
                raise SystemExit(f"{' '.join(cmd[2:])}: {event.get('message')}")
        proc.kill()
        proc.wait()
    return seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="a job's name: quick or tiny (default: both)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    names = [n for n in JOBS if not args.only or n == args.only]
    print(
        f"{'job':<7}{'rough at':>9}{'timed at':>9}{'step at':>8}{'rough s':>9}{'timed s':>9}{'real s':>8}"
        f"{'real/rough':>11}{'real/timed':>11}{'load':>11}"
    )
    for name in names:
        load = os.getloadavg()[0]
        s = job(*JOBS[name])
        if "end_at" in s:  # real: from each word to the result
            real = f"{s['end_at'] - s['rough_at']:>8.1f}"
            ratios = f"{(s['end_at'] - s['rough_at']) / s['rough']:>10.2f}x{(s['end_at'] - s['timed_at']) / s['timed']:>10.2f}x"
        else:
            real, ratios = f"{'':>8}", f"{'':>22}"
        print(
            f"{name:<7}{s['rough_at']:>9.2f}{s['timed_at']:>9.2f}{s['step_at']:>8.2f}{s['rough']:>9.1f}"
            f"{s['timed']:>9.1f}{real}{ratios}{load:>5.1f}-{os.getloadavg()[0]:<5.1f}",
            flush=True,
        )
    print("at: seconds from the command's start; rough: the job's size, timed: its workers' timing;")
    print("real: from the rough word to the result (real/timed: from the timed word)")


if __name__ == "__main__":
    main()
