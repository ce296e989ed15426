"""What the CLI and the app do with an exercise: workspace copy, grading + recording, hints, solution.

ex = load_course(lessons_dir).exercise("rope")
path, created = start_exercise(home, ex, "de")    # the German starter; never overwrites the learner's work
result = grade(ex, path, lang="de", store=Store(home), on_event=print)
text = reveal_hint(store, ex, 1, "de")            # general hint 1 (recorded)
code = solution_text(store, ex, "zh")             # the Chinese reference, only after a recorded pass
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import threading
import time
from pathlib import Path

from tutor.content.schema import Exercise, pick
from tutor.content.variants import exercise_file
from tutor.errors import TutorError
from tutor.grading.result import GradeResult
from tutor.grading.runner import (
    Limits,
    OnEvent,
    OwnTraining,
    WarmJudge,
    error_result,
    grade_code,
    train_own_model,
)
from tutor.settings import GRADE_MAX_SOURCE_BYTES, GRADE_SAVE_TRIES
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
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(starter_file(ex, lang).read_bytes())
    tmp.replace(target)
    return target, backup


def read_submission(path: Path, limit: int = GRADE_MAX_SOURCE_BYTES, lang: str = "en") -> bytes:
    """The bytes of a regular file of at most `limit` bytes. The file is opened once, without
    blocking, and checked on the open descriptor: a FIFO, a device or a link to one is refused
    before anything is read, and a file swapped after the check is not the one read. What is wrong
    is said in `lang`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise TutorError(say("grade.file.missing", lang, path=str(path))) from None
    except IsADirectoryError:
        raise TutorError(say("grade.file.folder", lang, path=str(path))) from None
    except OSError as err:
        raise _unreadable(str(path), err, lang) from None
    return _read_open(fd, str(path), limit, lang)


