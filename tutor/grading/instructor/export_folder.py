"""An export's folder, replaced whole: the files are written into a new folder beside it (mode 0700,
each file 0600), which then takes the place of the old one, so an export never mixes with an earlier
one (no feedback file of a student who left the roster stays behind) and a reader never sees half of it.

    replace_folder(out, write, force=args.force, lang="de")   # write(folder) fills the new folder

Each student's own file (feedback, results.json) goes through a RowWriter: written atomically, and a
failure, of the row's text or of the disk, is reported (RowWriter.problems) and the rest written, so one row
never stops the class's export.

`out` may be missing or empty. A folder holding an earlier export (its `export.json` says so, or it
has the checks.csv and gradebook.csv of an export written before there was one) is replaced with
`force` and refused without it; a folder holding anything else is never touched: the instructor
chooses another.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from tutor.errors import TutorError
from tutor.texts import say

MARKER = "export.json"
FORMAT = "attention-tutor-export"


def is_export(folder: Path) -> bool:
    marker = folder / MARKER
    if marker.is_file() and not marker.is_symlink():
        try:
            return json.loads(marker.read_text(encoding="utf-8")).get("format") == FORMAT
        except (OSError, ValueError, AttributeError):
            return False
    return (folder / "checks.csv").is_file() and (folder / "gradebook.csv").is_file()


def replace_folder(out: Path, write: Callable[[Path], None], *, force: bool, lang: str) -> None:
    from tutor.grading.instructor.batch import shown_name

    shown = shown_name(str(out))
    try:
        if out.is_symlink() or (out.exists() and not out.is_dir()):
            raise TutorError(say("grade.export.not_folder", lang, folder=shown))
        held = sorted(os.listdir(out)) if out.is_dir() else []
        if held:
            files = shown_name(", ".join(held[:3]) + (", …" if len(held) > 3 else ""))
            if not is_export(out):
                raise TutorError(say("grade.export.not_export", lang, folder=shown, files=files))
            if not force:
                raise TutorError(say("grade.export.exists", lang, folder=shown, files=files))
        out.parent.mkdir(parents=True, exist_ok=True)
        new = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".new", dir=out.parent))
    except OSError as err:
        where = shown_name(str(err.filename or out))
        raise TutorError(
            say("grade.file.cannot_write", lang, path=where, error=str(err.strerror or err))
        ) from None
    try:
        write(new)
        if out.is_dir():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rename(out, old / "export")  # the old export aside, then the new one in its place
            os.rename(new, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(new, out)
    except OSError as err:
        shutil.rmtree(new, ignore_errors=True)
        where = shown_name(str(err.filename or out))
        raise TutorError(
            say("grade.file.cannot_write", lang, path=where, error=str(err.strerror or err))
        ) from None
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise


class RowWriter:
    """`writer(path, make)`: one student's file `path` (in a folder of the new export `out`) holding
    `make()`, written atomically; a failure is kept in `problems` (and `lost`), never raised."""

    def __init__(self, out: Path, lang: str) -> None:
        self.out, self.lang = out, lang
        self.lost: set[Path] = set()
        self.problems: list[str] = []

    def __call__(self, path: Path, make: Callable[[], str]) -> None:
        from tutor.atomicio import atomic_write_text
        from tutor.grading.instructor.batch import shown_name

        try:
            if path.parent.parent != self.out:  # never: ids are checked, and names made from them
                raise ValueError(say("grade.roster.id.separator", self.lang))
            atomic_write_text(path, make())
        except Exception as err:  # noqa: BLE001  (one row never stops the class's export)
            self.lost.add(path)
            where = shown_name(str(path.relative_to(self.out)))
            error = (err.strerror if isinstance(err, OSError) else None) or str(err) or type(err).__name__
            self.problems.append(say("grade.export.row_failed", self.lang, file=where, error=error))
