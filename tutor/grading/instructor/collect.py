"""What an instructor's batch holds, read as the LMSs lay their downloads out: every *.py in the folder,
in its subfolders (Moodle's "download all" makes a folder per student) and in zip files (a download
left zipped, or a student's own zip), in name order.

    found = collect(path, lang, shard)   # [Found(name, sha256, source or None, error or None)]

`path` is a folder or a .zip file. A name is the file's path under `path` with "/" between its parts,
a zip's members under the zip's own name (`subs.zip/Ann_1_assignsubmission_file_/rope.py`).

Every part is hostile input, as tutor.grading.instructor.batch says: folders are walked through descriptors,
never through a link (a linked folder is not entered; a linked *.py is an error row); a file is read
with tutor.grading.safe_read's checks; a zip's member that is a link, encrypted, larger than a
submission may be (its header's size, and its bytes read no further than that), or named outside the
zip ("/x.py", "../x.py") is an error row, never extracted; a zip that is not one is an error row
(or, given as `--batch`, a usage error). macOS's "__MACOSX" folders and hidden folders are skipped.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tutor.errors import TutorError
from tutor.grading.instructor.names import shown_name
from tutor.grading.safe_read import Refused, entry_problem, read_entry, read_submission
from tutor.settings import GRADE_MAX_SOURCE_BYTES
from tutor.texts import say

MAX_DEPTH = 6  # folders below the batch's own that are walked
MAX_ZIP_BYTES = 2 * 2**30  # a class's zipped download, read whole from the disk
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass
class Found:
    name: str  # the path under the batch, "/" between parts, as on disk (batch.shown_name shows it)
    sha256: str | None
    source: bytes | None  # None: not graded (`error` says why)
    error: str | None = None
    mtime: float | None = None  # the file's (a zip member's: its date in the zip, read as local time)


def collect(path: Path, lang: str, keep=lambda name: True) -> list[Found]:
    """Every *.py under `path` (a folder or a zip) whose name `keep` keeps, in name order."""
    found: list[Found] = []
    if path.suffix.lower() == ".zip" and path.is_file():
        data = read_submission(path, MAX_ZIP_BYTES, lang)
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError) as err:
            raise TutorError(
                say("grade.batch.bad_zip", lang, path=shown_name(str(path)), error=str(err))
            ) from None
        with archive:
            _members(archive, "", keep, found, lang)
    else:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            raise TutorError(say("grade.batch.not_folder", lang, folder=shown_name(str(path)))) from None
        except OSError as err:
            raise TutorError(say("grade.file.unreadable", lang, path=shown_name(str(path)),
                                 error=str(err.strerror or err))) from None  # fmt: skip
        try:
            _walk(fd, "", 0, keep, found, lang)
        finally:
            os.close(fd)
    found.sort(key=lambda f: f.name)
    return found


def _walk(folder_fd: int, prefix: str, depth: int, keep, found: list[Found], lang: str) -> None:
    with os.scandir(folder_fd) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        name = prefix + entry.name
        shown = shown_name(name)
        try:
            info = entry.stat(follow_symlinks=False)
            mode = info.st_mode
        except OSError as err:  # gone since the listing
            if entry.name.endswith(".py") and keep(name):
                found.append(Found(name, None, None, say("grade.file.unreadable", lang, path=shown,
                                                         error=str(err.strerror or err))))  # fmt: skip
            continue
        if entry.name.endswith(".py"):
            if keep(name):
                found.append(_read(folder_fd, entry.name, name, mode, lang))
                found[-1].mtime = info.st_mtime
        elif entry.name.lower().endswith(".zip") and stat.S_ISREG(mode):
            _zip_entry(folder_fd, entry.name, name, keep, found, lang)
        elif stat.S_ISDIR(mode) and depth < MAX_DEPTH and not _skipped_folder(entry.name):
            try:
                fd = os.open(entry.name, _DIR_FLAGS, dir_fd=folder_fd)
            except OSError:  # swapped for a link since the listing, or unreadable: nothing to grade in it
                continue
            try:
                _walk(fd, name + "/", depth + 1, keep, found, lang)
            finally:
                os.close(fd)


def _skipped_folder(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _read(folder_fd: int, entry: str, name: str, mode: int, lang: str) -> Found:
    shown = shown_name(name)
    try:
        problem = entry_problem(mode, shown, lang)
        if problem is not None:
            raise problem
        source = read_entry(folder_fd, entry, shown, lang=lang)
    except Refused as err:
        return Found(name, err.sha256, None, str(err))
    except TutorError as err:
        return Found(name, None, None, str(err))
    return Found(name, hashlib.sha256(source).hexdigest(), source)


def _zip_entry(folder_fd: int, entry: str, name: str, keep, found: list[Found], lang: str) -> None:
    """The *.py members of the zip `entry` of the folder, or one error row for the zip."""
    shown = shown_name(name)
    try:
        data = read_entry(folder_fd, entry, shown, limit=MAX_ZIP_BYTES, lang=lang)
        archive = zipfile.ZipFile(io.BytesIO(data))
    except TutorError as err:
        if keep(name):
            found.append(Found(name, getattr(err, "sha256", None), None, str(err)))
        return
    except (zipfile.BadZipFile, OSError) as err:
        if keep(name):
            sha = hashlib.sha256(data).hexdigest()
            found.append(Found(name, sha, None, say("grade.batch.bad_zip", lang, path=shown, error=str(err))))
        return
    with archive:
        _members(archive, name + "/", keep, found, lang)


def _members(archive: zipfile.ZipFile, prefix: str, keep, found: list[Found], lang: str) -> None:
    for info in archive.infolist():
        inner = info.filename.replace("\\", "/")
        parts = inner.split("/")
        if info.is_dir() or not inner.endswith(".py") or "__MACOSX" in parts or parts[-1].startswith("._"):
            continue
        name = prefix + inner
        if not keep(name):
            continue
        shown = shown_name(name)
        kind = (info.external_attr >> 16) & 0o170000
        if inner.startswith("/") or ".." in parts or "" in parts[:-1]:
            found.append(Found(name, None, None, say("grade.batch.zip_outside", lang, path=shown)))
        elif kind and kind != stat.S_IFREG:
            found.append(Found(name, None, None, str(entry_problem(kind, shown, lang))))
        elif info.flag_bits & 0x1:
            found.append(Found(name, None, None, say("grade.batch.zip_encrypted", lang, path=shown)))
        elif info.file_size > GRADE_MAX_SOURCE_BYTES:
            message = say("grade.file.too_large", lang, path=shown, kb=str(GRADE_MAX_SOURCE_BYTES // 2**10))
            found.append(Found(name, None, None, message))
        else:
            try:
                with archive.open(info) as fh:
                    source = fh.read(GRADE_MAX_SOURCE_BYTES + 1)
            except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as err:
                found.append(
                    Found(name, None, None, say("grade.batch.bad_zip", lang, path=shown, error=str(err)))
                )
                continue
            if len(source) > GRADE_MAX_SOURCE_BYTES:  # the header lied about the size
                message = say(
                    "grade.file.too_large", lang, path=shown, kb=str(GRADE_MAX_SOURCE_BYTES // 2**10)
                )
                found.append(Found(name, None, None, message))
                continue
            when = time.mktime((*info.date_time, 0, 0, -1))
            found.append(Found(name, hashlib.sha256(source).hexdigest(), source, None, when))
