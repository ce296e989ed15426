"""Grade many files the course ships (references, starters, accepted and broken variants) in ONE
child process, so torch is imported once: `grade_trusted([(exercise, [paths]), ...])`. Only for
trusted files: there is no nonce, no tamper check and no per-file process; the learner's files
always go through harness.py. Used by the authoring check and the tests.

The child (this file run as a script) reads a JSON job on stdin: {"root", "items": [{"checks_file", "checks": [ids], "files": [paths]}]};
writes one JSON line per file to the original stdout: {"file", "import_error"} or {"file", "results"}.
What the files print goes to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.content.schema import Exercise
    from tutor.grading.result import GradeResult


def main() -> None:
    job = json.load(sys.stdin)
    sys.path.insert(0, job["root"])
    sys.dont_write_bytecode = True
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # prints from the graded files must not mix with the results

    import torch

    from tutor.grading.harness import _describe, load_module, run_check
    from tutor.grading.kit import CheckFailed

    torch.set_num_threads(1)
    for item in job["items"]:
        checks = load_module("_tutor_exercise_checks", item["checks_file"])
        functions = {cid: getattr(checks, f"check_{cid}") for cid in item["checks"]}
        for path in item["files"]:
            try:
                sub = load_module("submission", path)
            except BaseException as err:  # noqa: BLE001
                record = {"file": path, "import_error": _describe(err, path, 0)}
            else:
                record = {
                    "file": path,
                    "results": {
                        cid: run_check(fn, sub, path, 0, CheckFailed) for cid, fn in functions.items()
                    },
                }
            results.write(json.dumps(record) + "\n")
            results.flush()


def grade_trusted(items: list[tuple[Exercise, list[Path]]], lang: str = "en") -> dict[Path, GradeResult]:
    """{path: GradeResult} for the course's own files, all graded in one child process."""
    from tutor.grading.runner import ROOT, Limits, _child_env, _Protocol, build_result

    job = {
        "root": str(ROOT),
        "items": [
            {
                "checks_file": str((Path(ex.folder or ".") / "checks.py").resolve()),
                "checks": [c.id for c in ex.checks],
                "files": [str(Path(f).resolve()) for f in files],
            }
            for ex, files in items
        ],
    }
    budget = sum(ex.timeout_s * len(files) for ex, files in items) + 30
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-I", str(__file__)],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=budget,
            env=_child_env(Path(tempfile.gettempdir())),
            cwd=tempfile.gettempdir(),
        )
        stdout = proc.stdout
        stopped = f"exit {proc.returncode}: " + (proc.stderr.strip().splitlines() or ["no output"])[-1]
    except subprocess.TimeoutExpired as err:
        # a file that loops: the ones graded before it keep their grades, the rest say why they have none
        raw = err.stdout or b""
        stdout = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        stopped = f"timed out after {budget:g} s"
    seconds = time.monotonic() - t0
    lines = [line for line in stdout.splitlines() if line.endswith("}")]  # whole records only
    by_file = {json.loads(line)["file"]: json.loads(line) for line in lines}
    out: dict[Path, GradeResult] = {}
    limits = Limits(timeout_s=budget)
    for ex, files in items:
        for f in files:
            rec = by_file.get(str(Path(f).resolve()))
            proto = _Protocol("", [c.id for c in ex.checks])
            proto.started = proto.loading = True
            if rec is None:
                proto.import_error = f"the trusted grader stopped ({stopped})"
            elif "import_error" in rec:
                proto.import_error = rec["import_error"]
            else:
                proto.imported = True
                proto.results = {
                    cid: {"status": st, "message": msg} for cid, (st, msg) in rec["results"].items()
                }
            proto.done = True
            out[Path(f)] = build_result(ex, proto, None, False, "", seconds, limits, lang)
    return out


if __name__ == "__main__":
    main()
