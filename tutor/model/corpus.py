"""The poem corpora: the shipped poems, our file format, and the deterministic train/val split.

Pure Python (no torch) so the CLI and tests can use it without loading the model stack.

Two corpora ship in tutor/model/data/, both in our own format::

    {"format": 1, "poems": [{"title": "登鹳雀楼", "author": "王之涣", "dynasty": "唐",
                             "lines": ["白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"]}, ...]}

- `tang.json.gz` (`load_tang`): about 47,000 Tang poems in regular five- and seven-character verse, built from
  the MIT-licensed chinese-poetry package by tutor/model/data/build_corpus.py. Training runs, the shipped
  checkpoints and the experiments use it.
- `poems.json` (`load_poems`): 418 hand-typed poems, the corpus of the checkpoints before the Tang corpus;
  nothing trains on it now (the corpus tests read it as a small file in our format).

Learners' own files in other layouts come in through tutor/model/corpus_import.py.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import lzma
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO, cast

from tutor.atomicio import atomic_write
from tutor.model.errors import ModelError

FORMAT_VERSION = 1
SMALL_CORPUS = "poems.json"
TANG_CORPUS = "tang.json.gz"

# Poems that always go to the training split, whatever their hash says: the lessons use the first line of
# 登鹳雀楼 as the running example and prompt, so the shipped model must have seen it.
ALWAYS_TRAIN: frozenset[tuple[str, str]] = frozenset({("登鹳雀楼", "王之涣")})


class CorpusError(ModelError):
    """A corpus file cannot be read; the message names the file and the entry or position."""


@dataclass(frozen=True, slots=True, init=False)
class Poem:
    """A poem: title, author, dynasty and its lines, which are non-empty and hold no newline.

    The lines are stored as one newline-joined string: a corpus holds ~50k poems, and one string per poem
    takes about a third of the memory of a tuple of line strings (the importer's memory bound rests on it).
    """

    title: str
    author: str
    dynasty: str
    text: str

    def __init__(self, title: str, author: str, dynasty: str, lines: Iterable[str]):
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "author", author)
        object.__setattr__(self, "dynasty", dynasty)
        object.__setattr__(self, "text", "\n".join(lines))

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.text.split("\n"))


# ---------------------------------------------------------------------------------------------------------------
# Our format


def load_poems(path: Path | None = None) -> list[Poem]:
    """Load poems in our format (default: the small hand-typed corpus, poems.json). Raises CorpusError."""
    if path is None:
        return _load_shipped(SMALL_CORPUS)
    path = Path(path)
    with open_corpus_file(path) as fh:
        return _poems_from_our_bytes(_read_all(fh, str(path)), str(path))


def load_tang() -> list[Poem]:
    """The course corpus for new training runs: the shipped Tang poems (one-off cost in docs/model.md)."""
    return _load_shipped(TANG_CORPUS)


def _load_shipped(name: str) -> list[Poem]:
    # importlib.resources so the shipped file is found from a source checkout and from an installed wheel alike.
    source = resources.files("tutor.model") / "data" / name
    try:
        raw = source.read_bytes()
    except OSError as err:
        raise CorpusError(f"{source}: cannot read the shipped corpus ({err.strerror or err})") from err
    return _poems_from_our_bytes(_decompress(raw, name), str(source))


def _decompress(raw: bytes, name: str) -> bytes:
    if name.endswith(".gz"):
        return gzip.decompress(raw)
    return lzma.decompress(raw) if name.endswith(".xz") else raw


def _poems_from_our_bytes(raw: bytes, name: str) -> list[Poem]:
    data = _parse_json(_decode(raw, name), name)
    if not isinstance(data, dict) or "poems" not in data:
        raise CorpusError(f'{name}: expected an object {{"format": 1, "poems": [...]}} at the top level')
    if data.get("format") != FORMAT_VERSION:
        raise CorpusError(f"{name}: field 'format' must be {FORMAT_VERSION}, found {data.get('format')!r}")
    entries = data["poems"]
    if not isinstance(entries, list):
        raise CorpusError(f"{name}: field 'poems' must be a list, found {type(entries).__name__}")
    if not entries:
        raise CorpusError(f"{name}: field 'poems' is empty")
    return [_poem_from_our_entry(entry, f"{name}: poems[{i}]") for i, entry in enumerate(entries)]


def _poem_from_our_entry(entry: Any, where: str) -> Poem:
    if not isinstance(entry, dict):
        raise CorpusError(f"{where}: expected an object, found {type(entry).__name__}")
    if isinstance(entry.get("title"), str):
        where += f" ({entry['title']})"
    for name in ("title", "author", "dynasty"):
        if not isinstance(entry.get(name), str):
            raise CorpusError(f"{where}: field '{name}' must be a string")
    lines = entry.get("lines")
    if not isinstance(lines, list) or not lines:
        raise CorpusError(f"{where}: field 'lines' must be a non-empty list of strings")
    for j, line in enumerate(lines):
        if not isinstance(line, str) or not line.strip() or "\n" in line:
            raise CorpusError(f"{where}: lines[{j}] must be a non-empty single-line string")
    return Poem(
        entry["title"], sys.intern(entry["author"]), sys.intern(entry["dynasty"]), (s.strip() for s in lines)
    )


def save_poems(poems: Iterable[Poem], path: Path, source: dict[str, Any] | None = None) -> None:
    """Write poems in our format atomically; a path ending in .gz or .xz is compressed.

    `source` records where the poems came from (package, licence, filter) in the file itself. Compression
    writes no timestamp, so the same poems always give the same bytes.
    """
    # One poem per line: valid JSON that stays readable and diffs well.
    rows = [
        json.dumps(
            {"title": p.title, "author": p.author, "dynasty": p.dynasty, "lines": list(p.lines)},
            ensure_ascii=False,
        )
        for p in poems
    ]
    head = f'{{"format": {FORMAT_VERSION}, '
    if source is not None:
        head += f'"source": {json.dumps(source, ensure_ascii=False)}, '
    body = (head + '"poems": [\n' + ",\n".join(rows) + "\n]}\n").encode("utf-8")
    path = Path(path)
    if path.suffix == ".gz":
        body = gzip.compress(body, compresslevel=9, mtime=0)
    elif path.suffix == ".xz":
        body = lzma.compress(body, preset=9)
    atomic_write(path, lambda fh: fh.write(body))


# ---------------------------------------------------------------------------------------------------------------
# Split and training text


def _split_key(poem: Poem) -> float:
    """A number in [0, 1) that depends only on the poem (never on Python's per-process randomised hash()).

    Title, author and first line: the first line keeps untitled, anonymous imported poems apart, while fixing a
    typo further down a poem does not move it between train and val.
    """
    ident = "\x1f".join((poem.title, poem.author, poem.text.partition("\n")[0]))
    digest = hashlib.sha256(ident.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_poems(poems: Sequence[Poem], val_fraction: float = 0.1) -> tuple[list[Poem], list[Poem]]:
    """Split BY POEM into (train, val), deterministically and independently of input order.

    Rule: a poem goes to val when its stable hash key (see `_split_key`) is below `val_fraction`, so adding
    poems never moves existing ones. Poems in ALWAYS_TRAIN (登鹳雀楼 by 王之涣) always go to train. If the rule
    leaves val empty, the non-pinned poem with the smallest key goes to val. Both lists come back ordered by
    key, which also mixes authors and dynasties for training.
    """
    if not 0.0 < val_fraction < 1.0:
        raise CorpusError(f"val_fraction must be between 0 and 1 (exclusive), got {val_fraction}")
    keyed = sorted(
        ((_split_key(p), p) for p in poems), key=lambda kp: (kp[0], kp[1].title, kp[1].author, kp[1].text)
    )
    movable = [(k, p) for k, p in keyed if (p.title, p.author) not in ALWAYS_TRAIN]
    if len(keyed) < 2 or not movable:
        raise CorpusError(f"need at least 2 poems (one not pinned to train) to split, got {len(keyed)}")
    val_ids = {id(p) for k, p in movable if k < val_fraction} or {id(movable[0][1])}
    if len(val_ids) == len(keyed):  # keep at least one poem to train on
        val_ids.discard(id(movable[-1][1]))
    train = [p for _, p in keyed if id(p) not in val_ids]
    val = [p for _, p in keyed if id(p) in val_ids]
    return train, val


def corpus_text(poems: Iterable[Poem]) -> str:
    """The training text: a poem's lines joined by newline, poems separated by a blank line."""
    return "\n\n".join(p.text for p in poems)


def tang_texts() -> tuple[str, str]:
    """(training text, validation text) of the shipped Tang corpus, split as `python -m tutor train` splits it."""
    train, val = split_poems(load_tang())
    return corpus_text(train), corpus_text(val)


# ---------------------------------------------------------------------------------------------------------------
# Reading helpers: every failure names the file and the position


def open_corpus_file(path: Path) -> BinaryIO:
    """Open for reading, decompressing .gz and .xz; a missing or unreadable file is a CorpusError."""
    opener = gzip.open if path.suffix == ".gz" else lzma.open if path.suffix == ".xz" else open
    try:
        return cast(BinaryIO, opener(path, "rb"))  # GzipFile, LZMAFile or BufferedReader: binary streams all
    except FileNotFoundError as err:
        raise CorpusError(f"{path}: file not found") from err
    except IsADirectoryError as err:
        raise CorpusError(f"{path}: is a directory, expected a file") from err
    except OSError as err:
        raise CorpusError(f"{path}: cannot read ({err.strerror or err})") from err


def _read_all(fh: BinaryIO, name: str) -> bytes:
    try:
        return fh.read()
    except (OSError, EOFError, lzma.LZMAError) as err:  # also a corrupt .gz or .xz
        raise CorpusError(f"{name}: cannot read ({err})") from err


def _decode(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")  # tolerate a BOM from Windows editors
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise CorpusError(
            f"{name}: not UTF-8 text (invalid byte at offset {err.start}, line {line})"
        ) from err


def _parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise CorpusError(
            f"{name}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}"
        ) from err
