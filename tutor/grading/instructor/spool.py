"""The bytes of the files a batch takes, kept out of memory until each is graded: one unnamed temporary
file (gone when it is closed, or when the process ends), written once while the batch is read
(tutor.grading.instructor.collect), then read back, a file at a time, from any grading thread.

    with Spool() as spool:
        spool.write(chunk); spool.write(chunk)
        source = spool.keep()      # what was written since the last keep, as one file's bytes
        spool.write(chunk); spool.drop()   # given back: a file refused half-way
        source.read()              # its bytes again
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass


class Spool:
    """Files' bytes one after another in one unnamed temporary file in the temporary folder (TMPDIR)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self._end = 0

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)

    def keep(self) -> Source:
        """What was written since the last keep (or drop), kept as one file's bytes."""
        self._file.flush()
        start, self._end = self._end, self._file.tell()
        return Source(self, start, self._end - start)

    def drop(self) -> None:
        """What was written since the last keep, given back."""
        self._file.seek(self._end)
        self._file.truncate()

    def read(self, offset: int, size: int) -> bytes:
        return os.pread(self._file.fileno(), size, offset)


@dataclass(frozen=True)
class Source:
    """Where a file's bytes are in the spool: `read()` gives them."""

    spool: Spool
    offset: int
    size: int

    def read(self) -> bytes:
        return self.spool.read(self.offset, self.size)
