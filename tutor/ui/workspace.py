"""Grading the learner's file from the app: `python -m tutor grade ID FILE --json` in a child
process started from asyncio (no Textual here).

The grade command records the submission itself. The child runs through tutor.childproc, in a
session of its own, so cancelling (leaving, quitting) stops it, its judge and the judge's worker.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tutor.childproc import AsyncChild, ChildTimeout
from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.result import GradeResult
from tutor.settings import GRADE_STARTUP_SLACK_S, tutor_child_env
from tutor.texts import say


class GradeFailed(TutorError):
    """The grader itself could not produce a verdict (not: the learner's code failed)."""


class GradeTimedOut(GradeFailed):
    def __init__(self, seconds: float):
        super().__init__(f"no verdict after {seconds:.0f} s")
        self.seconds = seconds


def grade_command(ex: Exercise, file: Path, home: Path, lang: str, lessons_dir: Path | None) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "tutor",
        "grade",
        ex.id,
        str(file),
        "--json",
        "--home",
        str(home),
        "--lang",
        lang,
    ]
    if lessons_dir is not None:
        cmd += ["--lessons", str(lessons_dir)]
    return cmd


async def grade(
    ex: Exercise, file: Path, home: Path, lang: str, lessons_dir: Path | None = None
) -> GradeResult:
    """Grade `file` in a child process; GradeFailed when no verdict comes back. Cancelling the task
    (the learner left, or quit) stops the child and everything it started."""
    child = await AsyncChild.start(grade_command(ex, file, home, lang, lessons_dir), env=tutor_child_env())
    limit = ex.timeout_s + GRADE_STARTUP_SLACK_S
    verdict = None
    try:
        async for event in child.events(timeout=limit):
            if "exercise" in event and "checks" in event:
                verdict = event
    except ChildTimeout:
        raise GradeTimedOut(limit) from None
    finally:
        await child.stop()
    try:
        return GradeResult.model_validate(verdict)
    except ValueError:
        tail = "\n".join(child.stderr_tail().strip().splitlines()[-4:])
        raise GradeFailed(tail or say("grade.stop.no_result", lang, code=str(child.returncode))) from None
