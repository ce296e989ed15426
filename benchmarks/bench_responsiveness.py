"""The screen first while train-compare trains on every core: the first opening of each lesson, and every key.

The tutor runs in a pseudo-terminal (real Textual driver, 80×24) on a fresh home, twice. Each time it opens a
lesson's train-compare panel through the command palette and starts it with `r` (the lesson's parameters: a
job of several runs on worker processes, one per core), waits for its first training step, and then times
from the key's write to the terminal until the text it brings arrives:
- the first opening of every other lesson (palette → Enter; until its first section's title shows): the
  first app trains from lesson 1 and opens lessons 2 and 3, the second trains from lesson 3 and opens 1;
- in the first app, every kind of key: e (next experiment, scrolling the lesson: that panel's title), o
  (its parameters, opened for the first time: their hint), F1 / F2 / F3 / F4 (home, back to the lesson,
  the review quiz, the lesson's exercise: the new screen's footer or text), the first F3 and F4 counted
  as first openings of their screens too.
Then F7 stops the job, and once its processes have gone, ctrl+q: the time to exit with no run going, and
whether any process the app started is left. Goals: every key p99 ≤ 100 ms, the first opening of any
screen ≤ 500 ms, exit ≤ 300 ms; the report gives each figure's ratio to its goal, the load average (the
machine may be shared: read the medians beside it) and whether the job was still training at the end.
`--idle` measures the keys with nothing running, for comparison.

    python benchmarks/bench_responsiveness.py [--presses 30] [--idle]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pty_app import ROOT, PtyApp, python

F1, F2, F3, F4, F7 = "\x1bOP", "\x1bOQ", "\x1bOR", "\x1bOS", "\x1b[18~"
CTRL_P, CTRL_Q, ENTER, ESC, DOWN = "\x10", "\x11", "\r", "\x1b", "\x1b[B"
KEY_GOAL_MS, OPEN_GOAL_MS, EXIT_GOAL_MS = 100.0, 500.0, 300.0
SIZE = (80, 24)


def percentile(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def descendants(pid: int) -> list[int]:
    """Live processes started by `pid`, directly or not (children run in sessions of their own,
    tutor.proc, so the app's process group does not hold them)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z":
                parent[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        frontier = [p for p, pp in parent.items() if pp in frontier]
        found += frontier
    return found


def judge(pid: int) -> bool:
    """The warm judge (grading/judging/judge.py --zygote) or one of its forks: the app keeps it; not a run."""
    try:
        return b"judge.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def workers(pid: int) -> int:
    """The training job's worker processes under the app `pid`."""
    count = 0
    for child in descendants(pid):
        try:
            count += b"tutor.experiments.worker" in Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
    return count


def course() -> tuple[list[tuple[str, str]], list[str]]:
    """(title, first section's title) of every lesson, and the first lesson's experiment titles in order (what
    `e` steps through)."""
    sys.path.insert(0, str(ROOT))
    from tutor.content.loader import load_course
    from tutor.texts import say

    loaded = load_course(ROOT / "tutor" / "lessons")
    lessons = [(lesson.title["en"], lesson.sections[0].title["en"]) for lesson in loaded.lessons]
    first = loaded.lessons[0]
    return lessons, [say(f"exp.{ref.name}.title", "en") for s in first.sections for ref in s.experiments]


def palette(app: PtyApp, typed: str, marker: str, downs: int = 0) -> float:
    """Open the palette, type, pick the hit (`downs` below the first) and time Enter → `marker` (ms)."""
    for attempt in range(5):  # the palette finds the course's entries once it has loaded
        app.send(CTRL_P)
        time.sleep(0.5)
        app.send(typed)
        time.sleep(1.5)
        for _ in range(downs):
            app.send(DOWN)
            time.sleep(0.3)
        sent = app.send(ENTER)
        try:
            return (app.expect(marker, timeout=60) - sent) * 1000
        except TimeoutError:
            if attempt == 4:
                raise
            app.send(ESC)
            time.sleep(1.0)
    raise AssertionError("unreachable")


def start_training(app: PtyApp, downs: int) -> None:
    palette(app, "train-compare", "Train and compare", downs)
    time.sleep(2.5)  # the lesson scrolls to the panel while its text lays out
    app.send("r")
    app.expect("· ETA ", timeout=300)  # the key bar: the job's first steps (its workers are running)


def to_first(app: PtyApp, first: str, to_last: int) -> None:
    """Step with e (untimed) from `to_last` panels before the lesson's last one past it (e says there is none
    further on), then once more to its first (several panels share a title: the count tells where e is)."""
    for _ in range(to_last + 1):
        app.send("e")
        time.sleep(0.5)
    app.send("e")
    app.expect(first, timeout=10)


def timed(app: PtyApp, plan: list[tuple[str, str]], presses: int) -> list[float]:
    out = []
    for i in range(presses):
        key, marker = plan[i % len(plan)]
        sent = app.send(key)
        out.append((app.expect(marker, timeout=30) - sent) * 1000)
        time.sleep(0.15)
    return out


def report(name: str, ms: list[float], goal: float = KEY_GOAL_MS) -> None:
    p99 = percentile(ms, 0.99)
    print(
        f"  {name:30s} p50 {statistics.median(ms):6.1f}  p90 {percentile(ms, 0.9):6.1f}"
        f"  p99 {p99:6.1f}  max {max(ms):6.1f} ms  (n={len(ms)})  p99/goal {p99 / goal:4.2f}"
    )


def stop_and_quit(app: PtyApp) -> tuple[float, list[int]]:
    """F7, wait until the job's processes have gone, then ctrl+q: (ms to exit, processes left over)."""
    app.send(F7)
    deadline = time.monotonic() + 60
    while any(not judge(pid) for pid in descendants(app.proc.pid)):
        if time.monotonic() > deadline:
            raise TimeoutError("the training job did not stop within 60 s of F7")
        time.sleep(0.05)
    time.sleep(1.0)
    children = descendants(app.proc.pid)  # the warm judge F4 started, if any
    sent = app.send(CTRL_Q)
    exited = app.wait_exit(30)
    time.sleep(0.2)
    return (exited - sent) * 1000, [p for p in children if Path(f"/proc/{p}").exists()]


def session(home: str) -> PtyApp:
    app = PtyApp([python(), "-m", "tutor", "--home", home, "--lang", "en"], size=SIZE)
    app.expect("Multi-head attention")
    time.sleep(3.0)  # the course loads and the quiz's and lab's first screens are made behind home
    return app


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=30, help="per kind of key")
    parser.add_argument("--idle", action="store_true", help="the keys without training, for comparison")
    args = parser.parse_args()
    lessons, titles = course()
    loads = [os.getloadavg()[0]]  # the other work on the machine (1-minute averages)
    openings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home:
        app = session(home)
        try:
            if args.idle:
                palette(app, "train-compare", "Train and compare")
                time.sleep(2.5)
            else:
                start_training(app, downs=0)  # lesson 1's panel
                loads.append(os.getloadavg()[0])
                for title, first_section in lessons[1:]:
                    app.send(F1)
                    time.sleep(1.0)
                    openings[title] = palette(app, title, first_section)
                    print(f"  (first opening of {title!r}: {openings[title]:.0f} ms)", flush=True)
                    time.sleep(2.0)
                palette(app, "train-compare", "Train and compare")  # back to lesson 1's panel
                time.sleep(2.5)
            to_first(app, titles[0], 0)  # the palette opened the lesson at its last panel
            params = []  # o: each panel's parameters, opened for the first time
            for title in titles[1:4]:
                timed(app, [("e", title)], 1)
                params += timed(app, [("o", "Enter in a field runs")], 1)
                app.send(ESC)  # out of the field: the keys are the lesson's again
                time.sleep(0.3)
            sections: list[float] = []  # e from the first panel to the last, again and again
            at = 4  # the o's left e at the fourth panel
            while len(sections) < args.presses:
                to_first(app, titles[0], len(titles) - at)
                plan = [("e", title) for title in titles[1:]]
                at = len(titles)
                sections += timed(app, plan, min(len(plan), args.presses - len(sections)))
            modes = timed(app, [(F1, "Continue"), (F2, "Next §")], args.presses)
            others = timed(
                app,
                [(F3, "Back"), (F1, "Continue"), (F4, "Answer these predictions first"), (F2, "Next §")],
                args.presses,
            )
            training = workers(app.proc.pid) > 0
            loads.append(os.getloadavg()[0])
            exit_ms, left_over = stop_and_quit(app)
        finally:
            app.close()
    if not args.idle:
        with tempfile.TemporaryDirectory() as home:
            app = session(home)
            try:
                start_training(app, downs=1)  # lesson 3's panel (the second train-compare)
                title, first_section = lessons[0]
                app.send(F1)
                time.sleep(1.0)
                openings[title] = palette(app, title, first_section)
                loads.append(os.getloadavg()[0])
                stop_and_quit(app)
            finally:
                app.close()
    doing = "with nothing running" if args.idle else "while train-compare trains on every core"
    if not args.idle:
        doing += " (still training at the end)" if training else " (BUT the job had ended)"
    print(f"{Path(__file__).name}, {SIZE[0]}×{SIZE[1]}, {doing}:")
    for title, ms in openings.items():
        print(f"  first opening of {title!r}: {ms:.0f} ms (goal {OPEN_GOAL_MS:.0f}: {ms / OPEN_GOAL_MS:.2f})")
    f3, f4 = others[0::4], others[2::4]
    print(f"  first F3 (the review quiz) {f3[0]:.0f} ms, first F4 (the exercise) {f4[0]:.0f} ms")
    report("o: parameters, first opening", params)
    report("e: next experiment (scroll)", sections)
    report("F1/F2 home ⇄ lesson", modes)
    report("F3/F1/F4/F2 quiz, home, lab", others)
    every = params + sections + modes + others
    report("all keys", every)
    first_openings = [*openings.values(), f3[0], f4[0], *params]
    p99 = percentile(every, 0.99)
    slowest = max(first_openings)
    print(
        f"ctrl+q with no run going: exited after {exit_ms:.0f} ms (exit/goal {exit_ms / EXIT_GOAL_MS:4.2f}); "
        f"processes it started still running: {left_over or 'none'}"
    )
    print(
        f"goals: every key p99 ≤ {KEY_GOAL_MS:.0f} ms: {'met' if p99 <= KEY_GOAL_MS else 'MISSED'} ({p99:.0f} ms); "
        f"every first opening ≤ {OPEN_GOAL_MS:.0f} ms: {'met' if slowest <= OPEN_GOAL_MS else 'MISSED'} "
        f"(slowest {slowest:.0f} ms); load average {', '.join(f'{x:.1f}' for x in loads)} (before, while, after)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
