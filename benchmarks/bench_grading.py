"""Grading speed, end to end through the CLI: `python -m tutor grade ID solution.py --json`, per exercise.

    python benchmarks/bench_grading.py [--repeat 5]

Each run is what a learner waits for: the tutor starts, reads the file, starts the judge (which imports
torch), the judge builds the worker's box, and the checks probe the learner's code. Side by side, in
alternating rounds, it times `python -c "import torch"`: the floor any grade that starts Python and torch
pays. Prints the median, min and max wall time of grading each exercise's reference solution, its ratio
to that floor, the goal (≤ 2 s for every code exercise), and the isolation in force here.
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

GOAL_S = 2.0


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


def import_torch_once() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from tutor.content.loader import load_course
    from tutor.grading.service import solution_file

    course = load_course(ROOT / "lessons")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'exercise':<16} {'median s':>8} {'min s':>7} {'max s':>7} {'/torch':>7} {'goal':>6}  verdict")
    exercises = [ex for ex in course.exercises() if ex.kind == "code"]
    times: dict[str, list[float]] = {ex.id: [] for ex in exercises}
    floor: list[float] = []
    statuses: dict[str, set[str]] = {ex.id: set() for ex in exercises}
    isolation = None
    with tempfile.TemporaryDirectory() as home:
        for _ in range(args.repeat):  # rounds: every exercise and the floor once each, so load hits all alike
            floor.append(import_torch_once())
            for ex in exercises:
                seconds, grade = grade_once(ex.id, solution_file(ex), home)
                times[ex.id].append(seconds)
                statuses[ex.id].add(grade["status"])
                isolation = grade["isolation"]
    base = statistics.median(floor)
    print(f"{'import torch':<16} {base:>8.2f} {min(floor):>7.2f} {max(floor):>7.2f} {1:>7.2f}")
    for ex in exercises:
        t = times[ex.id]
        median = statistics.median(t)
        verdict = "ok" if median <= GOAL_S else "over"
        print(f"{ex.id:<16} {median:>8.2f} {min(t):>7.2f} {max(t):>7.2f} {median / base:>7.2f} {GOAL_S:>6.1f}  "
              f"{verdict} ({'/'.join(sorted(statuses[ex.id]))})")  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if isolation:
        print(f"isolation: {isolation['level']}; layers: {', '.join(isolation['layers'])}")


if __name__ == "__main__":
    main()
