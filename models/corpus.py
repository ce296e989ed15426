"""The poem corpus: the shipped poems, a deterministic train/val split, and an importer for learners' corpora.

Pure Python (no torch) so the CLI and tests can use it without loading the model stack.

Our own file format (models/data/poems.json)::

    {"format": 1, "poems": [{"title": "登鹳雀楼", "author": "王之涣", "dynasty": "唐",
                             "lines": ["白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"]}, ...]}

Characters are used exactly as given: the importer does NOT convert traditional to simplified (no pure-Python
converter is a declared dependency). A learner training on a traditional corpus gets a traditional-character model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from models.atomic import atomic_write
from tutor.errors import TutorError

FORMAT_VERSION = 1

# Poems that always go to the training split, whatever their hash says: the lessons use the first line of
# 登鹳雀楼 as the running example and prompt, so the shipped model must have seen it.
ALWAYS_TRAIN: frozenset[tuple[str, str]] = frozenset({("登鹳雀楼", "王之涣")})

# A plain-text block's first line counts as a title only if it is short and carries no punctuation.
_TITLE_MAX_CHARS = 20
_PUNCTUATION = set("，。！？；：、,.!?;:「」『』“”\"'（）()《》…—")
_SENTENCE_END = set("。！？!?")


class CorpusError(TutorError):
    """A corpus file cannot be read; the message names the file and the entry or position."""


@dataclass(frozen=True)
class Poem:
    title: str
    author: str
    dynasty: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


# ---------------------------------------------------------------------------------------------------------------
# Our format


def _default_file() -> Any:
    # importlib.resources so the shipped file is found from a source checkout and from an installed wheel alike.
    return resources.files("models") / "data" / "poems.json"


def load_poems(path: Path | None = None) -> list[Poem]:
    """Load poems in our format (default: the shipped corpus). Raises CorpusError on malformed input."""
    if path is None:
        source = _default_file()
        name = str(source)
        try:
            raw = source.read_bytes()
        except OSError as err:
            raise CorpusError(f"{name}: cannot read the shipped corpus ({err.strerror or err})") from err
    else:
        name = str(path)
        raw = _read_bytes(Path(path))
    data = _parse_json(_decode(raw, name), name)
    if not isinstance(data, dict) or "poems" not in data:
        raise CorpusError(f'{name}: expected an object {{"format": 1, "poems": [...]}} at the top level')
    return _poems_from_our_format(data, name)


def _poems_from_our_format(data: dict[str, Any], name: str) -> list[Poem]:
    if data.get("format") != FORMAT_VERSION:
        raise CorpusError(f"{name}: field 'format' must be {FORMAT_VERSION}, found {data.get('format')!r}")
    entries = data["poems"]
    if not isinstance(entries, list):
        raise CorpusError(f"{name}: field 'poems' must be a list, found {type(entries).__name__}")
    if not entries:
        raise CorpusError(f"{name}: field 'poems' is empty")
    poems = []
    for i, entry in enumerate(entries):
        where = f"{name}: poems[{i}]"
        if not isinstance(entry, dict):
            raise CorpusError(f"{where}: expected an object, found {type(entry).__name__}")
        if isinstance(entry.get("title"), str):
            where += f" ({entry['title']})"
        for field in ("title", "author", "dynasty"):
            if not isinstance(entry.get(field), str):
                raise CorpusError(f"{where}: field '{field}' must be a string")
        lines = entry.get("lines")
        if not isinstance(lines, list) or not lines:
            raise CorpusError(f"{where}: field 'lines' must be a non-empty list of strings")
        for j, line in enumerate(lines):
            if not isinstance(line, str) or not line.strip() or "\n" in line:
                raise CorpusError(f"{where}: lines[{j}] must be a non-empty single-line string")
        poems.append(Poem(entry["title"], entry["author"], entry["dynasty"], tuple(s.strip() for s in lines)))
    return poems


def save_poems(poems: Iterable[Poem], path: Path) -> None:
    """Write poems in our format atomically: a temp file in the same directory, then os.replace."""
    # One poem per line: valid JSON that stays readable and diffs well.
    rows = [
        json.dumps(
            {"title": p.title, "author": p.author, "dynasty": p.dynasty, "lines": list(p.lines)},
            ensure_ascii=False,
        )
        for p in poems
    ]
    body = f'{{"format": {FORMAT_VERSION}, "poems": [\n' + ",\n".join(rows) + "\n]}\n"
    atomic_write(path, lambda fh: fh.write(body.encode("utf-8")))


# ---------------------------------------------------------------------------------------------------------------
# Split and training text


def _split_key(poem: Poem) -> float:
    """A number in [0, 1) that depends only on the poem (never on Python's per-process randomised hash()).

    Title, author and first line: the first line keeps untitled, anonymous imported poems apart, while fixing a
    typo further down a poem does not move it between train and val.
    """
    ident = "\x1f".join((poem.title, poem.author, poem.lines[0] if poem.lines else ""))
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
    ordered = sorted(poems, key=lambda p: (_split_key(p), p.title, p.author, p.lines))
    movable = [p for p in ordered if (p.title, p.author) not in ALWAYS_TRAIN]
    if len(ordered) < 2 or not movable:
        raise CorpusError(f"need at least 2 poems (one not pinned to train) to split, got {len(ordered)}")
    val_ids = {id(p) for p in movable if _split_key(p) < val_fraction} or {id(movable[0])}
    if len(val_ids) == len(ordered):  # keep at least one poem to train on
        val_ids.discard(id(movable[-1]))
    train = [p for p in ordered if id(p) not in val_ids]
    val = [p for p in ordered if id(p) in val_ids]
    return train, val


def corpus_text(poems: Iterable[Poem]) -> str:
    """The training text: a poem's lines joined by newline, poems separated by a blank line."""
    return "\n\n".join(p.text for p in poems)


# ---------------------------------------------------------------------------------------------------------------
# Importer for learners' corpora


def import_corpus(path: Path) -> list[Poem]:
    """Read a learner's corpus: our format, the open poetry JSON layout, or plain UTF-8 text.

    - JSON list of objects with "title" (or "rhythmic" for ci), "author" and "paragraphs", "lines" or
      "content" (a string); a list of such lists; or a directory of such .json files (read in name order).
    - Plain text: poems separated by blank lines; a short first line without punctuation is the title.
    Characters are kept as given (no traditional/simplified conversion).
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".json")
        if not files:
            raise CorpusError(f"{path}: directory contains no .json files")
        return [poem for f in files for poem in import_corpus(f)]
    name = str(path)
    text = _decode(_read_bytes(path), name)
    if not text.strip():
        raise CorpusError(f"{name}: file is empty")
    # JSON by extension or by its opening bracket (a .txt export of JSON is still JSON).
    if path.suffix.lower() == ".json" or text.lstrip()[0] in "[{":
        poems = _poems_from_json(_parse_json(text, name), name)
    else:
        poems = _poems_from_text(text)
    if not poems:
        raise CorpusError(f"{name}: no poems found")
    return poems


def _poems_from_json(data: Any, name: str) -> list[Poem]:
    if isinstance(data, dict):
        if "poems" in data and "format" in data:
            return _poems_from_our_format(data, name)
        raise CorpusError(f'{name}: a top-level object must be our format {{"format": 1, "poems": [...]}}')
    if not isinstance(data, list):
        raise CorpusError(f"{name}: expected a JSON list of poems, found {type(data).__name__}")
    # "A file of such lists": flatten one level of nesting, keeping positions for messages.
    entries: list[tuple[str, Any]] = []
    for i, item in enumerate(data):
        if isinstance(item, list):
            entries.extend((f"[{i}][{j}]", sub) for j, sub in enumerate(item))
        else:
            entries.append((f"[{i}]", item))
    return [_poem_from_open_entry(entry, f"{name}: entry {pos}") for pos, entry in entries]


def _poem_from_open_entry(entry: Any, where: str) -> Poem:
    if not isinstance(entry, dict):
        raise CorpusError(f"{where}: expected an object, found {type(entry).__name__}")
    title = entry.get("title", entry.get("rhythmic"))
    if not isinstance(title, str):
        raise CorpusError(f"{where}: missing string field 'title' (or 'rhythmic')")
    where += f" ({title})"
    author = entry.get("author")
    if not isinstance(author, str):
        raise CorpusError(f"{where}: missing string field 'author'")
    dynasty = entry.get("dynasty", "")
    if not isinstance(dynasty, str):
        raise CorpusError(f"{where}: field 'dynasty' must be a string")
    for field in ("paragraphs", "lines"):
        if field in entry:
            value = entry[field]
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise CorpusError(f"{where}: field '{field}' must be a list of strings")
            lines = [s.strip() for s in value if s.strip()]
            break
    else:
        if "content" not in entry:
            raise CorpusError(f"{where}: missing field 'paragraphs', 'lines' or 'content'")
        if not isinstance(entry["content"], str):
            raise CorpusError(f"{where}: field 'content' must be a string")
        lines = _content_lines(entry["content"])
    if not lines:
        raise CorpusError(f"{where}: poem has no text")
    return Poem(title.strip(), author.strip(), dynasty.strip(), tuple(lines))


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


def _poems_from_text(text: str) -> list[Poem]:
    poems: list[Poem] = []
    block: list[str] = []
    for raw in [*text.splitlines(), ""]:
        line = raw.strip()
        if line:
            block.append(line)
            continue
        if block:
            first = block[0]
            is_title = (
                len(block) > 1
                and len(first) <= _TITLE_MAX_CHARS
                and not any(c in _PUNCTUATION for c in first)
            )
            title, body = (first, block[1:]) if is_title else ("", block)
            poems.append(Poem(title, "", "", tuple(body)))
            block = []
    return poems


# ---------------------------------------------------------------------------------------------------------------
# Reading helpers: every failure names the file and the position


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as err:
        raise CorpusError(f"{path}: file not found") from err
    except IsADirectoryError as err:
        raise CorpusError(f"{path}: is a directory, expected a file") from err
    except OSError as err:
        raise CorpusError(f"{path}: cannot read ({err.strerror or err})") from err


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
