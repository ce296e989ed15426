"""The exercise's files for a learner: the learner's copy in the workspace (started from the starter in
their language, put back on reset), and the reference solution, shown once they have passed.

ex = load_course(lessons_dir).exercise("rope")
path, created = start_exercise(home, ex, "de")    # the German starter; never overwrites the learner's work
path, backup = reset_exercise(home, ex, "de")     # the starter again; the learner's file kept as a backup
code = solution_text(store, ex, "zh")             # the Chinese reference, only after a recorded pass
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from tutor.atomicio import atomic_write
from tutor.content.schema import Exercise
from tutor.content.variants import exercise_file
from tutor.errors import TutorError
from tutor.texts import say


def workspace_file(home: Path, ex: Exercise) -> Path:
    """The learner's copy: HOME/workspace/ID/FILE_NAME."""
    return Path(home) / "workspace" / ex.id / ex.file_name


def starter_file(ex: Exercise, lang: str = "en") -> Path:
    """The starter in `lang` (starter.de.py beside starter.py), the English one when there is none."""
    return exercise_file(ex, "starter", lang)


def solution_file(ex: Exercise, lang: str = "en") -> Path:
    """The reference in `lang` (solution.zh.py beside solution.py; solution.md for a runs exercise),
    the English one when there is none."""
    return exercise_file(ex, "solution", lang)


def start_exercise(home: Path, ex: Exercise, lang: str = "en") -> tuple[Path, bool]:
    """Copy the starter in `lang` into the workspace unless the learner's file is already there (in
    whatever language it was started)."""
    target = workspace_file(home, ex)
    if target.exists():
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    # exclusive create: a file appearing meanwhile (another tutor window) is not overwritten either
    try:
        with open(target, "xb") as fh:
            fh.write(starter_file(ex, lang).read_bytes())
    except FileExistsError:
        return target, False
    return target, True


def reset_exercise(home: Path, ex: Exercise, lang: str = "en") -> tuple[Path, Path | None]:
    """Put the starter in `lang` back; the learner's previous file is kept beside it as a backup."""
    target = workspace_file(home, ex)
    backup = None
    if target.exists():
        backup = target.with_name(f"{target.name}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(target, backup)
    starter = starter_file(ex, lang).read_bytes()
    atomic_write(target, lambda fh: fh.write(starter))
    return target, backup


def has_passed(store, ex: Exercise) -> bool:
    return store is not None and ex.id in store.passed_exercises()


def solution_text(store, ex: Exercise, lang: str = "en") -> str:
    """The reference solution in `lang`, only once the learner has a recorded pass."""
    if not has_passed(store, ex):
        raise TutorError(say("grade.help.solution_locked", lang, id=ex.id))
    return solution_file(ex, lang).read_text(encoding="utf-8")
