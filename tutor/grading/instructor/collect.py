"""What an instructor's batch holds, read as the LMSs lay their downloads out: every *.py in the folder,
in its subfolders (Moodle's "download all" makes a folder per student) and in zip files (a download
left zipped, a student's own zip, a zip in a zip), in name order.

    with Spool() as spool:   # tutor.grading.instructor.spool
        found = collect(path, lang, keep, spool=spool, bounds=Bounds(files=500))
        # [Found(name, sha256, source or None, error or None)]; found[0].source.read() -> bytes

`path` is a folder or a .zip file. A name is the file's path under `path` with "/" between its parts,
a zip's members under the zip's own name (`subs.zip/Ann_1_assignsubmission_file_/rope.py`, and a zip in
it `subs.zip/Ann_1_assignsubmission_file_/ann.zip/rope.py`).

Every part is hostile input, as tutor.grading.instructor.batch says: folders are walked through descriptors,
never through a link (a linked folder is not entered; a linked *.py is an error row); a file is opened
with tutor.grading.safe_read's checks; a zip's member that is a link, encrypted, or named outside the zip
("/x.py", "../x.py") is an error row, never extracted; a zip that is not one is an error row (or, given
as `--batch`, a usage error). macOS's "__MACOSX" folders and hidden folders are skipped.

The intake is bounded (`Bounds`, defaults in tutor.settings, each a flag of `grade --batch`), so one
upload cannot exhaust the grader and the rest of the class is still graded:
- files: the rows a batch takes; past it, one row names the first file not read, and nothing more is;
- members: the entries one zip's directory lists. zipfile reads a directory whole, so a directory larger
  than MEMBER_DIRECTORY_BYTES for each member a zip may hold is refused unread; past `members`, the rest
  are not read, and the zip's row says how many;
- file_bytes: one file's size, a zip member's by its header's claim and by the bytes inflated;
- zip_bytes and ratio: the bytes inflated from one zip (its zips in it included, each of them counting
  for the zips around it) at most zip_bytes and `ratio` times the zip's own size on the disk (never a
  header's claim); a member at most `ratio` times its stored size. Each is checked on the header's claim
  before a member is read and on the bytes inflated while it is read, which stop at the bound: a header
  that lies about its size gets no further than the bound. A member past a zip's bound ends that zip:
  its row says how many members were not read. The first INTAKE_RATIO_FREE_BYTES are never too compressed;
- depth: the folders and zips a file is inside; a folder or a zip deeper is an error row, not entered.

Memory: nothing is held whole. A file's bytes go, as they are read (in pieces, hashed on the way), to
the Spool, one unnamed temporary file, and a Found keeps where they are; the grader reads a file back
when it is about to grade it (batch.grade_folder) and drops it after, so a batch holds the bytes of the
files being graded, O(jobs × file_bytes). A zip is read from its descriptor, never into memory; a zip in
a zip is inflated into a temporary file of its own while it is read. The spool takes at most
files × file_bytes of the temporary folder (TMPDIR); a zip in a zip at most zip_bytes.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import stat
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO

from tutor.errors import TutorError
from tutor.grading.instructor.names import shown_name
from tutor.grading.instructor.spool import Source, Spool
from tutor.grading.safe_read import Refused, entry_problem, open_entry, open_submission, rest_hashed
from tutor.settings import (
    GRADE_MAX_SOURCE_BYTES,
    INTAKE_MAX_DEPTH,
    INTAKE_MAX_FILES,
    INTAKE_MAX_MEMBERS,
    INTAKE_MAX_RATIO,
    INTAKE_MAX_ZIP_BYTES,
    INTAKE_RATIO_FREE_BYTES,
)
from tutor.texts import say

MEMBER_DIRECTORY_BYTES = 256  # a zip's directory may take this much for each member it may hold
_CHUNK = 2**16  # bytes read, hashed and spooled at a time
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# what reading a hostile zip may raise, beyond a TutorError: each is an error row
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    OSError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
)


@dataclass(frozen=True)
class Bounds:
    """What one batch reads at most (see the module's docstring)."""

    files: int = INTAKE_MAX_FILES
    members: int = INTAKE_MAX_MEMBERS
    file_bytes: int = GRADE_MAX_SOURCE_BYTES
    zip_bytes: int = INTAKE_MAX_ZIP_BYTES
    ratio: float = INTAKE_MAX_RATIO
    depth: int = INTAKE_MAX_DEPTH


@dataclass
class Found:
    name: str  # the path under the batch, "/" between parts, as on disk (batch.shown_name shows it)
    sha256: str | None
    source: Source | None  # where its bytes are; None: not graded (`error` says why)
    error: str | None = None
    mtime: float | None = None  # the file's (a zip member's: its date in the zip, read as local time)


def collect(
    path: Path,
    lang: str,
    keep: Callable[[str], bool] = lambda name: True,
    *,
    spool: Spool,
    bounds: Bounds = Bounds(),
) -> list[Found]:
    """Every *.py under `path` (a folder or a zip) whose name `keep` keeps, in name order, their bytes
    in `spool`."""
    intake = _Intake(lang, keep, bounds, spool)
    try:
        if path.suffix.lower() == ".zip" and path.is_file():
            with open_submission(path, shown_name(str(path)), lang) as fh:
                try:
                    archive = intake.open_zip(fh, shown_name(str(path)))
                except _ZIP_ERRORS as err:
                    raise TutorError(
                        say("grade.batch.bad_zip", lang, path=shown_name(str(path)), error=str(err))
                    ) from None
                with archive:
                    intake.members(
                        archive, "", path.name, _Zip.of(os.fstat(fh.fileno()).st_size, bounds, path.name)
                    )
        else:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
            except (FileNotFoundError, NotADirectoryError):
                raise TutorError(say("grade.batch.not_folder", lang, folder=shown_name(str(path)))) from None
            except OSError as err:
                raise TutorError(
                    say(
                        "grade.file.unreadable",
                        lang,
                        path=shown_name(str(path)),
                        error=str(err.strerror or err),
                    )
                ) from None
            try:
                intake.walk(fd, "")
            finally:
                os.close(fd)
    except _Full:
        pass
    intake.found.sort(key=lambda f: f.name)
    return intake.found


class _Full(Exception):
    """The batch has taken its `files`: nothing more is read."""


@dataclass
class _Zip:
    """A zip being read: the bytes it may still give, with the zips around it."""

    name: str
    size: int  # its own, on the disk (or inflated from the zip it is in)
    limit: int  # the bytes it may give, all told
    parent: _Zip | None = None
    given: int = 0

    @classmethod
    def of(cls, size: int, bounds: Bounds, name: str, parent: _Zip | None = None) -> _Zip:
        ratio = max(INTAKE_RATIO_FREE_BYTES, int(bounds.ratio * size))
        return cls(name, size, min(bounds.zip_bytes, ratio), parent)

    def chain(self) -> list[_Zip]:
        return [self] + (self.parent.chain() if self.parent is not None else [])

    def tightest(self) -> _Zip:
        """The zip of this chain with the fewest bytes left to give."""
        return min(self.chain(), key=lambda z: z.limit - z.given)

    def room(self) -> int:
        return max(0, min(z.limit - z.given for z in self.chain()))

    def give(self, size: int) -> None:
        for z in self.chain():
            z.given += size


@dataclass
class _Intake:
    lang: str
    keep: Callable[[str], bool]
    bounds: Bounds
    spool: Spool
    found: list[Found] = field(default_factory=list)

    def row(
        self,
        name: str,
        sha256: str | None,
        source: Source | None,
        error: str | None,
        mtime: float | None = None,
    ) -> None:
        """One more row, if `keep` keeps `name`, unless the batch has taken its `files`: then one row
        saying so, and _Full."""
        if not self.keep(name):
            return
        if len(self.found) >= self.bounds.files:
            message = say("grade.batch.batch_full", self.lang, path=shown_name(name), n=self.bounds.files)
            self.found.append(Found(name, None, None, message))
            raise _Full
        self.found.append(Found(name, sha256, source, error, mtime))

    def too_deep(self, name: str) -> str | None:
        """Why the folder or zip `name` is not entered: the files in it would be too deep."""
        if name.count("/") + 1 <= self.bounds.depth:
            return None
        return say("grade.batch.too_deep", self.lang, path=shown_name(name), depth=self.bounds.depth)

    # --- folders ---------------------------------------------------------------------------------

    def walk(self, folder_fd: int, prefix: str) -> None:
        with os.scandir(folder_fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            name = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)
                mode = info.st_mode
            except OSError as err:  # gone since the listing
                if entry.name.endswith(".py"):
                    self.row(
                        name,
                        None,
                        None,
                        say(
                            "grade.file.unreadable",
                            self.lang,
                            path=shown_name(name),
                            error=str(err.strerror or err),
                        ),
                    )
                continue
            if entry.name.endswith(".py"):
                if self.keep(name):
                    self.file(folder_fd, entry.name, name, mode, info.st_mtime)
            elif entry.name.lower().endswith(".zip") and stat.S_ISREG(mode):
                self.zip_entry(folder_fd, entry.name, name)
            elif stat.S_ISDIR(mode) and not _skipped_folder(entry.name):
                if (deep := self.too_deep(name)) is not None:
                    self.row(name, None, None, deep)
                    continue
                try:
                    fd = os.open(entry.name, _DIR_FLAGS, dir_fd=folder_fd)
                except OSError:  # swapped for a link since the listing, or unreadable: nothing to grade in it
                    continue
                try:
                    self.walk(fd, name + "/")
                finally:
                    os.close(fd)

    def file(self, folder_fd: int, entry: str, name: str, mode: int, mtime: float) -> None:
        shown = shown_name(name)
        try:
            problem = entry_problem(mode, shown, self.lang)
            if problem is not None:
                raise problem
            with open_entry(folder_fd, entry, shown, self.lang) as fh:
                digest, size = self.spooled(fh, self.bounds.file_bytes)
                if size > self.bounds.file_bytes:  # hashed whole, as safe_read.read_entry does
                    self.row(name, rest_hashed(fh, digest, size), None, self.too_large(shown))
                    return
        except Refused as err:
            self.row(name, err.sha256, None, str(err))
            return
        except TutorError as err:
            self.row(name, None, None, str(err))
            return
        except OSError as err:
            self.spool.drop()
            message = say("grade.file.unreadable", self.lang, path=shown, error=str(err.strerror or err))
            self.row(name, None, None, message)
            return
        self.row(name, digest.hexdigest(), self.spool.keep(), None, mtime)

    def spooled(self, fh: IO[bytes], cap: int, out: BinaryIO | None = None) -> tuple[hashlib._Hash, int]:
        """At most `cap` bytes of `fh` written to `out` (default: the spool), hashed: (the sha256, the
        bytes read). More than `cap` read: nothing kept (the spool's part dropped), one more than `cap`
        said; the bytes beyond are never asked for."""
        digest, size = hashlib.sha256(), 0
        write = self.spool.write if out is None else out.write
        while size <= cap and (chunk := fh.read(min(_CHUNK, cap + 1 - size))):
            digest.update(chunk)
            size += len(chunk)
            if size <= cap:
                write(chunk)
        if size > cap and out is None:
            self.spool.drop()
        return digest, size

    def too_large(self, shown: str) -> str:
        return say(
            "grade.batch.file_too_large", self.lang, path=shown, kb=str(self.bounds.file_bytes // 2**10)
        )

    # --- zips ------------------------------------------------------------------------------------

    def zip_entry(self, folder_fd: int, entry: str, name: str) -> None:
        """The members of the zip `entry` of the folder, or one error row for the zip."""
        if (deep := self.too_deep(name)) is not None:
            self.row(name, None, None, deep)
            return
        try:
            with open_entry(folder_fd, entry, shown_name(name), self.lang) as fh:
                self.zip(fh, name, os.fstat(fh.fileno()).st_size, None)
        except TutorError as err:  # not a regular file of its own
            self.row(name, getattr(err, "sha256", None), None, str(err))

    def zip(self, fh: BinaryIO, name: str, size: int, parent: _Zip | None, sha256: str | None = None) -> None:
        """The members of the zip open as `fh` (of `size` bytes, in the zip `parent`), or one error row
        for it, with its bytes' `sha256` (hashed here when not given)."""
        shown = shown_name(name)
        try:
            archive = self.open_zip(fh, shown)
        except TutorError as err:  # its directory is too large
            self.row(name, sha256, None, str(err))
            return
        except _ZIP_ERRORS as err:
            if sha256 is None and self.keep(name):
                fh.seek(0)
                sha256 = rest_hashed(fh, hashlib.sha256(), 0)
            self.row(name, sha256, None, say("grade.batch.bad_zip", self.lang, path=shown, error=str(err)))
            return
        with archive:
            self.members(archive, name + "/", name, _Zip.of(size, self.bounds, name, parent))

    def open_zip(self, fh: BinaryIO, shown: str) -> zipfile.ZipFile:
        """The zip open as `fh`, its directory read only if it is no larger than `members` may take."""
        # the end record, read as zipfile reads it: where the directory is and how large (zipfile reads it whole)
        end = zipfile._EndRecData(fh)  # type: ignore[attr-defined]
        if not end:
            raise zipfile.BadZipFile("File is not a zip file")
        size = end[5]  # zipfile._ECD_SIZE: the directory's bytes
        if size > self.bounds.members * MEMBER_DIRECTORY_BYTES:
            raise TutorError(
                say(
                    "grade.batch.directory_too_large",
                    self.lang,
                    path=shown,
                    kb=size // 2**10,
                    n=self.bounds.members,
                )
            )
        return zipfile.ZipFile(fh)

    def members(self, archive: zipfile.ZipFile, prefix: str, label: str, zip_: _Zip) -> None:
        """The *.py members of `archive` and of the zips in it; `label` names the zip's own rows."""
        infos = archive.infolist()
        wanted = [(i, prefix + i.filename.replace("\\", "/")) for i in infos[: self.bounds.members]]
        # a zip's members are each in their own shard: a zip in it is read whatever `keep` says of its name
        wanted = [
            (i, name)
            for i, name in wanted
            if _wanted(i, name) and (not name.endswith(".py") or self.keep(name))
        ]
        for n, (info, name) in enumerate(wanted):
            bound = self.member(archive, info, name, zip_)
            if bound is not None:  # this member would take a zip past its bound: the rest are not read
                self.row(label, None, None, self.cut(label, len(wanted) - n, bound))
                return
        if len(infos) > self.bounds.members:
            message = say(
                "grade.batch.too_many_members",
                self.lang,
                path=shown_name(label),
                total=len(infos),
                most=self.bounds.members,
                n=len(infos) - self.bounds.members,
            )
            self.row(label, None, None, message)

    def cut(self, label: str, left: int, bound: _Zip) -> str:
        if bound.limit == self.bounds.zip_bytes:
            why = say("grade.batch.bound.zip_bytes", self.lang, mb=self.bounds.zip_bytes // 2**20)
        else:
            ratio = f"{self.bounds.ratio:g}"
            why = say("grade.batch.bound.zip_ratio", self.lang, ratio=ratio, kb=bound.size // 2**10)
        return say(
            "grade.batch.zip_cut",
            self.lang,
            path=shown_name(label),
            n=left,
            zip=shown_name(bound.name),
            bound=why,
        )

    def member(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, zip_: _Zip) -> _Zip | None:
        """One member read (a row, or the members of a zip in it); the zip whose bound it would pass,
        if it would (and then it is not read)."""
        inner = info.filename.replace("\\", "/")
        parts, shown = inner.split("/"), shown_name(name)
        kind = (info.external_attr >> 16) & 0o170000
        is_zip = not inner.endswith(".py")
        if inner.startswith("/") or ".." in parts or "" in parts[:-1]:
            self.row(name, None, None, say("grade.batch.zip_outside", self.lang, path=shown))
        elif kind and kind != stat.S_IFREG:
            self.row(name, None, None, str(entry_problem(kind, shown, self.lang)))
        elif info.flag_bits & 0x1:
            self.row(name, None, None, say("grade.batch.zip_encrypted", self.lang, path=shown))
        elif name.count("/") + is_zip > self.bounds.depth:  # a zip: the files in it would be
            self.row(
                name, None, None, say("grade.batch.too_deep", self.lang, path=shown, depth=self.bounds.depth)
            )
        else:
            return self.inflate(archive, info, name, zip_, is_zip)
        return None

    def inflate(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, zip_: _Zip, is_zip: bool):
        """A *.py member into the spool, or a zip member into a temporary file of its own and read; the
        zip whose bound it would pass, if it would. Its header's claim is checked first, then the bytes
        inflated, which stop one past the tightest bound."""
        caps = (
            None if is_zip else self.bounds.file_bytes,
            max(INTAKE_RATIO_FREE_BYTES, int(self.bounds.ratio * info.compress_size)),
            zip_.room(),
        )
        bound = _past(info.file_size, caps)
        if bound is None and is_zip:
            with tempfile.TemporaryFile() as out:
                bound, read = self.read_member(archive, info, name, caps, zip_, out)
                if read is not None:
                    out.seek(0)
                    self.zip(out, name, read[1], zip_, read[0])
        elif bound is None:
            bound, read = self.read_member(archive, info, name, caps, zip_, None)
            if read is not None:
                self.row(name, read[0], self.spool.keep(), None, time.mktime((*info.date_time, 0, 0, -1)))
        if bound == "zip":
            return zip_.tightest()
        if bound is not None:
            self.row(name, None, None, self.refusal(bound, shown_name(name), info))
        return None

    def read_member(
        self,
        archive: zipfile.ZipFile,
        info: zipfile.ZipInfo,
        name: str,
        caps,
        zip_: _Zip,
        out: BinaryIO | None,
    ) -> tuple[str | None, tuple[str, int] | None]:
        """The member's bytes inflated into `out` (None: the spool), up to one past the tightest of
        `caps`, and counted for its zips: (the bound they passed, else None; (their sha256, their size)
        when they were read whole). A member that cannot be inflated is an error row here."""
        try:
            with archive.open(info) as fh:
                digest, size = self.spooled(fh, min(c for c in caps if c is not None), out)
        except _ZIP_ERRORS as err:
            if out is None:
                self.spool.drop()
            self.row(
                name, None, None, say("grade.batch.bad_zip", self.lang, path=shown_name(name), error=str(err))
            )
            return None, None
        zip_.give(size)
        bound = _past(size, caps)
        return bound, (digest.hexdigest(), size) if bound is None else None

    def refusal(self, bound: str, shown: str, info: zipfile.ZipInfo) -> str:
        if bound == "file":
            return self.too_large(shown)
        return say(
            "grade.batch.too_compressed",
            self.lang,
            path=shown,
            stored=info.compress_size,
            ratio=f"{self.bounds.ratio:g}",
        )


def _past(size: int, caps: tuple[int | None, int, int]) -> str | None:
    """The bound `size` bytes are past, of (a file's, a member's ratio, the room its zips have left):
    "file", "ratio" or "zip"; None."""
    for bound, cap in zip(("file", "ratio", "zip"), caps, strict=True):
        if cap is not None and size > cap:
            return bound
    return None


def _wanted(info: zipfile.ZipInfo, name: str) -> bool:
    """A member the batch reads: a *.py file or a zip, not a folder nor macOS's leftovers."""
    parts = name.split("/")
    if info.is_dir() or "__MACOSX" in parts or parts[-1].startswith("._"):
        return False
    return name.endswith(".py") or name.lower().endswith(".zip")


def _skipped_folder(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"
