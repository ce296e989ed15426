"""Which system calls the boxed grading worker makes, measured: every course file of every code exercise
graded under strace, the calls counted from the moment the worker's allow-list is loaded.

    python benchmarks/box_syscalls.py [--exercise ID ...]

Needs strace (Debian: apt-get install strace) and runs as any user. For each call it prints how often
the workers made it and how often the filter refused it (EPERM), and for the calls the filter allows
only with some arguments (fcntl, ioctl, prctl, madvise, clone) which commands, flags or hints were made;
calls the allow-list holds that no course file made are listed after, as what the allow-list adds
beyond the measurement (the companions of measured calls, and what learners' code commonly does). A course file that needed a call the list
refuses would fail its grade; tests/test_grading_exercises.py grades them all in the box.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# libseccomp loads the filter with seccomp(SECCOMP_SET_MODE_FILTER, ...) = 0, the worker's last step
# (its earlier seccomp calls probe the kernel and fail)
LOADED = re.compile(r"^seccomp\(SECCOMP_SET_MODE_FILTER.*= 0$")
CALL = re.compile(r"^([a-z0-9_]+)\(")
REFUSED = re.compile(r"= -1 EPERM")
# the argument the filter reads, by call: its position in strace's argument list
FILTERED = {"fcntl": 1, "ioctl": 1, "prctl": 0, "madvise": 2, "clone": 0}


def course_files(ex) -> list[Path]:
    folder = Path(ex.folder)
    files = [folder / "solution.py", folder / "starter.py"]
    return files + sorted((folder / "broken").glob("*.py")) + sorted((folder / "accepted").glob("*.py"))


def trace(ex_id: str, path: Path, out: Path, home: str) -> None:
    subprocess.run(
        [
            "strace",
            "-f",
            "-ff",
            "-qq",
            "-o",
            str(out / "t"),
            sys.executable,
            "-m",
            "tutor",
            "grade",
            ex_id,
            str(path),
            "--json",
            "--home",
            home,
        ],
        capture_output=True,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def count(out: Path) -> tuple[collections.Counter, collections.Counter, collections.Counter]:
    made, refused, argued = collections.Counter(), collections.Counter(), collections.Counter()
    for file in out.glob("t.*"):
        after = False
        for line in file.read_text(errors="replace").splitlines():
            if LOADED.match(line):
                after = True
                continue
            m = CALL.match(line)
            if after and m:
                made[m.group(1)] += 1
                if REFUSED.search(line):
                    refused[m.group(1)] += 1
                if m.group(1) in FILTERED:
                    args = line[m.end() :].split(", ")
                    position = FILTERED[m.group(1)]
                    argued[(m.group(1), args[position] if position < len(args) else "?")] += 1
    return made, refused, argued


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", action="append", help="only these exercises (default: every code one)")
    args = parser.parse_args()
    if shutil.which("strace") is None:
        sys.exit("strace is not installed (apt-get install strace)")

    from tutor.content.loader import load_course
    from tutor.grading.box import seccomp

    course = load_course(ROOT / "tutor" / "lessons")
    made, refused, argued = collections.Counter(), collections.Counter(), collections.Counter()
    graded = 0
    with tempfile.TemporaryDirectory() as home:
        for ex in course.exercises():
            if ex.kind != "code" or (args.exercise and ex.id not in args.exercise):
                continue
            for path in course_files(ex):
                with tempfile.TemporaryDirectory() as out:
                    trace(ex.id, path, Path(out), home)
                    m, r, a = count(Path(out))
                made.update(m)
                refused.update(r)
                argued.update(a)
                graded += 1
                print(f"  {ex.id}: {path.relative_to(ROOT)}: {sum(m.values())} calls", file=sys.stderr)
    print(f"{graded} course files graded; system calls of the boxed workers after the filter was loaded:")
    print(f"{'call':<24} {'made':>8} {'refused':>8}")
    for name, n in made.most_common():
        print(f"{name:<24} {n:>8} {refused[name]:>8}")
    print("the filtered calls' commands, flags and hints as made:")
    for (name, arg), n in sorted(argued.items()):
        print(f"  {name}({arg}, ...) {n}")
    unused = sorted(seccomp.allowed_names() - set(made))
    print("allowed but not made by any course file:", ", ".join(unused))


if __name__ == "__main__":
    main()
