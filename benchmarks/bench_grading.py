"""Grading speed, measured side by side in one run: cold, warm, a parallel batch, and the app.

    python benchmarks/bench_grading.py [--repeat 5]

- **cold**: `python -m tutor grade ID solution.py --json` end to end, what a plain `grade` costs: the tutor
  starts and reads the file, the judge starts and imports torch, builds the worker's box, and the
  checks probe the learner's code. Beside it, in the same rounds, `python -c "import torch"`: the floor
  of anything that starts Python and torch.
- **warm**: the same file graded by a judge forked from a warm judge (judges.WarmJudge, what `grade
  --watch`, `--batch` and the app keep), in this process; its first grade, which waits for the warm
  judge to start, is left out.
- **batch**: `grade split-heads --batch DIR --jobs 2` over 20 copies of the reference, end to end.
- **class**: the similarity report over 500 files and the exports of a 500-file class
  (benchmarks/bench_similarity.py, which also runs alone).
- **app**: the real app (App.run_test) on split-heads' exercise screen: the file is saved and the time
  runs until a frame with the verdict in view has been rendered (the screen's `_reveal_result` runs after
  the frame that draws it; if it scrolls, the next frame: Textual's `call_after_refresh`); beside it, in the same rounds, a warm grade of the same text by the
  app's own warm judge.

Goals, so that a grade comes back while the learner still looks at the code: cold ≤ 2 s for every
code exercise; warm ≤ 0.25× cold; the batch ≤ 3× one cold grade; the app within 1.3× the warm grade;
the similarity report over 500 files ≤ 10 s of CPU.
"""

from __future__ import annotations

import argparse
import asyncio
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

COLD_GOAL_S = 2.0


def timed_run(argv: list[str], home: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, *argv, "--home", home],
        capture_output=True,
        text=True,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0, out


def import_torch_once() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0


def median(values: list[float]) -> float:
    return statistics.median(values)


def cold_rounds(exercises, repeat: int, home: str) -> tuple[list[float], dict[str, list[float]], dict]:
    from tutor.grading.workspace import solution_file

    floor: list[float] = []
    cold: dict[str, list[float]] = {ex.id: [] for ex in exercises}
    isolation: dict = {}
    for _ in range(repeat):  # rounds: every exercise and the floor once each, so load hits all alike
        floor.append(import_torch_once())
        for ex in exercises:
            seconds, out = timed_run(["-m", "tutor", "grade", ex.id, str(solution_file(ex)), "--json"], home)
            grade = json.loads(out.stdout)
            assert grade["status"] == "pass", (ex.id, grade["status"])
            cold[ex.id].append(seconds)
            isolation = grade["isolation"]
    return floor, cold, isolation


def warm_rounds(exercises, repeat: int) -> dict[str, list[float]]:
    from tutor.grading.judges import WarmJudge
    from tutor.grading.runner import grade_code
    from tutor.grading.workspace import solution_file

    warm: dict[str, list[float]] = {ex.id: [] for ex in exercises}
    with WarmJudge() as judge:
        for i in range(repeat + 1):
            for ex in exercises:
                source = solution_file(ex).read_text(encoding="utf-8")
                t0 = time.perf_counter()
                result = grade_code(ex, source, "solution.py", warm=judge)
                if i:  # the first one waited for the warm judge to start
                    warm[ex.id].append(time.perf_counter() - t0)
                assert result.status == "pass", (ex.id, result.status)
    return warm


def batch_rounds(ex, repeat: int, home: str, files: int = 20, jobs: int = 2) -> list[float]:
    from tutor.grading.workspace import solution_file

    times = []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(files):
            Path(folder, f"student{i:02d}.py").write_bytes(solution_file(ex).read_bytes())
        for _ in range(repeat):
            args = ["-m", "tutor", "grade", ex.id, "--batch", folder, "--jobs", str(jobs), "--format", "json"]
            seconds, out = timed_run(args, home)
            rows = json.loads(out.stdout)["results"]
            assert len(rows) == files and all(r["grade"]["status"] == "pass" for r in rows)
            times.append(seconds)
    return times


