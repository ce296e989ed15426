"""An exercise's files in each language: the starter a learner begins from and the reference
solution shown after a pass. `starter.py` and `solution.py` (`starter.toml` and `solution.md` for a
runs exercise) are the English ones; beside them `starter.de.py`, `solution.zh.py`, … the German and
Chinese. A variant is the same program: only docstrings, comments and the text of the errors the file
raises differ (TOML: only comments; Markdown: the prose, not its code and figures).

exercise_file(ex, "starter", "de")   # the starter a German learner is given (English if none)
exercise_file(ex, "solution", "zh")  # the reference a Chinese learner is shown
variants(ex, "solution")             # {lang: path} of the files that exist, English first
variant_problems(ex)                 # for `python -m tutor check`: a missing variant, drifted code
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

from tutor.content.problems import Problem, error, line_of, warning
from tutor.content.tomlfile import toml_error_line, toml_error_message
from tutor.i18n import FALLBACK, LANGS

ROLES = ("starter", "solution")


def english_file(ex, role: str) -> Path:
    """The English `role` file of an exercise: starter.py (starter.toml for an answer file), and
    solution.py (solution.md for a runs exercise)."""
    if role == "starter":
        suffix = Path(ex.file_name).suffix
    else:
        suffix = ".py" if ex.kind == "code" else ".md"
    return Path(ex.folder or ".") / f"{role}{suffix}"


def variant_path(english: Path, lang: str) -> Path:
    """Where the variant in `lang` of an English file is written: solution.py -> solution.de.py."""
    return english if lang == FALLBACK else english.with_name(f"{english.stem}.{lang}{english.suffix}")


def exercise_file(ex, role: str, lang: str = FALLBACK) -> Path:
    """The `role` file a learner in `lang` is given: its variant, or the English one when there is none."""
    variant = variant_path(english_file(ex, role), lang)
    return variant if variant.is_file() else english_file(ex, role)


def variants(ex, role: str) -> dict[str, Path]:
    """{lang: path} of the `role` files that exist, English first."""
    found = {lang: variant_path(english_file(ex, role), lang) for lang in LANGS}
    return {lang: path for lang, path in found.items() if path.is_file()}


def variant_problems(ex) -> list[Problem]:
    """For the starter and the solution: a language the exercise's task is written in but the file is
    not (a warning: that learner gets the English one), and a variant that is not the English file's
    code (an error, at the first line that differs). Nothing for a role whose English file is missing
    (reported elsewhere)."""
    problems: list[Problem] = []
    for role in ROLES:
        english = english_file(ex, role)
        if not english.is_file():
            continue
        for lang in (lang for lang in LANGS if lang != FALLBACK):
            variant = variant_path(english, lang)
            if not variant.is_file():
                if lang in ex.task:
                    problems.append(
                        warning(
                            variant,
                            f"file is missing: a learner in {lang!r} gets the English "
                            f"{role} ({english.name})",
                            role,
                        )
                    )
                continue
            problems += compare(english, variant, role)
    return problems


def compare(english: Path, variant: Path, field: str = "starter") -> list[Problem]:
    """Problems (in `field`) that make `variant` another program than `english`: unreadable,
    unparsable, or code that differs beyond docstrings, comments and raised messages (TOML: beyond
    comments; Markdown: beyond the prose)."""
    texts = {}
    for path in (english, variant):
        try:
            texts[path] = path.read_text(encoding="utf-8").removeprefix("\ufeff")
        except (OSError, UnicodeDecodeError) as err:
            return [error(path, f"cannot read: {getattr(err, 'strerror', None) or err}", field)]
    if english.suffix == ".py":
        return _compare_python(english, variant, texts, field)
    if english.suffix == ".toml":
        return _compare_toml(english, variant, texts, field)
    if english.suffix == ".md":
        return _compare_markdown(english, variant, texts, field)
    return [] if texts[english] == texts[variant] else [error(variant, f"differs from {english.name}", field)]


# --- Python: the AST without docstrings, raised messages blanked ------------------------------------


class _Normalise(ast.NodeTransformer):
    """Docstrings removed; every string inside a `raise` made empty, and an f-string's text left out
    (a translation may start or end it with a value)."""

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            if isinstance(body[0].value.value, str):
                node.body = body[1:]
        return self.generic_visit(node)

    visit_Module = visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _body

    def visit_Raise(self, node):
        specs = [sub.format_spec for sub in ast.walk(node) if isinstance(sub, ast.FormattedValue)]
        code = {id(part) for spec in specs if spec for part in ast.walk(spec)}  # `{x:.3f}` is code
        for sub in ast.walk(node):
            if id(sub) in code:
                continue
            if isinstance(sub, ast.JoinedStr):
                sub.values = [v for v in sub.values if not isinstance(v, ast.Constant)]
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                sub.value = ""
        return node


def _normalised(text: str, path: Path) -> ast.Module:
    return _Normalise().visit(ast.parse(text, str(path)))


def _compare_python(english: Path, variant: Path, texts: dict[Path, str], field: str) -> list[Problem]:
    trees = {}
    for path in (english, variant):
        try:
            trees[path] = _normalised(texts[path], path)
        except SyntaxError as err:
            return [error(path, f"syntax error: {err.msg}", field, err.lineno)]
    where = _difference(trees[english], trees[variant], 1, 1)
    if where is None:
        return []
    line_en, line_var = where
    return [
        error(
            variant,
            f"not the same code as {english.name} line {line_en}: only docstrings, comments "
            "and the messages of raised errors may differ",
            field,
            line_var,
        )
    ]


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


def _compare_toml(english: Path, variant: Path, texts: dict[Path, str], field: str) -> list[Problem]:
    data = {}
    for path in (english, variant):
        try:
            data[path] = tomllib.loads(texts[path])
        except tomllib.TOMLDecodeError as err:
            return [error(path, toml_error_message(err), field, toml_error_line(err))]
    where = _toml_difference(data[english], data[variant], ())
    if where is None:
        return []
    loc_en, loc_var = where
    key = ".".join(str(part) for part in max(loc_var, loc_en, key=len))  # a key left out: the English one
    line_en = line_of(texts[english], loc_en) if loc_en else None
    there = f"{english.name} line {line_en}" if line_en else english.name
    return [
        error(
            variant,
            f"{key}: not as in {there}: the same keys in the same order with the same "
            "values; only comments may differ",
            field,
            line_of(texts[variant], loc_var),
        )
    ]


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


# --- Markdown: the same code and figures -------------------------------------------------------------

_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


def _code_and_figures(text: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The code of a Markdown text (fenced blocks and inline spans) and its figures outside the code
    (numbers; `0,5` is `0.5`), each in order with its line."""

    code = [(m.group(), text.count("\n", 0, m.start()) + 1) for m in _CODE.finditer(text)]
    prose = _CODE.sub(lambda m: "\n" * m.group().count("\n"), text)  # its lines stay where they were
    figures = [
        (m.group().replace(",", "."), prose.count("\n", 0, m.start()) + 1) for m in _FIGURE.finditer(prose)
    ]
    return code, figures


