"""Where a grade's judge comes from: started cold, started ahead of its job, or forked by a warm one.

Light on purpose: a command about to grade one file imports this first and starts its judge, which
imports torch (about a second) while this process imports the rest of the grading code and loads the
course (tutor.commands.grade).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tutor.proc.child import SyncChild
from tutor.proc.forkserver import ForkedChild, ForkServer

JUDGE = Path(__file__).with_name("judging") / "judge.py"  # started as a script, by path

# what the judge's environment keeps of ours: where programs and libraries are, and the locale.
# Nothing else: the worker is forked from the judge, so a secret in the judge's environment block
# would be in the worker's memory too.
_JUDGE_ENV = ("PATH", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT")


def _judge_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _JUDGE_ENV}
    env.update(PYTHONIOENCODING="utf-8", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


class WarmJudge:
    """A judge that stays warm: a zygote process (judge.py --zygote) that has imported torch and the
    trusted grading code, and never anything of a learner's. Each job gets a fresh judge forked from
    it, which builds a fresh box for its worker as a cold judge does, so no state crosses from one
    submission to the next; a grade costs a fork instead of starting Python and torch. For whatever
    grades more than once: `grade --watch`, `--batch`, the app, `python -m tutor check`.

        with WarmJudge() as warm:
            results = grade_many(ex, files, warm=warm, jobs=2)
    """

    def __init__(self) -> None:
        self.server = ForkServer(
            [sys.executable, "-I", str(JUDGE), "--zygote"], env=_judge_env(), cwd=tempfile.gettempdir()
        )

    def judge(self) -> ForkedChild:
        return self.server.fork()

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> WarmJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EarlyJudge:
    """A cold judge started ahead of its job, so that it imports torch while this process loads the
    course; the first grade given it as `warm` uses it, a later one gets a judge started cold. For a
    command about to grade one file; closing it ends the judge if no grade took it.

        with EarlyJudge() as early:
            ex = open_course(lessons).exercise("rope")
            result = grade_file(ex, path, warm=early)
    """

    def __init__(self) -> None:
        self._child: SyncChild | None = start_judge()

    def judge(self) -> SyncChild:
        child, self._child = self._child, None
        return child if child is not None else start_judge()

    def close(self) -> None:
        if self._child is not None:
            self._child.close()
            self._child = None

    def __enter__(self) -> EarlyJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# where a grade's judge comes from: forked by a warm judge, or started ahead (None: started cold)
JudgeSource = WarmJudge | EarlyJudge


def start_judge() -> SyncChild:
    return SyncChild([sys.executable, "-I", str(JUDGE)], env=_judge_env(), cwd=tempfile.gettempdir())
