"""Key press to screen update while `train-compare` trains in the background, and the time to exit.

The tutor runs in a pseudo-terminal (real Textual driver, 90×30) on a fresh home. Through the
command palette it opens the train-compare experiment (the first match: the multi-head lesson) and starts it with
the lesson's parameters (a child process training on both cores). Then it times keys from the
write to the terminal until the text they bring arrives:
- e (next experiment, scrolling the lesson): that panel's title reaching the screen;
- F1 / F2 / F3 / F4 (home, back to the lesson, the review quiz, the lesson's exercise, which starts
  the warm judge): the new screen's footer or text ("Continue", "Next §", "Back", "Answer these
  predictions first").
Then F7 stops the training run, and once its child has gone, ctrl+q: the time to exit with no run
going (store, writer thread, warm judge and the terminal restored), and whether any process the app
started is left. (ctrl+q while a run goes asks first: tests/test_ui_behaviour.py.)
Goals: p99 ≤ 100 ms for every key, exit ≤ 300 ms; the report gives each figure's ratio to its goal.
`--idle` measures the same with nothing running, for comparison.

    python benchmarks/bench_responsiveness.py [--presses 100] [--idle]
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
CTRL_P, CTRL_Q, ENTER, ESC = "\x10", "\x11", "\r", "\x1b"
KEY_GOAL_MS, EXIT_GOAL_MS = 100.0, 300.0


def percentile(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def descendants(pid: int) -> list[int]:
    """Live processes started by `pid`, directly or not (children run in sessions of their own,
    tutor.childproc, so the app's process group does not hold them)."""
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
        kids = [p for p, pp in parent.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def judge(pid: int) -> bool:
    """The warm judge (grading/judging/judge.py --zygote) or one of its forks: the app keeps it; not a run."""
    try:
        return b"judge.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            out.append(pid)
    return out


def panel_titles() -> list[str]:
    """Titles of the multi-head lesson's experiment panels, in order (what `e` steps through)."""
    sys.path.insert(0, str(ROOT))
    from tutor.content.loader import load_course
    from tutor.texts import say

    lesson = load_course(ROOT / "lessons").lesson("multi-head")
    return [say(f"exp.{ref.name}.title", "en") for s in lesson.sections for ref in s.experiments]


def timed(app: PtyApp, plan: list[tuple[str, str]], presses: int) -> list[float]:
    out = []
    for i in range(presses):
        key, marker = plan[i % len(plan)]
        sent = app.send(key)
        out.append((app.expect(marker, timeout=10) - sent) * 1000)
        time.sleep(0.15)
    return out


def report(name: str, ms: list[float]) -> None:
    p99 = percentile(ms, 0.99)
    print(
        f"  {name:30s} p50 {statistics.median(ms):6.1f}  p90 {percentile(ms, 0.9):6.1f}"
        f"  p99 {p99:6.1f}  max {max(ms):6.1f} ms  (n={len(ms)})  p99/goal {p99 / KEY_GOAL_MS:4.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=100, help="per kind of key")
    parser.add_argument("--idle", action="store_true", help="the same without training, for comparison")
    args = parser.parse_args()
    titles = panel_titles()
    load_before = os.getloadavg()[0]  # the other work on the machine (a 1-minute average)
    with tempfile.TemporaryDirectory() as home:
        app = PtyApp([python(), "-m", "tutor", "--home", home, "--lang", "en"], size=(90, 30))
        try:
            app.expect("Multi-head attention")
            for attempt in range(5):  # the palette finds lessons' panels once the course has loaded
                app.send(CTRL_P)
                time.sleep(0.5)
                app.send("train-compare")
                time.sleep(1.0)
                app.send(ENTER)
                try:
                    app.expect("Train and compare", timeout=10)
                    break
                except TimeoutError:
                    if attempt == 4:
                        raise
                    app.send(ESC)  # no match yet: close the palette and ask again
                    time.sleep(1.0)
            time.sleep(2.5)  # the lesson scrolls to the panel while its Markdown lays out
            if not args.idle:
                app.send("r")
                app.expect("step ", timeout=120)  # the child reports training steps
            for _ in range(len(titles) + 1):  # step with e until the first panel is at the top
                app.send("e")
                try:
                    app.expect(titles[0], timeout=3)
                    break
                except TimeoutError:
                    continue
            # from there e steps through the panels in order and wraps around
            plan = [("e", title) for title in titles[1:] + titles[:1]]
            sections = timed(app, plan, args.presses)
            modes = timed(app, [(F1, "Continue"), (F2, "Next §")], args.presses)
            others = timed(
                app,
                [(F3, "Back"), (F1, "Continue"), (F4, "Answer these predictions first"), (F2, "Next §")],
                args.presses,
            )
            children = descendants(app.proc.pid)
            training = any(not judge(pid) for pid in children)  # the training child is still there
            app.send(F7)  # stop it; then quit with no run going
            deadline = time.monotonic() + 30
            while any(not judge(pid) for pid in alive(descendants(app.proc.pid))):
                if time.monotonic() > deadline:
                    raise TimeoutError("the training child did not stop within 30 s of F7")
                time.sleep(0.05)
            time.sleep(1.0)
            children = descendants(app.proc.pid)  # the warm judge F4 started, if any
            quit_sent = app.send(CTRL_Q)
            exited = app.wait_exit(30)
            time.sleep(0.2)
            left_over = alive(children)
        finally:
            app.close()
    doing = "with nothing running" if args.idle else "while train-compare trains in a child process"
    if not args.idle:
        doing += " (still training at the end)" if training else " (BUT the training child had ended)"
    print(f"key press → screen update, {doing}:")
    report("e: next experiment (scroll)", sections)
    report("F1/F2 home ⇄ lesson", modes)
    report("  of which F1 → home", modes[0::2])
    report("  of which F2 → lesson", modes[1::2])
    report("F3/F1/F4/F2 quiz, home, lab", others)
    report("  of which F3 → quiz", others[0::4])
    report("  of which F4 → exercise", others[2::4])
    report("all keys", sections + modes + others)
    f3, f4 = others[0::4], others[2::4]
    print(
        f"  first F3 {f3[0]:.1f} ms, later F3 p50 {statistics.median(f3[1:]):.1f} ms (first/later {f3[0] / statistics.median(f3[1:]):.2f}); "
        f"first F4 {f4[0]:.1f} ms, later F4 p50 {statistics.median(f4[1:]):.1f} ms (first/later {f4[0] / statistics.median(f4[1:]):.2f})"
    )
    exit_ms = (exited - quit_sent) * 1000
    print(
        f"ctrl+q with no run going: exited after {exit_ms:.0f} ms (exit/goal {exit_ms / EXIT_GOAL_MS:4.2f}); "
        f"processes it started still running: {left_over or 'none'}"
    )
    p99 = percentile(sections + modes + others, 0.99)
    print(
        f"goals: every key p99 ≤ {KEY_GOAL_MS:.0f} ms: {'met' if p99 <= KEY_GOAL_MS else 'MISSED'} ({p99:.0f} ms); "
        f"exit ≤ {EXIT_GOAL_MS:.0f} ms: {'met' if exit_ms <= EXIT_GOAL_MS else 'MISSED'} ({exit_ms:.0f} ms); "
        f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
