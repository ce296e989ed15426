"""An exercise's starter in each language: `starter.py` is the English one, `starter.de.py` and
`starter.zh.py` beside it the German and Chinese (`starter.toml`, `starter.de.toml`, … for an answer
file). The variants are the same code: only docstrings, comments and the text of the errors the file
raises differ (in TOML, only comments).

starter_path(folder, file_name, "de")   # the file a German learner starts from (English if none)
starter_problems(ex)                    # for `python -m tutor check`: a missing variant, drifted code
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

from tutor.content.problems import Problem, error, line_of, warning
from tutor.content.prose import toml_error_line, toml_error_message
from tutor.i18n import FALLBACK, LANGS

FIELD = "starter"


def variant_path(folder: Path, file_name: str, lang: str) -> Path:
    """Where the starter in `lang` is written: starter.py for English, starter.LANG.py otherwise."""
    suffix = Path(file_name).suffix
    return folder / (f"starter{suffix}" if lang == FALLBACK else f"starter.{lang}{suffix}")


def starter_path(folder: Path, file_name: str, lang: str = FALLBACK) -> Path:
    """The starter a learner in `lang` is given: its variant, or the English one when there is none."""
    variant = variant_path(folder, file_name, lang)
    return variant if variant.is_file() else variant_path(folder, file_name, FALLBACK)


def variants(folder: Path, file_name: str) -> dict[str, Path]:
    """{lang: path} of the starters that exist, English first."""
    found = {lang: variant_path(folder, file_name, lang) for lang in LANGS}
    return {lang: path for lang, path in found.items() if path.is_file()}


def starter_problems(ex) -> list[Problem]:
    """A language the exercise's task is written in but its starter is not (a warning: that learner
    gets the English starter), and a variant that is not the English starter's code (an error, at the
    first line that differs). Nothing when the English starter itself is missing (reported elsewhere)."""
    folder = Path(ex.folder or ".")
    english = variant_path(folder, ex.file_name, FALLBACK)
    if not english.is_file():
        return []
    problems: list[Problem] = []
    for lang in (lang for lang in LANGS if lang != FALLBACK):
        variant = variant_path(folder, ex.file_name, lang)
        if not variant.is_file():
            if lang in ex.task:
                problems.append(warning(variant, f"file is missing: a learner in {lang!r} gets the English "
                                        f"starter ({english.name})", FIELD))  # fmt: skip
            continue
        problems += compare(english, variant)
    return problems


def compare(english: Path, variant: Path) -> list[Problem]:
    """Problems that make `variant` another program than `english`: unreadable, unparsable, or code
    that differs beyond docstrings, comments and raised messages (TOML: beyond comments)."""
    texts = {}
    for path in (english, variant):
        try:
            texts[path] = path.read_text(encoding="utf-8").removeprefix("\ufeff")
        except (OSError, UnicodeDecodeError) as err:
            return [error(path, f"cannot read: {getattr(err, 'strerror', None) or err}", FIELD)]
    if english.suffix == ".py":
        return _compare_python(english, variant, texts)
    if english.suffix == ".toml":
        return _compare_toml(english, variant, texts)
    return [] if texts[english] == texts[variant] else [error(variant, f"differs from {english.name}", FIELD)]


# --- Python: the AST without docstrings, raised messages blanked ------------------------------------


class _Normalise(ast.NodeTransformer):
    """Docstrings removed; every string inside a `raise` (the message, f-string text) made empty."""

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            if isinstance(body[0].value.value, str):
                node.body = body[1:]
        return self.generic_visit(node)

    visit_Module = visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _body

    def visit_Raise(self, node):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                sub.value = ""
        return node


def _normalised(text: str, path: Path) -> ast.Module:
    return _Normalise().visit(ast.parse(text, str(path)))


def _compare_python(english: Path, variant: Path, texts: dict[Path, str]) -> list[Problem]:
    trees = {}
    for path in (english, variant):
        try:
            trees[path] = _normalised(texts[path], path)
        except SyntaxError as err:
            return [error(path, f"syntax error: {err.msg}", FIELD, err.lineno)]
    where = _difference(trees[english], trees[variant], 1, 1)
    if where is None:
        return []
    line_en, line_var = where
    return [error(variant, f"not the same code as {english.name} line {line_en}: only docstrings, comments "
                  "and the messages of raised errors may differ", FIELD, line_var)]  # fmt: skip


def _difference(a: Any, b: Any, line_a: int, line_b: int) -> tuple[int, int] | None:
    """(line in a, line in b) of the first place where the two trees differ, or None."""
    line_a, line_b = getattr(a, "lineno", line_a), getattr(b, "lineno", line_b)
    if type(a) is not type(b):
        return line_a, line_b
    if isinstance(a, ast.AST):
        for name in a._fields:
            found = _difference(getattr(a, name, None), getattr(b, name, None), line_a, line_b)
            if found:
                return found
        return None
    if isinstance(a, list):
        for x, y in zip(a, b, strict=False):
            found = _difference(x, y, line_a, line_b)
            if found:
                return found
        if len(a) != len(b):  # one goes on: the line of its first extra node, and where the other ends
            return _end(a, b, line_a), _end(b, a, line_b)
        return None
    return None if a == b else (line_a, line_b)


def _end(x: list, y: list, line: int) -> int:
    """The line of x's first node beyond the length of y, or of x's last node's end."""
    if len(x) > len(y):
        return getattr(x[len(y)], "lineno", line)
    return getattr(x[-1], "end_lineno", line) if x else line


# --- TOML: the same keys in the same order, the same values -----------------------------------------


def _compare_toml(english: Path, variant: Path, texts: dict[Path, str]) -> list[Problem]:
    data = {}
    for path in (english, variant):
        try:
            data[path] = tomllib.loads(texts[path])
        except tomllib.TOMLDecodeError as err:
            return [error(path, toml_error_message(err), FIELD, toml_error_line(err))]
    where = _toml_difference(data[english], data[variant], ())
    if where is None:
        return []
    loc_en, loc_var = where
    key = ".".join(str(part) for part in max(loc_var, loc_en, key=len))  # a key left out: the English one
    line_en = line_of(texts[english], loc_en) if loc_en else None
    there = f"{english.name} line {line_en}" if line_en else english.name
    return [error(variant, f"{key}: not as in {there}: the same keys in the same order with the same "
                  "values; only comments may differ", FIELD, line_of(texts[variant], loc_var))]  # fmt: skip


def _toml_difference(a: Any, b: Any, loc: tuple) -> tuple[tuple, tuple] | None:
    """The paths in `a` and in `b` of the first key or value where they differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys_a, keys_b = list(a), list(b)
        for i in range(max(len(keys_a), len(keys_b))):
            if i >= len(keys_a) or i >= len(keys_b) or keys_a[i] != keys_b[i]:  # renamed, missing or extra
                return (*loc, *keys_a[i : i + 1]), (*loc, *keys_b[i : i + 1])
        for key in a:
            found = _toml_difference(a[key], b[key], (*loc, key))
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _toml_difference(x, y, (*loc, i))
            if found:
                return found
        return None
    return None if type(a) is type(b) and a == b else (loc, loc)
