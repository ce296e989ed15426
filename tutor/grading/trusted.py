"""Child side of `runner.grade_trusted`: grade many files the course ships (references, starters,
broken variants) in ONE process, so torch is imported once. Only for trusted files: there is no
nonce, no tamper check and no per-file process; the learner's files always go through harness.py.

Reads a JSON job on stdin: {"root", "items": [{"checks_file", "checks": [ids], "files": [paths]}]};
writes one JSON line per file to the original stdout: {"file", "import_error"} or {"file", "results"}.
What the files print goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys


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


if __name__ == "__main__":
    main()
