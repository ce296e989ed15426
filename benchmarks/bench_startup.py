"""Time to first screen: the tutor against a bare Textual hello-world, started the same way.

Both run as `python ...` child processes in a pseudo-terminal (the real Textual driver, 100×30);
the time is from spawning the process to its text appearing in the terminal output: "Hello, world"
for the bare app; for the tutor its title (first paint of the home screen), the first lesson's
title (the lessons listed: from the cards saved by the last start, tutor.content.index, or once
the course is parsed if there are none), "Nothing due" (the progress columns and the review line
drawn) and "Next: " (the next step; both read from the progress file, tutor.progress.glance). A
warm-up start before the rounds parses the course, saves the cards and creates the progress store,
as a learner's first start does. Rounds alternate between the apps so machine noise hits both
alike. Goals: lessons listed ≤ 1.3×, home with its progress, review line and next step ≤ 1.3×;
the report says whether each is met.

    python benchmarks/bench_startup.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pty_app import PtyApp, python

GOAL = 1.30  # the tutor's times over the bare app's

HELLO = """
from textual.app import App
from textual.widgets import Static

class Hello(App):
    def compose(self):
        yield Static("Hello, world")

Hello().run()
"""


def time_to(argv: list[str], markers: list[str]) -> list[float]:
    """Seconds from spawn until each marker shows, in order; then the app is stopped."""
    app = PtyApp(argv)
    try:
        return [app.expect(marker, 60) - app.started for marker in markers]
    finally:
        app.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hello = Path(tmp) / "hello.py"
        hello.write_text(HELLO, encoding="utf-8")
        home = Path(tmp) / "home"
        tutor = [python(), "-m", "tutor", "--home", str(home), "--lang", "en"]
        markers = ["Attention Tutor", "Multi-head attention", "Nothing due", "Next: "]
        time_to(tutor, markers)  # warm the OS file cache, save the cards, create the progress store
        times: dict[str, list[float]] = {"bare": [], "paint": [], "lessons": [], "progress": [], "next": []}
        for _ in range(args.rounds):
            times["bare"] += time_to([python(), str(hello)], ["Hello, world"])
            for key, seconds in zip(
                ("paint", "lessons", "progress", "next"), time_to(tutor, markers), strict=True
            ):
                times[key].append(seconds)
    bare = statistics.median(times["bare"])
    print(f"rounds: {args.rounds}; spawn to text on screen; median (min–max), ratio to the bare app")
    labels = {
        "bare": "bare Textual hello-world",
        "paint": "tutor, first screen",
        "lessons": "tutor, lessons listed",
        "progress": "tutor, progress shown",
        "next": "tutor, next step shown",
    }
    for key, label in labels.items():
        xs = times[key]
        m = statistics.median(xs)
        print(f"{label:25s} {m * 1000:6.0f} ms ({min(xs) * 1000:.0f}–{max(xs) * 1000:.0f})  {m / bare:5.2f}×")
    ratio = {key: statistics.median(xs) / bare for key, xs in times.items()}
    verdicts = [
        f"{label} ≤ {GOAL:.2f}×: {'met' if ratio[key] <= GOAL else 'MISSED'} ({ratio[key]:.2f}×)"
        for key, label in (
            ("lessons", "lessons listed"),
            ("next", "home with progress, review line, next step"),
        )
    ]
    print(f"goals: {'; '.join(verdicts)}; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
