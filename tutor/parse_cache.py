"""The start-up cache: parses kept for the next start, each used again only while what it was made
from is byte for byte the same.

Two parses are kept, because the first screen cannot wait for them: the catalogue (tutor.texts: a
TOML parse per language) and the course with the cards the home screen lists (tutor.course: pydantic,
Markdown, LaTeX). Each is kept in the user's cache folder (settings.cache_dir), in a folder named by a
hash of the parsed folder's path, never beside the files: an installed package may be read-only.

A kept parse is used only under its key: a hash of

- the contents of its input files (the TOML file; every file of the lessons folder),
- the source of the code that made it: every module of tutor/ loaded when it was saved
  (the parse ran in that code; the UI and the commands, which only call it, are left out), so no
  list of parser files is kept by hand, and
- the Python and tutor versions.

Any change there gives another key: the files are parsed again and the new parse is kept. A folder
that cannot be written only costs the next start its speed; a kept file that cannot be read (cut
short, from other code) is parsed again. Standard library only: it is read before the first frame.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tutor import __version__
from tutor.settings import ROOT as CODE_ROOT  # holds tutor/: the code a parse is keyed by
from tutor.settings import cache_dir

CACHE_FORMAT = 1  # bump when an entry changes shape
CALLERS = ("tutor.ui", "tutor.commands", "tutor.cli", "tutor.__main__")  # call parses, never run one


def entry(folder: Path, name: str) -> Path:
    """Where the parse called `name` of files in `folder` is kept: cache_dir()/parses/HASH/NAME.pickle."""
    where = hashlib.blake2b(str(Path(folder).resolve()).encode(), digest_size=10).hexdigest()
    return cache_dir() / "parses" / where / f"{name}.pickle"


def loaded_code() -> list[Path]:
    """The modules of tutor/ this process has loaded, but the callers (CALLERS)."""
    files = set()
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "tutor" or any(name == c or name.startswith(c + ".") for c in CALLERS):
            continue
        file = getattr(module, "__file__", None)
        if file and file.endswith(".py"):
            path = Path(file).resolve()
            if path.is_relative_to(CODE_ROOT):
                files.add(path)
    return sorted(files)


def _digest(parts: Iterable[tuple[str, Path]]) -> str:
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{CACHE_FORMAT} {sys.version} {__version__}".encode())
    for kind, file in parts:
        data = Path(file).read_bytes()
        digest.update(f"\0{kind} {file} {len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


class Kept:
    """One parse in the cache: `load()` before parsing, `save(value)` after a parse.

    The inputs are read for the key once, by `load`, before the parse: a file changed while it is
    parsed then gives the next start another key, never a stale parse under the new one."""

    def __init__(self, file: Path, inputs: Sequence[Path]) -> None:
        self.file, self.inputs = Path(file), list(inputs)
        self._inputs: str | None = None  # the inputs' hash, taken by load

    def load(self) -> Any | None:
        """The kept value if it was made from these inputs by the code it names, unchanged; else None."""
        try:
            self._inputs = _digest(("input", f) for f in self.inputs)
            with open(self.file, "rb") as fh:
                kept = pickle.load(fh)
            if kept["key"] == self._key([Path(p) for p in kept["code"]]):
                return kept["value"]
        except Exception:  # missing, cut short, made by other code, or a file gone: parse again
            pass
        return None

    def save(self, value: Any) -> None:
        """Keep `value`, made from the inputs `load` read; a failure to write is ignored."""
        if self._inputs is None:  # the inputs could not be read: nothing to key the value by
            return
        code = loaded_code()
        try:
            kept = {"key": self._key(code), "code": [str(p) for p in code], "value": value}
            data = pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL)
            from tutor.atomicio import atomic_write

            _private_folders(self.file.parent)
            atomic_write(self.file, lambda fh: fh.write(data))
        except Exception:  # a read-only folder, or a value that cannot be pickled: parsed next time too
            pass

    def _key(self, code: Sequence[Path]) -> str:
        return hashlib.blake2b(f"{self._inputs} {_digest(('code', f) for f in code)}".encode()).hexdigest()


def _private_folders(folder: Path) -> None:
    """Make `folder` and its missing parents owner-only (0700), as the XDG base-directory spec asks of a
    cache folder: a served learner's cache lies in their home, which nobody else may read."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for part in reversed(missing):
        part.mkdir(mode=0o700, exist_ok=True)


def files_under(folder: Path) -> list[Path]:
    """Every file under `folder`, in a stable order, but names starting with "." or "__" (hidden
    files, `__pycache__`), so a kept parse is not an input of itself. OSError if `folder` is missing."""
    found: list[Path] = []

    def walk(here: str) -> None:
        with os.scandir(here) as entries:
            for item in sorted(entries, key=lambda e: e.name):
                if item.name.startswith((".", "__")):
                    continue
                if item.is_dir():
                    walk(item.path)
                else:
                    found.append(Path(item.path))

    walk(str(Path(folder).resolve()))
    return found
