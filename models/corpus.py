"""The poem corpora: the shipped poems, a deterministic train/val split, and an importer for learners' corpora.

Pure Python (no torch) so the CLI and tests can use it without loading the model stack.

Two corpora ship in models/data/, both in our own format::

    {"format": 1, "poems": [{"title": "登鹳雀楼", "author": "王之涣", "dynasty": "唐",
                             "lines": ["白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"]}, ...]}

- `tang.json.gz` (`load_tang`): about 47,000 Tang poems in regular five- and seven-character verse, built from
  the MIT-licensed chinese-poetry package by models/data/build_corpus.py. Training runs, the shipped
  checkpoints and the experiments use it.
- `poems.json` (`load_poems`): 418 hand-typed poems, the corpus of the checkpoints before the Tang corpus;
  nothing trains on it now (the corpus tests read it as a small file in our format).

The importer (`import_corpus`) reads learners' files and converts traditional characters to simplified with
OpenCC unless asked to keep the script as given.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import json
import lzma
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO, Literal

from models.atomic import atomic_write
from models.errors import ModelError

FORMAT_VERSION = 1
SMALL_CORPUS = "poems.json"
TANG_CORPUS = "tang.json.gz"

# Poems that always go to the training split, whatever their hash says: the lessons use the first line of
# 登鹳雀楼 as the running example and prompt, so the shipped model must have seen it.
ALWAYS_TRAIN: frozenset[tuple[str, str]] = frozenset({("登鹳雀楼", "王之涣")})

# A plain-text block's first line counts as a title only if it is short and carries no punctuation.
_TITLE_MAX_CHARS = 20
_PUNCTUATION = set("，。！？；：、,.!?;:「」『』“”\"'（）()《》…—")
_SENTENCE_END = set("。！？!?")

# Skip reasons the importer reports (the build script adds its verse filter's own).
SKIP_NO_TEXT = "no text"
SKIP_DUPLICATE = "duplicate of an earlier poem"
SKIP_LOST_GLYPHS = "lost characters (□ or private-use code points)"
# □ is how the digitised collections mark a character lost from the source; private-use code points are
# characters the encoder had no Unicode for. Either way the model would learn a placeholder.
_LOST_GLYPH = re.compile("[□\ue000-\uf8ff]")

_READ_CHUNK = 1 << 16  # bytes per read: far more than one poem entry, and small beside any real corpus


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
    with _open(path) as fh:
        return _poems_from_our_bytes(_read_all(fh, str(path)), str(path))


def load_tang() -> list[Poem]:
    """The course corpus for new training runs: the shipped Tang poems (one-off cost in README)."""
    return _load_shipped(TANG_CORPUS)


def _load_shipped(name: str) -> list[Poem]:
    # importlib.resources so the shipped file is found from a source checkout and from an installed wheel alike.
    source = resources.files("models") / "data" / name
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


def _clean_lines(lines: Iterable[str]) -> tuple[str, ...]:
    """Lines stripped, without empty ones and without lines of bare punctuation (a lone "。" paragraph is a
    digitisation artefact in the chinese-poetry files)."""
    stripped = (s.strip() for s in lines)
    return tuple(s for s in stripped if any(ch.isalnum() for ch in s))


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
# Importer for learners' corpora


@dataclass
class ImportReport:
    """What an import read and what it left out, with the position of the first poem skipped for each reason."""

    files: list[str] = field(default_factory=list)
    poems: int = 0
    characters: int = 0
    vocabulary: int = 0
    converted: bool = True  # traditional -> simplified
    skipped: Counter[str] = field(default_factory=Counter)
    first_skipped: dict[str, str] = field(default_factory=dict)


class Importer:
    """Collects poems from files or streams: converts the script, applies an optional filter, drops duplicates.

    `reject(poem)` returns a skip reason or None; it sees the poem after conversion. Among duplicates (the same
    lines) the first is kept, except that a poem in ALWAYS_TRAIN replaces an earlier copy under another name
    (全唐诗 has 登鹳雀楼 under 朱斌 as well, and first).
    """

    def __init__(self, keep_script: bool = False, reject: Callable[[Poem], str | None] | None = None):
        self.keep_script = keep_script
        self.reject = reject
        self.poems: list[Poem] = []
        self._index: dict[str, int] = {}  # poem text -> position in self.poems
        self.report = ImportReport(converted=not keep_script)

    def add_path(self, path: Path) -> None:
        """Read one file, or every .json/.txt file (optionally .gz/.xz) directly inside a folder, in name order."""
        path = Path(path)
        if not path.is_dir():
            self._add_file(path)
            return
        files = sorted(p for p in path.iterdir() if p.is_file() and _kind_by_name(p.name))
        if not files:
            raise CorpusError(f"{path}: folder holds no .json or .txt files")
        for f in files:
            self._add_file(f)

    def add_stream(self, stream: BinaryIO, name: str, kind: Literal["json", "text"]) -> None:
        """Read an open binary stream of kind "json" or "text"; `name` is used in messages."""
        self.report.files.append(name)
        entries = _json_entries(_JsonReader(stream, name)) if kind == "json" else _text_entries(stream, name)
        for where, item in entries:
            self._add(where, item)

    def finish(self) -> tuple[list[Poem], ImportReport]:
        report = self.report
        if not self.poems:
            skipped = f" (skipped {_describe(report.skipped)})" if report.skipped else ""
            raise CorpusError(f"{', '.join(report.files)}: no poems found{skipped}")
        self._index.clear()  # before counting the vocabulary: the two together would raise the peak memory
        chars: set[str] = set()
        for poem in self.poems:
            chars.update(poem.text)
        chars.discard("\n")  # characters and vocabulary of the poems' lines, without the newlines between
        report.poems = len(self.poems)
        report.characters = sum(len(p.text) - p.text.count("\n") for p in self.poems)
        report.vocabulary = len(chars)
        return self.poems, report

    def _add_file(self, path: Path) -> None:
        with _open(path) as fh:
            first = _first_non_space(fh, str(path))
        if first is None:
            raise CorpusError(f"{path}: file is empty")
        # JSON by extension or by its opening bracket (a .txt export of JSON is still JSON).
        kind = "json" if _kind_by_name(path.name) == "json" or first in b"[{" else "text"
        with _open(path) as fh:
            self.add_stream(fh, str(path), kind)

    def _add(self, where: str, item: Poem | str) -> None:
        if isinstance(item, Poem):
            poem = item if self.keep_script else _to_simplified(item)
            reason = _lost_glyphs(poem) or (self.reject(poem) if self.reject else None)
            if reason is None:
                reason = self._keep_unless_duplicate(poem)
        else:
            reason = item
        if reason is not None:
            self.report.skipped[reason] += 1
            self.report.first_skipped.setdefault(reason, where)

    def _keep_unless_duplicate(self, poem: Poem) -> str | None:
        at = self._index.get(poem.text)
        if at is None:
            self._index[poem.text] = len(self.poems)
            self.poems.append(poem)
            return None
        kept = self.poems[at]
        if (poem.title, poem.author) in ALWAYS_TRAIN and (kept.title, kept.author) not in ALWAYS_TRAIN:
            self.poems[at] = poem
        return SKIP_DUPLICATE


def import_corpus(paths: Path | Sequence[Path], keep_script: bool = False) -> tuple[list[Poem], ImportReport]:
    """Read a learner's corpus from one or more files or folders, streaming (memory about twice the file size).

    Layouts, told apart by extension and first character:
    - our format (`{"format": 1, "poems": [...]}`);
    - the chinese-poetry layout and its variants: a JSON list of objects with "title" (or "rhythmic" for ci),
      "author" (optional) and "paragraphs", "lines" or "content" (a list of lines or one string); also a
      list of such lists;
    - plain UTF-8 text: poems separated by blank lines; a short first line without punctuation is the title.
    Files may be gzip- or xz-compressed (.gz, .xz). Traditional characters become simplified unless
    `keep_script`. Poems without text, with lost characters (□) or repeating an earlier poem are skipped and
    counted in the report; malformed files raise CorpusError naming file and position.
    """
    importer = Importer(keep_script=keep_script)
    for path in [paths] if isinstance(paths, str | Path) else paths:
        importer.add_path(Path(path))
    return importer.finish()


def _describe(skipped: Counter[str]) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in skipped.most_common())


def _lost_glyphs(poem: Poem) -> str | None:
    return SKIP_LOST_GLYPHS if _LOST_GLYPH.search(poem.text) else None


@cache
def _converter() -> Any:
    import opencc  # imported on first use: only imports that convert pay for it

    return opencc.OpenCC("t2s")


def _to_simplified(poem: Poem) -> Poem:
    # One conversion call per poem (title, author and lines joined by newlines): OpenCC's phrase matching
    # never crosses a newline, and one call is about 4x faster than a call per line (measured on 5,000 poems).
    title, author, text = _converter().convert("\n".join((poem.title, poem.author, poem.text))).split("\n", 2)
    return Poem(title, sys.intern(author), poem.dynasty, (text,))


# --- JSON entries -----------------------------------------------------------------------------------------------


def _json_entries(reader: _JsonReader) -> Iterator[tuple[str, Poem | str]]:
    """(position, Poem or skip reason) for every entry of a top-level list, a list of lists, or our format."""
    opening = reader.next_char()
    if opening == "{":
        items = reader.items_under("poems")
    elif opening == "[":
        items = reader.items()
    else:
        found = repr(opening) if opening else "end of file"
        reader.fail(f"expected a JSON list of poems or our format's object, found {found}")
    for index, (line, value) in enumerate(items):
        if isinstance(value, list):  # a list of lists: the entries of the inner list, numbered within it
            for sub, entry in enumerate(value):
                yield _entry(entry, f"{reader.name}: entry [{index}][{sub}] at line {line}")
        else:
            yield _entry(value, f"{reader.name}: entry [{index}] at line {line}")
    reader.expect_end()


def _entry(entry: Any, where: str) -> tuple[str, Poem | str]:
    if not isinstance(entry, dict):
        raise CorpusError(f"{where}: expected an object, found {type(entry).__name__}")
    fields = {
        "title": entry.get("title", entry.get("rhythmic", "")),
        "author": entry.get("author", ""),
        "dynasty": entry.get("dynasty", ""),
    }
    if isinstance(fields["title"], str) and fields["title"]:
        where += f" ({fields['title']})"
    for name, value in fields.items():
        if not isinstance(value, str):
            raise CorpusError(f"{where}: field '{name}' must be a string, found {type(value).__name__}")
    lines = _entry_lines(entry, where)
    if not lines:
        return where, SKIP_NO_TEXT
    # whitespace runs (a newline too) become one space: a title is one line
    title, author, dynasty = (" ".join(value.split()) for value in fields.values())
    return where, Poem(title, sys.intern(author), sys.intern(dynasty), lines)


def _entry_lines(entry: dict[str, Any], where: str) -> tuple[str, ...]:
    for name in ("paragraphs", "lines", "content"):
        if name not in entry:
            continue
        value = entry[name]
        if isinstance(value, str):
            return _clean_lines(_content_lines(value))
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            raise CorpusError(f"{where}: field '{name}' must be a list of strings or a string")
        # a list item holding a newline is several lines
        return _clean_lines(line for item in value for line in item.splitlines())
    return ()


def _content_lines(content: str) -> list[str]:
    """Split a content string into lines: at newlines, or else after sentence-ending punctuation."""
    lines = [s.strip() for s in content.splitlines() if s.strip()]
    if len(lines) != 1:
        return lines
    out, current = [], ""
    for ch in lines[0]:
        current += ch
        if ch in _SENTENCE_END:
            out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out


class _JsonReader:
    """Reads one JSON document a chunk at a time, parsing entry by entry with the C scanner.

    It holds the current chunk and the entry being parsed, never the whole file; it tracks line and column so
    every message can say where.
    """

    _decoder = json.JSONDecoder()
    _non_space = re.compile(r"[^ \t\n\r]")

    def __init__(self, stream: BinaryIO, name: str):
        self.stream, self.name = stream, name
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf, self.pos = "", 0
        self.bytes_read, self.eof = 0, False
        # line and column (1-based) of buf[mark]; advanced lazily so counting stays linear in the file size
        self.mark, self.line, self.col = 0, 1, 1

    def next_char(self) -> str:
        """Skip whitespace; return the next character without consuming it ('' at end of file)."""
        while True:
            found = self._non_space.search(self.buf, self.pos)
            if found:
                self.pos = found.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
            if not self._more():
                return ""

    def items(self) -> Iterator[tuple[int, Any]]:
        """(line, value) for each element of the array whose '[' is the next character."""
        self._consume("[")
        if self.next_char() == "]":
            self.pos += 1
            return
        while True:
            self.next_char()
            line = self._line_here()
            yield line, self.value()
            if self._consume(",]") == "]":
                return

    def items_under(self, key: str) -> Iterator[tuple[int, Any]]:
        """Our format: stream the array under `key` of the object that starts here; read other fields whole."""
        self._consume("{")
        fields: dict[str, Any] = {}
        while self._consume('"}', advance=False) == '"':
            name = self.value()
            self._consume(":")
            if name == key and self.next_char() == "[":
                yield from self.items()
                fields[name] = []
            else:
                fields[name] = self.value()
            if self._consume(",}") == "}":
                break
            self._consume('"', advance=False)  # no "}" right after a comma
        else:
            self.pos += 1  # the empty object's "}"
        if fields.get("format") != FORMAT_VERSION or key not in fields:
            raise CorpusError(
                f'{self.name}: a top-level object must be our format {{"format": 1, "{key}": [...]}}'
            )

    def value(self) -> Any:
        self.next_char()
        while True:
            try:
                value, end = self._decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                if self._more():  # the value may just be cut off at the end of the chunk
                    continue
                self.fail(err.msg, err.pos)
            # a number at the very end of the chunk may go on in the next one
            if end == len(self.buf) and self._more():
                continue
            self.pos = end
            return value

    def expect_end(self) -> None:
        if self.next_char():
            self.fail("unexpected data after the end of the JSON document")

    def fail(self, message: str, pos: int | None = None) -> None:
        line, col = self._where(self.pos if pos is None else pos)
        raise CorpusError(f"{self.name}: invalid JSON at line {line}, column {col}: {message}")

    def _consume(self, allowed: str, advance: bool = True) -> str:
        """The next character, which must be one of `allowed`; with advance=False it is only looked at."""
        ch = self.next_char()
        if not ch or ch not in allowed:
            wanted = " or ".join(repr(c) for c in allowed)
            self.fail(f"expected {wanted}, found {repr(ch) if ch else 'end of file'}")
        self.pos += advance
        return ch

    def _line_here(self) -> int:
        self.line, self.col = self._where(self.pos)
        self.mark = self.pos
        return self.line

    def _where(self, pos: int) -> tuple[int, int]:
        newlines = self.buf.count("\n", self.mark, pos)
        if not newlines:
            return self.line, self.col + pos - self.mark
        return self.line + newlines, pos - self.buf.rfind("\n", self.mark, pos)

    def _more(self) -> bool:
        """Read the next chunk, dropping what was parsed already. False at end of file."""
        if self.eof:
            return False
        raw = _read_chunk(self.stream, self.name)
        pending = len(self._utf8.getstate()[0])  # bytes of a character cut off by the previous chunk
        try:
            text = self._utf8.decode(raw, final=not raw)
        except UnicodeDecodeError as err:
            offset = self.bytes_read - pending + err.start
            line = self._where(len(self.buf))[0] + err.object[: err.start].count(b"\n")
            raise CorpusError(
                f"{self.name}: not UTF-8 text (invalid byte at offset {offset}, line {line})"
            ) from err
        self.bytes_read += len(raw)
        self.eof = not raw
        self._line_here()
        self.buf, self.pos, self.mark = self.buf[self.pos :] + text, 0, 0
        return True


# --- plain text -------------------------------------------------------------------------------------------------


def _text_entries(stream: BinaryIO, name: str) -> Iterator[tuple[str, Poem | str]]:
    """Poems separated by blank lines, read line by line."""
    block: list[str] = []
    start = offset = 0
    for number, raw in enumerate(_lines_then_blank(stream, name), 1):
        line = _decode_line(raw, name, offset, number).strip()
        offset += len(raw)
        if line:
            start = start or number
            block.append(line)
        elif block:
            yield f"{name}: poem at line {start}", _poem_from_block(block)
            block, start = [], 0


def _lines_then_blank(stream: BinaryIO, name: str) -> Iterator[bytes]:
    try:
        yield from stream
    except (OSError, EOFError, lzma.LZMAError) as err:  # a corrupt .gz or .xz
        raise CorpusError(f"{name}: cannot read ({err})") from err
    yield b""  # closes the last poem


def _decode_line(raw: bytes, name: str, offset: int, number: int) -> str:
    try:
        return raw.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as err:
        raise CorpusError(
            f"{name}: not UTF-8 text (invalid byte at offset {offset + err.start}, line {number})"
        ) from err


def _poem_from_block(block: list[str]) -> Poem | str:
    first = block[0]
    is_title = len(block) > 1 and len(first) <= _TITLE_MAX_CHARS and not any(c in _PUNCTUATION for c in first)
    title, body = (first, block[1:]) if is_title else ("", block)
    lines = _clean_lines(body)
    return Poem(title, "", "", lines) if lines else SKIP_NO_TEXT


# ---------------------------------------------------------------------------------------------------------------
# Reading helpers: every failure names the file and the position


def _kind_by_name(name: str) -> str | None:
    base = name.lower().removesuffix(".gz").removesuffix(".xz")
    return "json" if base.endswith(".json") else "text" if base.endswith(".txt") else None


def _open(path: Path) -> BinaryIO:
    """Open for reading, decompressing .gz and .xz; a missing or unreadable file is a CorpusError."""
    opener = gzip.open if path.suffix == ".gz" else lzma.open if path.suffix == ".xz" else open
    try:
        return opener(path, "rb")
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


def _first_non_space(fh: BinaryIO, name: str) -> int | None:
    """The first byte that is not whitespace (or a BOM), or None for an empty file."""
    chunk = _read_chunk(fh, name).removeprefix(codecs.BOM_UTF8)
    while chunk:
        stripped = chunk.lstrip(b" \t\r\n")
        if stripped:
            return stripped[0]
        chunk = _read_chunk(fh, name)
    return None


def _read_chunk(fh: BinaryIO, name: str) -> bytes:
    try:
        return fh.read(_READ_CHUNK)
    except (OSError, EOFError, lzma.LZMAError) as err:
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
