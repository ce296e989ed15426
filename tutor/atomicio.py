"""Atomic file writes: a temp file beside the target, fsync, then os.replace, so a reader never sees a
half-written file and an interrupted write leaves the old one in place.

The one implementation in the project: the model's checkpoints and corpora, and the tutor's own files
(the progress export, the course and catalogue caches, the grade exports, the learner's reset file). It
imports nothing but the standard library and is a package of its own below both (tutor/atomicio.py), so the model and the
tutor's logic both use it without either depending on the other (tests/test_layers.py).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call `write(fh)` on a temp file in `path`'s folder and move it over `path` only once it is complete."""
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
    """`text` as UTF-8, written atomically."""
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
