"""Every word the tutor itself says to a learner, in English, German and Chinese: one catalogue.

The words live in data, one file per language beside this module (`en.toml`, `de.toml`, `zh.toml`),
under dotted keys (`quiz.right`, `exp.heads.title`, `grade.first`); `say(key, lang, **values)` is the
one lookup. A key missing in a language falls back to English (a test keeps all three complete, with
the same placeholders). Lesson content (prose, quizzes, exercise texts) is the author's and comes
from the lesson files instead (`tutor.content.schema.pick`).

Values are filled in the language's way: a number with its digit grouping and decimal mark
(`262,656` and `0.5` in English and Chinese, `262.656` and `0,5` in German), a nested text (anything
with an `in_lang(lang)` method: a `Said`, an error, an experiment's `Msg`) in the same language, a
list as its items joined the language's way (`a, b` or `a、b`), or one a line (`{problems:lines}`).
"""

from __future__ import annotations

import json
import string
from functools import cache
from pathlib import Path
from typing import Any

from tutor.i18n import FALLBACK, LANGS

HERE = Path(__file__).resolve().parent
_MARKS = {"de": str.maketrans({",": ".", ".": ","})}  # digit grouping and decimal mark swapped


@cache
def catalogue(lang: str) -> dict[str, str]:
    """`lang`'s texts by dotted key (the TOML tables flattened).

    Parsing the TOML takes longer than the app's first frame can spare, so the flattened table is
    also kept as JSON in __pycache__ beside this module, the way Python keeps bytecode: used while
    the TOML file's size and modification time are the ones it was made from, and rewritten (when
    the folder is writable) otherwise."""
    source = HERE / f"{lang}.toml"
    st = source.stat()
    stamp = [st.st_size, st.st_mtime_ns]
    saved = HERE / "__pycache__" / f"{lang}.toml.json"
    try:
        data = json.loads(saved.read_text(encoding="utf-8"))
        if data["stamp"] == stamp:
            return data["texts"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    import tomllib

    with source.open("rb") as f:
        texts = dict(_flatten(tomllib.load(f)))
    try:
        from tutor.fileio import atomic_write_text

        atomic_write_text(saved, json.dumps({"stamp": stamp, "texts": texts}, ensure_ascii=False))
    except OSError:  # a read-only install parses the TOML each time
        pass
    return texts


def _flatten(table: dict[str, Any], prefix: str = ""):
    for name, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{name}.")
        else:
            yield prefix + name, value


def has(key: str) -> bool:
    return key in catalogue(FALLBACK)


def say(key: str, lang: str = FALLBACK, /, **values: Any) -> str:
    """The text for `key` in `lang` (English where it is missing), with `values` filled in."""
    text = catalogue(lang if lang in LANGS else FALLBACK).get(key) or catalogue(FALLBACK)[key]
    return _Filler(lang).vformat(text, (), values) if values else text


class Said:
    """A catalogue text not yet worded: its key and values, worded by `in_lang(lang)` where it is
    shown, so one text can be shown in any language (a lesson file's problem, a piece of an error).
    An error carries the same (`tutor.errors.TutorError`); an experiment's `Msg` is its JSON form."""

    __slots__ = ("key", "values")

    def __init__(self, key: str, /, **values: Any) -> None:
        self.key, self.values = key, values

    def in_lang(self, lang: str) -> str:
        return say(self.key, lang, **self.values)

    def __str__(self) -> str:
        return self.in_lang(FALLBACK)

    def __repr__(self) -> str:
        return f"Said({self.key!r}, **{self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Said) and (self.key, self.values) == (other.key, other.values)

    def __hash__(self) -> int:
        return hash(self.key)


def number(value: float, lang: str = FALLBACK, digits: int = 4, decimals: int | None = None) -> str:
    """A number as a learner reads it: integers whole and grouped (262,656), other numbers to
    `digits` significant digits, in scientific notation when tiny or huge (2.4e-06), or with a fixed
    number of `decimals` (0.42)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        text = f"{value:,}"
    elif decimals is not None:
        text = f"{value:,.{decimals}f}"
    elif value == 0:
        text = "0"
    elif abs(value) >= 1e5 or abs(value) < 1e-3:
        text = f"{value:.{max(digits - 1, 0)}e}"
    else:
        text = f"{value:.{digits}g}"
    return text.translate(_MARKS[lang]) if lang in _MARKS else text


class _Filler(string.Formatter):
    def __init__(self, lang: str) -> None:
        self.lang = lang

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, list | tuple) and format_spec == "lines":  # one item a line, indented
            return "".join("\n  " + self.format_field(v, "") for v in value)
        if isinstance(value, list | tuple):
            value = say("word.list_sep", self.lang).join(self.format_field(v, "") for v in value)
        elif hasattr(value, "in_lang"):
            value = value.in_lang(self.lang)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if not format_spec:
                return number(value, self.lang)
            text = format(value, format_spec)
            return text.translate(_MARKS[self.lang]) if self.lang in _MARKS else text
        return format(value, format_spec)