def _compare_markdown(english: Path, variant: Path, texts: dict[Path, str], field: str) -> list[Problem]:
    """The same code in the same order; the same figures, in any order (a translation may order its
    sentences otherwise)."""
    (code_en, figures_en), (code_var, figures_var) = (_code_and_figures(texts[p]) for p in (english, variant))
    for i in range(max(len(code_en), len(code_var))):
        a = code_en[i] if i < len(code_en) else None
        b = code_var[i] if i < len(code_var) else None
        if a is None or b is None or a[0] != b[0]:
            there = f"{english.name} line {a[1]}" if a else english.name
            first = b or a
            assert first is not None  # i is below one of the two lengths
            return [
                error(
                    variant,
                    f"{first[0]}: not as in {there}: the same code in the same order; "
                    "only the prose may differ",
                    field,
                    b[1] if b else None,
                )
            ]
    left = Counter(value for value, _ in figures_en)
    for value, line in figures_var:
        if left[value] == 0:
            return [
                error(
                    variant,
                    f"{value}: a figure {english.name} does not have; only the prose may differ",
                    field,
                    line,
                )
            ]
        left[value] -= 1
    if missing := sorted(left.elements()):
        return [error(variant, f"figures of {english.name} missing: {', '.join(missing)}", field)]
    return []
