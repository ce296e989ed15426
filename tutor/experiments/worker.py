"""A worker of a training job's pool (pool.py): `python -m tutor.experiments.worker THREADS`.

It reads one task a line on stdin ({"id", "task", "args"}), runs it with `THREADS` torch threads and writes
its events as JSON lines on stdout, each with the task's id: what the task emits while it works (progress),
then {"event": "done", "result"} or {"event": "failed", "message", "said"} (`said`: an ExperimentError's
catalogue key and values, so the job words it in the learner's language). It ends with its input or with
the process that started it. Data a task loads (the corpus, its encoding) stays loaded for the next one.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any


def _write(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    from tutor.proc.spawn import die_with_parent

    die_with_parent()
    threads = int(argv[0]) if argv else 1
    import torch

    from tutor.errors import TutorError
    from tutor.experiments.pool import task_function

    torch.set_num_threads(threads)
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        ident = task["id"]

        def emit(event: dict[str, Any], ident: Any = ident) -> None:
            _write({**event, "id": ident})

        try:
            result = task_function(task["task"])(task["args"], emit, None)
        except TutorError as err:
            _write(
                {
                    "id": ident,
                    "event": "failed",
                    "message": str(err),
                    "said": {"key": err.key, "args": err.values},
                }
            )
            continue
        except Exception as err:  # reported as a line with its trace on stderr, never a dead worker
            traceback.print_exc(file=sys.stderr)
            _write({"id": ident, "event": "failed", "message": f"{type(err).__name__}: {err}"})
            continue
        _write({"id": ident, "event": "done", "result": result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
