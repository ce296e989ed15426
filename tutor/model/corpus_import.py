"""The importer for learners' corpora: reads their files, streaming, into `Poem`s of tutor/model/corpus.py.

Layouts, told apart by extension and first character:
- our format (`{"format": 1, "poems": [...]}`);
- the chinese-poetry layout and its variants: a JSON list of objects with "title" (or "rhythmic" for ci),
  "author" (optional) and "paragraphs", "lines" or "content" (a list of lines or one string); also a list of
  such lists;
- plain UTF-8 text: poems separated by blank lines; a short first line without punctuation is the title.

JSON is parsed with ijson, one entry at a time. Traditional characters become simplified with OpenCC unless
asked to keep the script as given. Pure Python (no torch).
"""

from __future__ import annotations

import codecs
import lzma
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Literal

import ijson

from tutor.model.corpus import ALWAYS_TRAIN, FORMAT_VERSION, CorpusError, Poem, open_corpus_file

# Skip reasons the importer reports (the build script adds its verse filter's own).
SKIP_NO_TEXT = "no text"
SKIP_DUPLICATE = "duplicate of an earlier poem"
SKIP_LOST_GLYPHS = "lost characters (□ or private-use code points)"
SKIP_MALFORMED = "malformed entry"  # its first place also says what is wrong with it
# □ is how the digitised collections mark a character lost from the source; private-use code points are
# characters the encoder had no Unicode for. Either way the model would learn a placeholder.
_LOST_GLYPH = re.compile("[□\ue000-\uf8ff]")

# A plain-text block's first line counts as a title only if it is short and carries no punctuation.
_TITLE_MAX_CHARS = 20
_PUNCTUATION = set("，。！？；：、,.!?;:「」『』“”\"'（）()《》…—")
_SENTENCE_END = set("。！？!?")

