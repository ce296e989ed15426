"""Reading the files the tutor is handed, which it does not trust: a learner's file (a regular file of
bounded size, never a FIFO or a device, in a batch never through a link, symbolic or hard) and an
instructor's (a roster, a shard report). Every way a file cannot be read is a TutorError that names it,
in `lang`; an entry of a folder that is refused is a Refused, with the sha256 of its bytes where they
could be read safely (a regular file of its own that is too large), else None.

source = read_submission(path, lang="de")               # bytes of at most GRADE_MAX_SOURCE_BYTES
source = read_entry(folder_fd, name, shown, lang="de")  # an entry of an open folder, never a link
with open_entry(folder_fd, name, shown, "de") as fh:     # the same checks, read by the caller (a zip)
text = read_instructor_file(path, shown, "de")          # a roster or a shard report, of any size
text = decode_source(source, shown, "de")               # a Python file's bytes as Python reads them
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import io
import os
import re
import stat
import tokenize
from pathlib import Path
from typing import BinaryIO

from tutor.errors import TutorError
from tutor.settings import GRADE_MAX_SOURCE_BYTES
from tutor.texts import say

HASH_LIMIT = 256 * 2**20  # bytes of a refused file that are hashed for its row; beyond it, no hash


class Refused(TutorError):
    """An entry of a folder that is not graded: why (the message), and the sha256 of its bytes where
    they could be read safely (a regular file with no other name, too large to grade), else None."""

    sha256: str | None = None


def _refused(message: str, sha256: str | None = None) -> Refused:
    err = Refused(message)
    err.sha256 = sha256
    return err


def read_submission(path: Path, limit: int = GRADE_MAX_SOURCE_BYTES, lang: str = "en") -> bytes:
    """The bytes of a regular file of at most `limit` bytes. The file is opened once, without
    blocking, and checked on the open descriptor: a FIFO, a device or a link to one is refused
    before anything is read, and a file swapped after the check is not the one read. What is wrong
    is said in `lang`."""
    return _read_path(path, str(path), limit, lang)


def read_instructor_file(path: Path, shown: str, lang: str = "en", encoding: str = "utf-8") -> str:
    """An instructor's file (a roster, a shard report) as text, read as a learner's file is but of any
    size; messages name it as `shown`."""
    data = _read_path(path, shown, None, lang)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise TutorError(say("grade.file.not_utf8", lang, name=shown, byte=str(err.start))) from None


def open_submission(path: Path, shown: str, lang: str = "en") -> BinaryIO:
    """`path` open for reading, checked as read_submission checks it (a regular file, opened once
    without blocking, checked on the descriptor), for a caller that reads it in pieces (a zip)."""
    return _checked(_open_path(path, shown, lang), shown, lang)


def _read_path(path: Path, shown: str, limit: int | None, lang: str) -> bytes:
    return _read_open(_open_path(path, shown, lang), shown, limit, lang)


def _open_path(path: Path, shown: str, lang: str) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise TutorError(say("grade.file.missing", lang, path=shown)) from None
    except IsADirectoryError:
        raise TutorError(say("grade.file.folder", lang, path=shown)) from None
    except OSError as err:
        raise _unreadable(shown, err, lang) from None


def read_entry(
    folder_fd: int, name: str, shown: str, limit: int = GRADE_MAX_SOURCE_BYTES, lang: str = "en"
) -> bytes:
    """The bytes of the regular file `name` directly in the open folder `folder_fd`, never through a
    link: a symbolic link (to anything) is refused without being followed, a hard link (a file with
    more than one name, `st_nlink` > 1, which may be a file from anywhere on the disk) is refused
    before it is read, and the open descriptor is checked again, so an entry swapped for a link, a FIFO
    or a device after it was listed is refused too. Every refusal is a Refused; messages name the
    entry as `shown` (its escaped name), in `lang`."""
    return _read_open(_open_entry(folder_fd, name, shown, lang), shown, limit, lang, own_name=True)


def open_entry(folder_fd: int, name: str, shown: str, lang: str = "en") -> BinaryIO:
    """The entry `name` of the open folder `folder_fd` open for reading, checked as read_entry checks
    it (never through a link, a regular file with no other name), for a caller that reads it in pieces
    (a zip, a file streamed to a spool). Every refusal is a Refused."""
    return _checked(_open_entry(folder_fd, name, shown, lang), shown, lang, own_name=True)


def _open_entry(folder_fd: int, name: str, shown: str, lang: str) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(name, flags | getattr(os, "O_NOCTTY", 0), dir_fd=folder_fd)
    except FileNotFoundError:
        raise TutorError(say("grade.file.missing", lang, path=shown)) from None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link (EMLINK on the BSDs)
            raise _refused(say("grade.file.link", lang, path=shown)) from None
        try:  # a socket cannot be opened at all (ENXIO): say what the entry is
            mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
        except OSError:
            mode = stat.S_IFREG
        raise _refused(str(entry_problem(mode, shown, lang) or _unreadable(shown, err, lang))) from None


# what an entry is when it is not a regular file: the key of its message under grade.file
_KINDS = (
    (stat.S_ISLNK, "link"),
    (stat.S_ISDIR, "folder"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISCHR, "device"),
    (stat.S_ISBLK, "device"),
    (stat.S_ISSOCK, "socket"),
)


def entry_problem(mode: int, shown: str, lang: str = "en") -> TutorError | None:
    """Why a file of this `st_mode` is not graded (it is not a regular file), or None."""
    if stat.S_ISREG(mode):
        return None
    kind = next((kind for test, kind in _KINDS if test(mode)), "not_regular")
    return TutorError(say(f"grade.file.{kind}", lang, path=shown))


def _unreadable(shown: str, err: OSError, lang: str) -> TutorError:
    return TutorError(say("grade.file.unreadable", lang, path=shown, error=str(err.strerror or err)))


def _checked(fd: int, shown: str, lang: str, own_name: bool = False) -> BinaryIO:
    """The regular file open as `fd`, checked on the descriptor itself, as a file object (the caller
    closes it; `fd` is closed here if it is refused); with `own_name`, a file with other names (a hard
    link) is refused unread (Refused, as every refusal is then)."""
    refuse = _refused if own_name else TutorError
    try:
        info = os.fstat(fd)
        problem = entry_problem(info.st_mode, shown, lang)
        if problem is not None:
            raise refuse(str(problem))
        if own_name and info.st_nlink > 1:
            raise refuse(say("grade.file.hard_link", lang, path=shown, n=info.st_nlink))
        return os.fdopen(fd, "rb")
    except OSError as err:
        os.close(fd)
        raise refuse(str(_unreadable(shown, err, lang))) from None
    except TutorError:
        os.close(fd)
        raise


def _read_open(fd: int, shown: str, limit: int | None, lang: str, own_name: bool = False) -> bytes:
    """At most `limit` bytes (None: all) of the regular file open as `fd` (closed here), checked as
    _checked checks it. A file too large is hashed whole, up to HASH_LIMIT bytes."""
    refuse = _refused if own_name else TutorError
    with _checked(fd, shown, lang, own_name) as fh:
        try:
            data = fh.read(-1 if limit is None else limit + 1)
            if limit is not None and len(data) > limit:
                message = say("grade.file.too_large", lang, path=shown, kb=str(limit // 2**10))
                raise (
                    _refused(message, rest_hashed(fh, hashlib.sha256(data), len(data)))
                    if own_name
                    else TutorError(message)
                )
        except OSError as err:
            raise refuse(str(_unreadable(shown, err, lang))) from None
    return data


def rest_hashed(fh, digest, size: int) -> str | None:
    """The sha256 `digest` of the `size` bytes read so far, finished with the rest of `fh`, as hex; None
    past HASH_LIMIT bytes in all."""
    while chunk := fh.read(2**20):
        size += len(chunk)
        if size > HASH_LIMIT:
            return None
        digest.update(chunk)
    return digest.hexdigest()


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")  # PEP 263's coding line


def decode_source(source: bytes, name: str, lang: str) -> str:
    """A Python file's text as Python reads it (PEP 263): UTF-8, with or without a BOM, unless a coding
    line in its first two lines names another encoding. A TutorError says what is wrong, naming `name`."""
    head = source.split(b"\n", 2)[:2]
    if any(_COOKIE.match(line) for line in head):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        except SyntaxError as err:  # an unknown encoding, or a BOM with another coding line
            raise TutorError(say("grade.file.bad_coding", lang, name=name, error=str(err.msg))) from None
    else:
        encoding = "utf-8"
    encoding = "utf-8" if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig") else encoding
    try:
        return source.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        if encoding == "utf-8":
            raise TutorError(say("grade.file.not_utf8", lang, name=name, byte=str(err.start))) from None
        raise TutorError(
            say("grade.file.not_encoding", lang, name=name, byte=str(err.start), encoding=encoding)
        ) from None