async def app_rounds(ex_id: str, repeat: int, home: Path) -> tuple[list[float], list[float]]:
    """(save → verdict on screen in the app, a warm grade of the same text by the app's warm judge)."""
    from tests.ui_helpers import make_app, settle, unlock_exercise
    from tutor.grading.runner import grade_code

    app = make_app(home)
    shown, warm = [], []
    async with app.run_test(size=(100, 40)) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, ex_id)
        ex = app.tutor.exercise(ex_id)[1]
        source = (ex.folder / "solution.py").read_text(encoding="utf-8")
        judge = app.tutor.warm_judge()
        await asyncio.to_thread(grade_code, ex, source, "first.py", warm=judge)  # the warm judge is up
        painted = asyncio.Event()
        reveal, box = screen._reveal_result, screen.query_one("#ex-box")

        def revealed() -> None:
            # runs once the frame with the new verdict is drawn; if it scrolls, the next frame shows it
            at = box.scroll_offset
            reveal()
            if box.scroll_offset == at:
                painted.set()
            else:
                screen.call_after_refresh(painted.set)

        screen._reveal_result = revealed
        for i in range(repeat):
            text = f"{source}\n# round {i}\n"  # a new file each round: a save, and fresh inputs
            t0 = time.perf_counter()
            await asyncio.to_thread(grade_code, ex, text, "solution.py", warm=judge)
            warm.append(time.perf_counter() - t0)
            painted.clear()
            t0 = time.perf_counter()
            screen.file.write_text(text, encoding="utf-8")  # the learner saves
            await painted.wait()
            shown.append(time.perf_counter() - t0)
            assert screen.result.status == "pass"
            await pilot.pause()  # the store's record and the next step, before the next round
        await settle(app)
    return shown, warm


def report_app(shown: list[float], app_warm: list[float]) -> None:
    s, w = median(shown), median(app_warm)
    ratios = sorted(a / b for a, b in zip(shown, app_warm, strict=True))
    print(
        f"app, save → verdict on screen: {s:.3f} s; a warm grade beside it {w:.3f} s; {s / w:.2f}× (goal ≤ 1.3×); "
        f"round by round {ratios[0]:.2f}–{ratios[-1]:.2f}× (n={len(ratios)})"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["app"], help="only the app's save → verdict beside a warm grade")
    args = parser.parse_args()

    from tutor.content.loader import load_course

    course = load_course(ROOT / "tutor" / "lessons")
    exercises = [ex for ex in course.exercises() if ex.kind == "code"]
    split = course.exercise("split-heads")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if args.only == "app":
        with tempfile.TemporaryDirectory() as home:
            shown, app_warm = asyncio.run(app_rounds("split-heads", args.repeat, Path(home) / "app"))
        report_app(shown, app_warm)
        return
    with tempfile.TemporaryDirectory() as home:
        floor, cold, isolation = cold_rounds(exercises, args.repeat, home)
        warm = warm_rounds(exercises, args.repeat)
        batch = batch_rounds(split, max(3, args.repeat // 2), home)
        shown, app_warm = asyncio.run(app_rounds("split-heads", args.repeat, Path(home) / "app"))
    base = median(floor)
    print(
        f"\n{'exercise':<16} {'cold s':>7} {'/torch':>7} {'warm s':>7} {'warm/cold':>10}   goals: cold ≤ "
        f"{COLD_GOAL_S:g} s, warm ≤ 0.25× cold"
    )
    print(f"{'import torch':<16} {base:>7.2f} {1:>7.2f}")
    for ex in exercises:
        c, w = median(cold[ex.id]), median(warm[ex.id])
        print(f"{ex.id:<16} {c:>7.2f} {c / base:>7.2f} {w:>7.3f} {w / c:>10.2f}")
    b, c = median(batch), median(cold[split.id])
    print(
        f"\nbatch of 20 split-heads references, --jobs 2: {b:.2f} s = {b / c:.2f}× one cold grade (goal ≤ 3×)"
    )
    report_app(shown, app_warm)
    print(f"isolation: {isolation['level']}; layers: {', '.join(isolation['layers'])}")
    from benchmarks.bench_similarity import measure, report

    print()
    report(measure(500))


if __name__ == "__main__":
    main()