_READ_CHUNK = 1 << 16  # bytes per read: far more than one poem entry, and small beside any real corpus


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
        entries = _json_entries(stream, name) if kind == "json" else _text_entries(stream, name)
        for where, item in entries:
            self._add(where, item)

    def finish(self) -> tuple[list[Poem], ImportReport]:
        report = self.report
        if not self.poems:
            raise CorpusError(f"{', '.join(report.files)}: no poems found{_describe(report)}")
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
        with open_corpus_file(path) as fh:
            first = _first_non_space(fh, str(path))
        if first is None:
            raise CorpusError(f"{path}: file is empty")
        # JSON by extension or by its opening bracket (a .txt export of JSON is still JSON).
        kind: Literal["json", "text"] = (
            "json" if _kind_by_name(path.name) == "json" or first in b"[{" else "text"
        )
        with open_corpus_file(path) as fh:
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

    Poems without text, with lost characters (□), repeating an earlier poem, or in a malformed entry (a field
    of the wrong type) are skipped and counted in the report with the first place of each; a file that is
    not UTF-8 or not JSON where JSON is due raises CorpusError naming the file and the place.
    """
    importer = Importer(keep_script=keep_script)
    for path in [paths] if isinstance(paths, str | Path) else paths:
        importer.add_path(Path(path))
    return importer.finish()


def _describe(report: ImportReport) -> str:
    """What an import skipped, for the message of an import that kept nothing."""
    if not report.skipped:
        return ""
    counts = ", ".join(f"{n} {reason}" for reason, n in report.skipped.most_common())
    return f" (skipped {counts}; first: {report.first_skipped[report.skipped.most_common(1)[0][0]]})"


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


def _clean_lines(lines: Iterable[str]) -> tuple[str, ...]:
    """Lines stripped, without empty ones and without lines of bare punctuation (a lone "。" paragraph is a
    digitisation artefact in the chinese-poetry files)."""
    stripped = (s.strip() for s in lines)
    return tuple(s for s in stripped if any(ch.isalnum() for ch in s))


# --- JSON entries -----------------------------------------------------------------------------------------------


class _Malformed(Exception):
    """An entry the importer skips; the message says what is wrong with it."""


def _json_entries(stream: BinaryIO, name: str) -> Iterator[tuple[str, Poem | str]]:
    """(position, Poem or skip reason) for every entry of a top-level list, a list of lists, or our format."""
    values = _JsonValues(stream, name)
    for index, value in enumerate(values):
        if isinstance(value, list):  # a list of lists: the entries of the inner list, numbered within it
            for sub, entry in enumerate(value):
                yield _entry(entry, f"{name}: entry [{index}][{sub}]")
        else:
            yield _entry(value, f"{name}: entry [{index}]")


def _entry(entry: Any, where: str) -> tuple[str, Poem | str]:
    try:
        if not isinstance(entry, dict):
            raise _Malformed(f"expected an object, found {_type_name(entry)}")
        fields = {
            "title": entry.get("title", entry.get("rhythmic", "")),
            "author": entry.get("author", ""),
            "dynasty": entry.get("dynasty", ""),
        }
        if isinstance(fields["title"], str) and fields["title"]:
            where += f" ({' '.join(fields['title'].split())})"
        for name, value in fields.items():
            if not isinstance(value, str):
                raise _Malformed(f"field '{name}' must be a string, found {_type_name(value)}")
        lines = _entry_lines(entry)
    except _Malformed as err:
        return f"{where}: {err}", SKIP_MALFORMED
    if not lines:
        return where, SKIP_NO_TEXT
    # whitespace runs (a newline too) become one space: a title is one line
    title, author, dynasty = (" ".join(value.split()) for value in fields.values())
    return where, Poem(title, sys.intern(author), sys.intern(dynasty), lines)


def _entry_lines(entry: dict[str, Any]) -> tuple[str, ...]:
    for name in ("paragraphs", "lines", "content"):
        if name not in entry:
            continue
        value = entry[name]
        if isinstance(value, str):
            return _clean_lines(_content_lines(value))
        if not isinstance(value, list):
            raise _Malformed(
                f"field '{name}' must be a list of strings or a string, found {_type_name(value)}"
            )
        odd = next((i for i, item in enumerate(value) if not isinstance(item, str)), None)
        if odd is not None:
            found = _type_name(value[odd])
            raise _Malformed(
                f"field '{name}' must be a list of strings or a string; {name}[{odd}] is {found}"
            )
        # a list item holding a newline is several lines
        return _clean_lines(line for item in value for line in item.splitlines())
    return ()


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "bool", type(None): "null"}.get(
        type(value), type(value).__name__
    )


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


class _JsonValues:
    """The entries of one JSON document, one at a time: the elements of a top-level list, or of the "poems"
    list of our format's object.

    ijson parses and builds each entry; this class follows the top level of its events (to check our
    format's fields and to know where the parser is) and turns its errors into CorpusErrors that name the
    file and the place.
    """

    def __init__(self, stream: BinaryIO, name: str):
        self.stream, self.name = stream, name
        self.keys: set[str] = set()  # our format's top-level keys
        self.format: Any = None
        self.place = "at the start"
        self.entries = 0  # entries read whole

    def __iter__(self) -> Iterator[Any]:
        events = self._followed(
            ijson.parse(_Utf8Stream(self.stream, self.name), buf_size=_READ_CHUNK, use_float=True)
        )
        try:
            _, event, value = next(events, ("", "end of file", None))
            if event not in ("start_array", "start_map"):
                found = "end of file" if event == "end of file" else repr(value)
                self._fail(f"expected a JSON list of poems or our format's object, found {found}")
            for entry in ijson.items(events, "item" if event == "start_array" else "poems.item"):
                yield entry
                self.entries += 1
                self.place = f"in entry [{self.entries}]"
        except ijson.JSONError as err:
            text = err.args[0] if err.args else ""
            reason = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
            self._fail(reason.split("\n", 1)[0])
        if event == "start_map" and (self.format != FORMAT_VERSION or "poems" not in self.keys):
            raise CorpusError(
                f'{self.name}: a top-level object must be our format {{"format": 1, "poems": [...]}}'
            )

    def _followed(self, events: Iterator[tuple[str, str, Any]]) -> Iterator[tuple[str, str, Any]]:
        """The events unchanged, noting the top level on the way."""
        for item in events:
            prefix, event, value = item
            if prefix == "" and event == "map_key":
                self.keys.add(value)
            elif prefix == "format" and event not in ("start_map", "start_array"):
                self.format = value
            elif prefix in ("", "poems") and event == "start_array":
                self.place = "in entry [0]"
            elif prefix in ("", "poems") and event == "end_array":
                self.place = "after the last entry"
            if prefix == "" and event in ("end_array", "end_map"):
                self.place = "after the end of the JSON document"
            yield item

    def _fail(self, message: str) -> None:
        raise CorpusError(f"{self.name}: invalid JSON {self.place}: {message}")


class _Utf8Stream:
    """A binary stream passed on unchanged after one check: every byte belongs to UTF-8 text (a leading BOM
    is dropped). ijson would take bad bytes for a JSON syntax error; this names the offset and line."""

    def __init__(self, stream: BinaryIO, name: str):
        self.stream, self.name = stream, name
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.offset, self.lines = 0, 1  # of the next byte read
        self._start = True  # no byte read yet

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        raw = _read_chunk(self.stream, self.name, size)
        if self._start:
            raw = self._drop_bom(raw)
        pending = len(self._utf8.getstate()[0])  # bytes of a character cut off by the previous read
        try:
            self._utf8.decode(raw, final=not raw)
        except UnicodeDecodeError as err:
            offset = self.offset - pending + err.start
            line = self.lines + err.object[: err.start].count(b"\n")
            raise CorpusError(
                f"{self.name}: not UTF-8 text (invalid byte at offset {offset}, line {line})"
            ) from err
        self.offset += len(raw)
        self.lines += raw.count(b"\n")
        return raw

    def _drop_bom(self, raw: bytes) -> bytes:
        """The first bytes without a BOM; reads on while they might be a BOM cut short."""
        while raw and len(raw) < len(codecs.BOM_UTF8) and codecs.BOM_UTF8.startswith(raw):
            more = _read_chunk(self.stream, self.name)
            if not more:
                break
            raw += more
        self._start = False
        if raw.startswith(codecs.BOM_UTF8):
            self.offset = len(codecs.BOM_UTF8)
            raw = raw[len(codecs.BOM_UTF8) :] or _read_chunk(self.stream, self.name)
        return raw


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


# --- reading helpers: every failure names the file -------------------------------------------------------------


def _kind_by_name(name: str) -> str | None:
    base = name.lower().removesuffix(".gz").removesuffix(".xz")
    return "json" if base.endswith(".json") else "text" if base.endswith(".txt") else None


def _first_non_space(fh: BinaryIO, name: str) -> int | None:
    """The first byte that is not whitespace (or a BOM), or None for an empty file."""
    chunk = _read_chunk(fh, name).removeprefix(codecs.BOM_UTF8)
    while chunk:
        stripped = chunk.lstrip(b" \t\r\n")
        if stripped:
            return stripped[0]
        chunk = _read_chunk(fh, name)
    return None


def _read_chunk(fh: BinaryIO, name: str, size: int | None = None) -> bytes:
    try:
        return fh.read(_READ_CHUNK if size is None or size < 0 else size)
    except (OSError, EOFError, lzma.LZMAError) as err:
        raise CorpusError(f"{name}: cannot read ({err})") from err