def read_entry(
    folder_fd: int, name: str, shown: str, limit: int = GRADE_MAX_SOURCE_BYTES, lang: str = "en"
) -> bytes:
    """The bytes of the regular file `name` directly in the open folder `folder_fd`, never through a
    link: a link (to anything) is refused without being followed, and the open descriptor is checked
    again, so an entry swapped for a link, a FIFO or a device after it was listed is refused too.
    Messages name the entry as `shown` (its escaped name), in `lang`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags | getattr(os, "O_NOCTTY", 0), dir_fd=folder_fd)
    except FileNotFoundError:
        raise TutorError(say("grade.file.missing", lang, path=shown)) from None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link (EMLINK on the BSDs)
            raise TutorError(say("grade.file.link", lang, path=shown)) from None
        try:  # a socket cannot be opened at all (ENXIO): say what the entry is
            mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
        except OSError:
            mode = stat.S_IFREG
        raise (entry_problem(mode, shown, lang) or _unreadable(shown, err, lang)) from None
    return _read_open(fd, shown, limit, lang)


# what an entry is when it is not a regular file: the key of its message under grade.file
_KINDS = ((stat.S_ISLNK, "link"), (stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "device"),
          (stat.S_ISBLK, "device"), (stat.S_ISSOCK, "socket"))  # fmt: skip


def entry_problem(mode: int, shown: str, lang: str = "en") -> TutorError | None:
    """Why a file of this `st_mode` is not graded (it is not a regular file), or None."""
    if stat.S_ISREG(mode):
        return None
    kind = next((kind for test, kind in _KINDS if test(mode)), "not_regular")
    return TutorError(say(f"grade.file.{kind}", lang, path=shown))


def _unreadable(shown: str, err: OSError, lang: str) -> TutorError:
    return TutorError(say("grade.file.unreadable", lang, path=shown, error=str(err.strerror or err)))


def _read_open(fd: int, shown: str, limit: int, lang: str) -> bytes:
    """At most `limit` bytes of the regular file open as `fd` (closed here), checked on the
    descriptor itself."""
    try:
        problem = entry_problem(os.fstat(fd).st_mode, shown, lang)
        if problem is not None:
            raise problem
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as err:
        raise _unreadable(shown, err, lang) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise TutorError(say("grade.file.too_large", lang, path=shown, kb=str(limit // 2**10)))
    return data


def grade_source(
    ex: Exercise,
    source: bytes,
    display_name: str,
    *,
    lang: str = "en",
    store=None,
    on_event: OnEvent | None = None,
    limits: Limits | None = None,
    warm: WarmJudge | None = None,
    cancel: threading.Event | None = None,
) -> GradeResult:
    """Grade bytes (already read, so the graded text is the hashed text); forked by `warm` when given."""
    if ex.kind == "runs":
        from tutor.grading.runs import grade_runs, stored_runs

        return grade_runs(ex, source, display_name, stored_runs(store), lang=lang)
    try:
        text = source.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        return error_result(
            ex, say("grade.file.not_utf8", lang, name=display_name, byte=str(err.start)), lang
        )
    return grade_code(
        ex, text, display_name, lang=lang, on_event=on_event, limits=limits, warm=warm, cancel=cancel
    )


def grade(
    ex: Exercise,
    path: Path,
    *,
    lang: str = "en",
    store=None,
    record: bool = True,
    on_event: OnEvent | None = None,
    limits: Limits | None = None,
    warm: WarmJudge | None = None,
    cancel: threading.Event | None = None,
) -> GradeResult:
    """Grade the file at `path`; with a store, record the submission (time, sha256, verdict, checks).
    A store that stays busy does not cost the verdict: `result.saved` is False and says why."""
    source = read_submission(path, lang=lang)
    result = grade_source(ex, source, str(path), lang=lang, store=store, on_event=on_event, limits=limits,
                          warm=warm, cancel=cancel)  # fmt: skip
    if store is not None and record:
        result.saved = _save(store, ex, source, result)
    return result


def train_own(
    ex: Exercise,
    path: Path,
    *,
    steps: int | None = None,
    lang: str = "en",
    on_event: OnEvent | None = None,
    warm: WarmJudge | None = None,
    cancel: threading.Event | None = None,
) -> OwnTraining:
    """Train the model the file at `path` builds (runner.train_own_model), the file read as `grade`
    reads it; for a file that passes."""
    text = read_submission(path, lang=lang).decode("utf-8", "replace").removeprefix("\ufeff")
    return train_own_model(ex, text, str(path), steps=steps, lang=lang, on_event=on_event, warm=warm,
                           cancel=cancel)  # fmt: skip


def _save(store, ex: Exercise, source: bytes, result: GradeResult) -> bool:
    from tutor.progress.db import StoreBusy

    for _ in range(GRADE_SAVE_TRIES):
        try:
            store.record_submission(
                ex.id,
                sha256=hashlib.sha256(source).hexdigest(),
                status=result.status,
                score=result.score,
                max_score=result.max_score,
                checks=[c.model_dump(mode="json") for c in result.checks],
                hints_revealed=len({h.hint for h in store.hint_reveals(ex.id)}),
            )
            return True
        except StoreBusy:
            continue
    return False


def reveal_hint(store, ex: Exercise, number: int | None, lang: str) -> tuple[int, str]:
    """General hint `number` (1-based; None = the next one not yet revealed), recorded in the store."""
    if not ex.hints:
        raise TutorError(say("grade.help.none", lang, id=ex.id))
    seen = {r.hint for r in store.hint_reveals(ex.id)} if store is not None else set()
    if number is None:
        number = next((i for i in range(1, len(ex.hints) + 1) if str(i - 1) not in seen), len(ex.hints))
    if not 1 <= number <= len(ex.hints):
        raise TutorError(say("grade.help.range", lang, id=ex.id, n=str(len(ex.hints)), number=str(number)))
    if store is not None:
        store.record_hint(ex.id, str(number - 1))
    return number, pick(ex.hints[number - 1], lang)


def has_passed(store, ex: Exercise) -> bool:
    return store is not None and ex.id in store.passed_exercises()


def solution_text(store, ex: Exercise, lang: str = "en") -> str:
    """The reference solution in `lang`, only once the learner has a recorded pass."""
    if not has_passed(store, ex):
        raise TutorError(say("grade.help.solution_locked", lang, id=ex.id))
    return solution_file(ex, lang).read_text(encoding="utf-8")
