"""Atomic file writes for the tutor: a temp file beside the target, fsync, then os.replace, so a
reader never sees a half-written file and an interrupted write leaves the old one in place.

models/atomic.py does the same for checkpoints and corpora: models/ imports nothing from tutor/, and
the tutor's logic (the progress store among it) does not depend on the model, so each layer keeps
its own fifteen lines.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call `write(fh)` on a temp file in `path`'s folder and move it over `path` once it is complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
