"""Grading speed, end to end through the real sandbox (child start, torch import, checks), per exercise.

    python benchmarks/bench_grading.py [--repeat 5]

Prints the median, min and max wall time of grading each exercise's reference solution with
`tutor.grading.service.grade_source` (what `python -m tutor grade` does after reading the file), the
budget from issue 5 (rope ≤ 6 s, the others ≤ 3 s), and the peak virtual memory of grading rope's
checks in one process (what the sandbox's address-space limit has to leave room for).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BUDGET_S = {"rope": 6.0}
VMPEAK = """
import re, sys, types, torch
torch.set_num_threads(1)
sys.path.insert(0, {root!r})
from tutor.grading.harness import load_module
d = {folder!r}
checks = load_module("checks", d + "/checks.py")
sub = load_module("submission", d + "/solution.py")
for name in {names!r}:
    getattr(checks, "check_" + name)(sub)
status = open("/proc/self/status").read()
print(int(re.search(r"VmPeak:\\s+(\\d+)", status).group(1)) // 1024, int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) // 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from tutor.content.loader import load_course
    from tutor.grading.service import grade_source, solution_file

    course = load_course(ROOT / "lessons")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'exercise':<16} {'median s':>8} {'min s':>7} {'max s':>7} {'budget':>7}  verdict")
    for ex in course.exercises():
        if ex.kind != "code":
            continue
        source = solution_file(ex).read_bytes()
        times, statuses = [], set()
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = grade_source(ex, source, str(solution_file(ex)))
            times.append(time.perf_counter() - t0)
            statuses.add(result.status)
        budget = BUDGET_S.get(ex.id, 3.0)
        med = statistics.median(times)
        verdict = "ok" if med <= budget else "OVER BUDGET"
        print(
            f"{ex.id:<16} {med:8.2f} {min(times):7.2f} {max(times):7.2f} {budget:7.1f}  {verdict} ({'/'.join(sorted(statuses))})"
        )

    rope = course.exercise("rope")
    import tempfile

    cli = []
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TUTOR_")} | {"TUTOR_HOME": home}
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "tutor", "grade", "rope", str(solution_file(rope)), "--json"],
                capture_output=True, check=True, env=env, cwd=ROOT,
            )  # fmt: skip
            cli.append(time.perf_counter() - t0)
    print(
        f"python -m tutor grade rope (CLI start, load lessons, grade, record): median {statistics.median(cli):.2f} s"
    )

    code = VMPEAK.format(root=str(ROOT), folder=str(rope.folder), names=[c.id for c in rope.checks])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    print(
        f"rope checks in one process: VmPeak {out[0]} MB, peak RSS {out[1]} MB (sandbox limit: 3072 MB address space)"
    )


if __name__ == "__main__":
    main()
