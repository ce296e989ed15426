"""Every word the tutor itself says to a learner, in English, German and Chinese: one catalogue.

The words live in data, one file per language beside this module (`en.toml`, `de.toml`, `zh.toml`),
under dotted keys (`quiz.right`, `exp.heads.title`, `grade.first`); `say(key, lang, **values)` is the
one lookup. A key missing in a language falls back to English (a test keeps all three complete, with
the same placeholders). Lesson content (prose, quizzes, exercise texts) is the author's and comes
from the lesson files instead (`tutor.content.schema.pick`).

A text about a count has a form per plural category the language tells apart (`PLURAL_FORMS`):
`due.one = "{n} review due today"` and `due.other = "{n} reviews due today"` in English and German,
only `due.other` in Chinese; `say("home.due", lang, n=3)` picks the form by the value `n`.

Values are filled in the language's way: a number with its digit grouping and decimal mark
(`262,656` and `0.5` in English and Chinese, `262.656` and `0,5` in German), a nested text (anything
with an `in_lang(lang)` method: a `Said`, an error, an experiment's `Msg`) in the same language, a
list as its items joined the language's way (`a, b` or `a、b`), or one a line (`{problems:lines}`).
"""

from __future__ import annotations

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
    kept by the start-up cache (tutor.parse_cache) and used again while the TOML file and this code
    are unchanged."""
    from tutor import parse_cache

    source = HERE / f"{lang}.toml"
    kept = parse_cache.Kept(parse_cache.entry(HERE, lang), [source])
    texts = kept.load()
    if texts is None:
        import tomllib

        with source.open("rb") as f:
            texts = dict(_flatten(tomllib.load(f)))
        kept.save(texts)
    return texts


def _flatten(table: dict[str, Any], prefix: str = ""):
    for name, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{name}.")
        else:
            yield prefix + name, value


# The plural forms each language tells apart, by CLDR's names: English and German say "1 question" and
# "2 questions", Chinese has one form for every count.
PLURAL_FORMS = {"en": ("one", "other"), "de": ("one", "other"), "zh": ("other",)}


def plural_form(n: float, lang: str) -> str:
    """The form of a text with forms by count that goes with the count `n` in `lang`."""
    return "one" if n == 1 and "one" in PLURAL_FORMS.get(lang, ()) else "other"


def _text(key: str, lang: str, values: dict[str, Any]) -> str | None:
    """`key`'s text in `lang`: the text itself, or for a text with forms by count (a table of its
    forms, `key.one` and `key.other`) the form for the count `n`; None if `lang` lacks it."""
    table = catalogue(lang)
    if key in table:
        return table[key]
    if f"{key}.other" not in table:
        return None
    if "n" not in values:
        raise KeyError(f"{key} has forms by count: say it with n=")
    return table.get(f"{key}.{plural_form(values['n'], lang)}")


def has(key: str) -> bool:
    table = catalogue(FALLBACK)
    return key in table or f"{key}.other" in table


def say(key: str, lang: str = FALLBACK, /, **values: Any) -> str:
    """The text for `key` in `lang` (English where it is missing), with `values` filled in."""
    text = _text(key, lang if lang in LANGS else FALLBACK, values) or _text(key, FALLBACK, values)
    if text is None:
        raise KeyError(key)
    return _Filler(lang).vformat(text, (), values) if values else text


@cache
def typed(key: str) -> frozenset[str]:
    """What a learner may type for `key` (`typed.yes`, `typed.good`): the words of every language's
    comma-separated list, casefolded (a German learner's "y" is a yes too)."""
    return frozenset(
        word.strip().casefold() for lang in LANGS for word in catalogue(lang)[key].split(",") if word.strip()
    )


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
    return marked(text, lang)


def marked(text: str, lang: str) -> str:
    """A number written with English marks ("262,656.5") with `lang`'s (German: "262.656,5")."""
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
            return marked(format(value, format_spec), self.lang)
        return format(value, format_spec)
