"""Problems found in lesson files, and how pydantic's errors become them (with a line where we can).

A problem says what is wrong and where: file, line (None when it cannot be placed), and the field
path inside the file (`question[heads].answer`, `section[rope].experiment[2]`). What is wrong is a
catalogue text (`Said`), worded in the reader's language where it is shown; its values (paths,
keys, pydantic's own reason) stay as they are.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from tutor.texts import Said

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    severity: Severity
    file: Path
    line: int | None
    field: str
    said: Said | str  # what is wrong; a str only from the author's tools (tutor.grading.authoring)

    @property
    def message(self) -> str:
        """What is wrong, in English."""
        return self.in_lang("en")

    def in_lang(self, lang: str) -> str:
        return self.said.in_lang(lang) if isinstance(self.said, Said) else self.said

    def format(self, relative_to: Path | None = None, lang: str = "en") -> str:
        """`FILE:LINE: field: message` (line and field left out when unknown), in `lang`."""
        where = str(_relative(self.file, relative_to))
        if self.line is not None:
            where += f":{self.line}"
        message = self.in_lang(lang)
        return f"{where}: {self.field}: {message}" if self.field else f"{where}: {message}"


def _relative(path: Path, base: Path | None) -> Path:
    if base is None:
        return path
    try:
        return path.resolve().relative_to(base.resolve())
    except ValueError:
        return path


def error(file: Path, message: Said | str, field: str = "", line: int | None = None) -> Problem:
    return Problem("error", file, line, field, message)


def warning(file: Path, message: Said | str, field: str = "", line: int | None = None) -> Problem:
    return Problem("warning", file, line, field, message)


# --- pydantic errors -> problems ------------------------------------------------------------------


def all_field_names(*models: type[BaseModel]) -> set[str]:
    """Every field name of these models and the models inside them: the vocabulary for "did you mean"."""
    names: set[str] = set()
    seen: set[type] = set()

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            names.add(name)
            for sub in _models_in(info.annotation):
                walk(sub)

    for m in models:
        walk(m)
    return names


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    found = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.append(annotation)
    for arg in getattr(annotation, "__args__", ()) or ():
        found.extend(_models_in(arg))
    for meta in getattr(annotation, "__metadata__", ()) or ():
        found.extend(_models_in(meta))
    return found


def validation_problems(
    err: ValidationError, file: Path, text: str, data: Any, vocabulary: set[str], prefix: tuple = ()
) -> list[Problem]:
    """One problem per pydantic error: readable field path, a line found in the TOML text, a plain message."""
    problems = []
    for e in err.errors(include_url=False):
        loc = _drop_union_tags(prefix + tuple(e["loc"]), data)
        problems.append(
            error(file, _message(e, loc, vocabulary), field=field_path(loc, data), line=line_of(text, loc))
        )
    return problems


def _drop_union_tags(loc: tuple, data: Any) -> tuple:
    """pydantic puts the union member in the path (`question.0.number.answer`); the file has no such key."""
    out: list = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part not in node and node.get("type") == part:
            continue
        if isinstance(part, str) and "[" in part:  # a function-validator label, not a key
            continue
        out.append(part)
        node = _child(node, part)
    return tuple(out)


def _child(node: Any, part: Any) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


def field_path(loc: tuple, data: Any) -> str:
    """`question[heads].choices[b].text`: list items are named by their id where they have one, else #n (from 1)."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            item = _child(node, part)
            ident = item.get("id") if isinstance(item, dict) else None
            out += f"[{ident}]" if isinstance(ident, str) and ident else f"[#{part + 1}]"
        else:
            out += ("." if out else "") + str(part)
        node = _child(node, part)
    return out


def _message(e: Mapping[str, Any], loc: tuple, vocabulary: set[str]) -> Said:
    kind, msg = e["type"], e["msg"]
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else ""
        close = difflib.get_close_matches(key, sorted(vocabulary), n=1)
        return (
            Said("problem.key.unknown_near", key=key, near=close[0])
            if close
            else Said("problem.key.unknown", key=key)
        )
    if kind == "missing":
        return Said("problem.key.missing")
    if kind.startswith("value_error"):  # the schema's own check: pydantic's words, as they are
        return Said("problem.detail", detail=msg.removeprefix("Value error, "))
    if isinstance(e.get("input"), dict | list):
        return Said("problem.detail", detail=f"{msg[0].lower()}{msg[1:]}")
    shown = repr(e.get("input"))
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return Said("problem.detail_got", detail=f"{msg[0].lower()}{msg[1:]}", got=shown)


# --- finding a line in TOML text ------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def line_of(text: str, loc: tuple) -> int | None:
    """Best effort: the line of the key at `loc` in TOML text (array tables counted by index).

    Walks the path narrowing a region of lines: `[[question]]` headers pick the n-th question,
    `key =` or `key.` lines find a key. Returns the deepest line it could find, or None.
    """
    lines = text.splitlines()
    start, end = 0, len(lines)
    found: int | None = None
    header_path = ""
    i = 0
    while i < len(loc):
        part = loc[i]
        if isinstance(part, int):
            i += 1
            continue
        dotted = f"{header_path}.{part}" if header_path else str(part)
        index = loc[i + 1] if i + 1 < len(loc) and isinstance(loc[i + 1], int) else None
        headers = [n for n in range(start, end) if (m := _HEADER.match(lines[n])) and m.group(1) == dotted]
        if headers:  # a [table] or [[array of tables]] section
            pick = headers[index] if index is not None and index < len(headers) else headers[0]
            found, start = pick + 1, pick + 1
            nxt = [
                n for n in range(start, end) if _HEADER.match(lines[n]) and not _is_below(lines[n], dotted)
            ]
            end = nxt[0] if nxt else end
            header_path = dotted
            i += 2 if index is not None else 1
            continue
        key = re.compile(rf"^\s*(\"?){re.escape(str(part))}\1\s*[=.]")
        hit = next((n for n in range(start, end) if key.match(lines[n])), None)
        if hit is None:
            inline = re.compile(rf"[{{,]\s*{re.escape(str(part))}\s*=")  # key inside an inline table
            hit = next((n for n in range(start, end) if inline.search(lines[n])), None)
        if hit is None:
            break
        found = hit + 1
        start = hit
        i += 1
    return found


def _is_below(line: str, dotted: str) -> bool:
    m = _HEADER.match(line)
    return m is not None and m.group(1).startswith(dotted + ".")
