"""Time `python -m tutor progress --import` on exports of 10k, 30k and 100k rows.

    python benchmarks/bench_progress_import.py [--rows 10000 30000 100000] [--repeats 3] [--against DIR]

Each export holds rows of four tables as the tutor writes them (60 % quiz answers, 15 % submissions,
15 % hint reveals, 10 % section reads), each row its own. It is imported twice into a fresh home, as a
real subprocess: once into the empty store, then again (every row already there, so nothing is
written: the import's duplicate check alone), `--repeats` times, each time into a new home; the
fastest of each is kept (the machine may be busy). Printed per size: the seconds of each import, the file's
size and, from one size to the next, how much the time grew per 10× rows (10 for linear growth, 100
for quadratic). `--against DIR` times another checkout of the tutor too (say, `git worktree add
--detach /tmp/old main`), in the same run, on the same files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def export(rows: int) -> dict:
    """An export of `rows` rows, every one distinct (its own time, or its own section)."""

    def at(i: int) -> str:
        return (T0 + timedelta(seconds=i)).isoformat(timespec="microseconds")

    checks = json.dumps([{"hint": "", "message": "", "name": "shape", "points": 2.0, "status": "pass"}])
    tables: dict[str, list] = {"section_reads": [], "quiz_answers": [], "submissions": [], "hint_reveals": []}
    for i in range(rows):
        kind = i % 20
        if kind < 12:
            tables["quiz_answers"].append(
                {
                    "lesson": "01-multi-head",
                    "question": f"q{i % 7}",
                    "exercise": None,
                    "answer": str(i % 5),
                    "correct": i % 2,
                    "rating": 3,
                    "used_hint": 0,
                    "counted": 1,
                    "session": f"s{i // 50}",
                    "at": at(i),
                }
            )
        elif kind < 15:
            tables["submissions"].append(
                {
                    "exercise": "split-heads",
                    "at": at(i),
                    "sha256": f"{i:064x}",
                    "status": "pass",
                    "score": 6.0,
                    "max_score": 6.0,
                    "checks": checks,
                    "hints_revealed": 0,
                }
            )
        elif kind < 18:
            tables["hint_reveals"].append({"exercise": "split-heads", "hint": str(i % 3), "at": at(i)})
        else:
            tables["section_reads"].append(
                {"lesson": "01-multi-head", "section": f"s{i}", "first_at": at(i), "last_at": at(i)}
            )
    return {
        "format": "attention-tutor-progress",
        "version": 1,
        "schema_version": 2,
        "exported_at": at(rows),
        "tables": tables,
    }


def timed_import(code: Path, path: Path, home: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("TUTOR_HOME", None)
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tutor",
            "progress",
            "--import",
            str(path),
            "--home",
            str(home),
            "--lang",
            "en",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=code,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{code}: the import of {path} failed: {done.stderr.strip()}")
    return seconds


def growth(t0: float, t1: float, n0: int, n1: int) -> float:
    """How much the time grows per 10× rows between two sizes: 10 ** slope on a log-log scale."""
    return 10 ** (math.log(t1 / t0) / math.log(n1 / n0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", type=Path, metavar="DIR", help="another checkout to time the same way")
    args = parser.parse_args()
    codes = [("this checkout", ROOT)] + (
        [(str(args.against), args.against.resolve())] if args.against else []
    )
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in args.rows:
            files[n] = Path(tmp) / f"export-{n}.json"
            files[n].write_text(json.dumps(export(n), indent=1), encoding="utf-8")
        for name, code in codes:
            print(f"{name}:")
            print(f"{'rows':>8} {'MB':>6} {'empty s':>8} {'again s':>8} {'per 10× rows':>14}")
            last: tuple[int, float, float] | None = None
            for n in args.rows:
                times = []
                for repeat in range(args.repeats):
                    home = Path(tmp) / f"home-{name.replace('/', '_')}-{n}-{repeat}"
                    times.append((timed_import(code, files[n], home), timed_import(code, files[n], home)))
                first, again = min(t[0] for t in times), min(t[1] for t in times)
                per = ""
                if last is not None:
                    per = f"{growth(last[1], first, last[0], n):.1f}× / {growth(last[2], again, last[0], n):.1f}×"
                size = files[n].stat().st_size / 2**20
                print(f"{n:>8} {size:>6.1f} {first:>8.2f} {again:>8.2f} {per:>14}", flush=True)
                last = (n, first, again)


if __name__ == "__main__":
    main()
