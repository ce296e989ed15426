"""A class with zip bombs in it graded in bounded memory: the batch's peak RSS and wall time, beside the
same class without them, in one run.

    python benchmarks/bench_intake.py [--rounds 3] [--jobs 2]

The class: 30 students, each a zip in one folder (`student07_107.zip`) holding split_heads.py (the
reference, every third one the starter), built in a temporary folder. The hostile class adds about
10 MB of hostile members to 24 of the zips (tests/intake_helpers.py), six of each kind: 250 bombs of
1 MiB each, 10,500 tiny members (more than a zip may list), a member whose header says 1,000 bytes
while it inflates to 250 MiB, and a zip in a zip eight levels deep with 30 bombs at every level.

Each round runs `python -m tutor grade split-heads --batch DIR --format json --jobs N` on both classes,
one after the other, and polls the command's own peak RSS (VmHWM in /proc/PID/status: the tutor's
process, which reads the batch; the judges and workers it starts are processes of their own, each
bounded by the box). The figures are medians over the rounds; the ratio is hostile / clean. Both runs
must grade every student's split_heads.py alike, or the benchmark fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.intake_helpers import MiB, bomb, liar, nested, peak_rss_mib, tiny, zipped  # noqa: E402

STUDENTS = 30
EXERCISE = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads"


def hostile(kind: int, own: dict[str, bytes]) -> bytes:
    """A student's zip with the hostile members of `kind` (0 to 3) after the student's own file."""
    if kind == 0:
        return zipped({**own, **bomb(250)})
    if kind == 1:
        return zipped({**own, **tiny(10_500)})
    if kind == 2:
        return liar(250 * MiB, first=own)
    return zipped({**own, "deep.zip": nested(8, {"split_heads.py": own["split_heads.py"]}, bombs=30)})


def build(folder: Path, with_hostile: bool) -> int:
    """The class in `folder`; the bytes of hostile members it holds (the zips' growth)."""
    folder.mkdir(parents=True)
    solution, starter = (EXERCISE / "solution.py").read_bytes(), (EXERCISE / "starter.py").read_bytes()
    extra = 0
    for i in range(STUDENTS):
        own = {"split_heads.py": starter if i % 3 == 2 else solution}
        data = zipped(own)
        if with_hostile and i < 24:
            clean = len(data)
            data = hostile(i % 4, own)
            extra += len(data) - clean
        (folder / f"student{i:02}_{100 + i}.zip").write_bytes(data)
    return extra


def measure(folder: Path, home: Path, jobs: int) -> tuple[float, float, int, dict[str, str]]:
    """Peak RSS (MiB) of the batch's own process, wall seconds, the report's rows, and each student's
    file's status."""
    out = home / "out.json"
    argv = [
        sys.executable,
        "-m",
        "tutor",
        "--home",
        str(home),
        "grade",
        "split-heads",
        "--batch",
        str(folder),
        "--format",
        "json",
        "--jobs",
        str(jobs),
    ]
    t0 = time.perf_counter()
    with out.open("w") as stdout:
        child = subprocess.Popen(
            argv, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=ROOT
        )
        peak = peak_rss_mib(child)
        _, err = child.communicate()
    wall = time.perf_counter() - t0
    if child.returncode != 0:
        raise SystemExit(f"exit {child.returncode}: {err.decode()[-2000:]}")
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]
    graded = {r["file"]: r["grade"]["status"] for r in rows if r["file"].endswith(".zip/split_heads.py")}
    return peak, wall, len(rows), graded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-intake-") as tmp:
        base = Path(tmp)
        build(base / "clean", False)
        extra = build(base / "hostile", True)
        print(
            f"{STUDENTS} zipped submissions; hostile members: {extra / 1e6:.1f} MB in 24 of them", flush=True
        )
        runs: dict[str, list[tuple[float, float]]] = {"clean": [], "hostile": []}
        rows: dict[str, int] = {}
        graded: dict[str, dict[str, str]] = {}
        for r in range(args.rounds):
            for variant in runs:
                home = base / f"home-{variant}-{r}"
                home.mkdir()
                peak, wall, rows[variant], graded[variant] = measure(base / variant, home, args.jobs)
                runs[variant].append((peak, wall))
                print(f"round {r + 1} {variant}: peak RSS {peak:.1f} MiB, {wall:.1f} s", flush=True)
        if graded["clean"] != graded["hostile"] or len(graded["clean"]) != STUDENTS:
            raise SystemExit(f"the students' files were graded differently: {graded}")
        med = {
            v: (statistics.median(p for p, _ in x), statistics.median(w for _, w in x))
            for v, x in runs.items()
        }
        print("\n| class | peak RSS | wall | rows |\n|---|---|---|---|")
        for variant, (peak, wall) in med.items():
            print(f"| {variant} | {peak:.1f} MiB | {wall:.1f} s | {rows[variant]:,} |")
        ratio_rss, ratio_wall = med["hostile"][0] / med["clean"][0], med["hostile"][1] / med["clean"][1]
        print(f"| hostile / clean | **{ratio_rss:.2f}×** | {ratio_wall:.2f}× | |")
        passed = sum(s == "pass" for s in graded["clean"].values())
        print(f"every student's file graded alike in both: {passed} pass, {STUDENTS - passed} fail")


if __name__ == "__main__":
    main()
