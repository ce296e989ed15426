"""Grading the learner's file from the app: `python -m tutor grade ID FILE --json` in a child
process started from asyncio (no Textual here).

The grade command records the submission itself. The child runs in its own process group, so
cancelling (leaving, quitting) kills it and the sandboxed process it started.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from tutor.content.schema import Exercise
from tutor.grading.result import GradeResult
from tutor.paths import tutor_child_env

STARTUP_SLACK_S = 30.0  # child start + torch import on a busy 2-core machine, beyond the exercise's own limit


class GradeFailed(Exception):
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
    """Grade `file` in a child process; GradeFailed when no verdict comes back."""
    proc = await asyncio.create_subprocess_exec(
        *grade_command(ex, file, home, lang, lessons_dir),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=tutor_child_env(),
        start_new_session=True,  # its own process group: killing it kills the sandbox child too
    )
    limit = ex.timeout_s + STARTUP_SLACK_S
    try:
        out, err = await asyncio.wait_for(proc.communicate(), limit)
    except TimeoutError:
        await _kill(proc)
        raise GradeTimedOut(limit) from None
    except BaseException:  # cancelled (the learner left, or quit): leave no child behind
        await _kill(proc)
        raise
    text = out.decode("utf-8", "replace").strip()
    try:
        return GradeResult.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValueError):
        tail = "\n".join(err.decode("utf-8", "replace").strip().splitlines()[-4:])
        raise GradeFailed(
            tail or f"the grader exited with code {proc.returncode} and printed no result"
        ) from None


async def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
