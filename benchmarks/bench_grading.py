"""Grading speed, end to end through the CLI: `python -m tutor grade ID solution.py --json`, per exercise.

    python benchmarks/bench_grading.py [--repeat 5]

Each run is what a learner waits for: the tutor starts, reads the file, starts the judge, which starts
the sandboxed worker (both import torch, side by side), and the checks probe the learner's code.
Prints the median, min and max wall time of grading each exercise's reference solution, the goal
from issue 10 (rope ≤ 4 s, the other code exercises ≤ 2 s), and the isolation level in force here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_S = {"rope": 4.0}
DEFAULT_GOAL_S = 2.0


def grade_once(ex_id: str, path: Path, home: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "tutor", "grade", ex_id, str(path), "--json", "--home", home],
        capture_output=True,
        text=True,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0, json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from tutor.content.loader import load_course
    from tutor.grading.service import solution_file

    course = load_course(ROOT / "lessons")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'exercise':<16} {'median s':>8} {'min s':>7} {'max s':>7} {'goal':>6}  verdict")
    isolation = None
    with tempfile.TemporaryDirectory() as home:
        for ex in course.exercises():
            if ex.kind != "code":
                continue
            times, statuses = [], set()
            for _ in range(args.repeat):
                seconds, grade = grade_once(ex.id, solution_file(ex), home)
                times.append(seconds)
                statuses.add(grade["status"])
                isolation = grade["isolation"]
            goal = GOAL_S.get(ex.id, DEFAULT_GOAL_S)
            median = statistics.median(times)
            verdict = "ok" if median <= goal else "over"
            print(f"{ex.id:<16} {median:>8.2f} {min(times):>7.2f} {max(times):>7.2f} {goal:>6.1f}  "
                  f"{verdict} ({'/'.join(sorted(statuses))})")  # fmt: skip
    if isolation:
        print(f"isolation: {isolation['level']}")
        for layer in isolation["layers"]:
            print(f"  - {layer}")


if __name__ == "__main__":
    main()
