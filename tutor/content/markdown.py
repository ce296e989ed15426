"""Lesson prose: math -> Unicode outside code, and experiment fences in and out of the text.

An experiment is embedded as a fenced block whose info string is `experiment NAME`; its body is
TOML (the parameters to start from, may be empty). Everything else in a fence is code and is left
exactly as written, and so is `inline code`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass

from tutor.content.latex import LatexError, latex_to_unicode
from tutor.content.schema import ExperimentRef
from tutor.texts import Said

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`]*?)\s*$")
_EXPERIMENT_INFO = re.compile(r"^experiment(?:\s+(\S+))?\s*(.*)$")
_SPECIAL = re.compile(r"[\\`$]")
_MD_SPECIAL = re.compile(r"([\\`_\[\]<>|#])")


@dataclass
class Block:
    """A run of lines: prose, or one fenced block (with its fence lines)."""

    kind: str  # "prose" | "fence"
    start: int  # 0-based index of the first line in the text it came from
    lines: list[str]
    info: str = ""  # fence info string
    closed: bool = True

    @property
    def body(self) -> str:  # a fence's content without its fence lines
        return "\n".join(self.lines[1 : len(self.lines) - (1 if self.closed else 0)])

    def experiment(self) -> re.Match | None:
        return _EXPERIMENT_INFO.match(self.info) if self.kind == "fence" else None


def blocks(text: str) -> Iterator[Block]:
    """Split Markdown into prose runs and fenced blocks (CommonMark fence rules, no indented code)."""
    lines = text.splitlines()
    prose: list[str] = []
    prose_start = 0
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        if prose:
            yield Block("prose", prose_start, prose)
        fence_char, fence_len = m.group(2)[0], len(m.group(2))
        close = re.compile(rf"^ {{0,3}}{re.escape(fence_char)}{{{fence_len},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        closed = j < len(lines)
        yield Block("fence", i, lines[i : j + 1] if closed else lines[i:], info=m.group(3), closed=closed)
        i = j + 1
        prose, prose_start = [], i
    if prose:
        yield Block("prose", prose_start, prose)


# --- math ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MathIssue:
    line: int  # 0-based line within the converted text
    message: Said  # what is wrong (a catalogue text)


def convert_math(text: str, markdown: bool = True) -> tuple[str, list[MathIssue]]:
    """Replace `$...$` and `$$...$$` in prose by Unicode; code spans and `\\$` are left alone.

    With `markdown`, the converted formula is escaped so Markdown shows it literally (a `_` or `|`
    in a formula must not start emphasis or break a table). `*` becomes `∗` either way.
    Fenced blocks are not handled here: pass prose only (see `convert_prose`).
    """
    out: list[str] = []
    issues: list[MathIssue] = []
    i, n = 0, len(text)
    while i < n:
        special = _SPECIAL.search(text, i)  # jump over plain text in one step: most text has no math
        if special is None:
            out.append(text[i:])
            break
        out.append(text[i : special.start()])
        i = special.start()
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1].isascii() and text[i + 1].isalpha():
            letters = re.match(r"[A-Za-z]+", text[i + 1 :])
            assert letters is not None  # text[i + 1] is an ASCII letter
            name = letters.group(0)
            issues.append(MathIssue(text.count("\n", 0, i), Said("problem.math.raw", name=f"\\{name}")))
            out.append("\\" + name)
            i += 1 + len(name)
        elif c == "\\" and i + 1 < n:  # an escaped character, e.g. \$ for a real dollar sign
            out.append(text[i : i + 2] if markdown or text[i + 1] != "$" else "$")
            i += 2
        elif c == "`":
            run = len(text) - len(text[i:].lstrip("`")) - i
            close = _find_backtick_run(text, i + run, run)
            end = close + run if close >= 0 else i + run
            out.append(text[i:end])
            i = end
        elif c == "$":
            display = text.startswith("$$", i)
            opener = 2 if display else 1
            close = _find_math_close(text, i + opener, display)
            if close < 0:
                if display or (i + 1 < n and not text[i + 1].isspace()):
                    issues.append(MathIssue(text.count("\n", 0, i), Said("problem.math.unclosed")))
                out.append(text[i : i + opener])
                i += opener
                continue
            source = text[i + opener : close]
            try:
                formula = latex_to_unicode(source).replace("*", "∗")
            except LatexError as err:
                issues.append(MathIssue(text.count("\n", 0, i), Said(err.key, **err.values)))
                formula = source
            out.append(_MD_SPECIAL.sub(r"\\\1", formula) if markdown else formula)
            i = close + opener
        else:  # a backslash ending the text
            out.append(c)
            i += 1
    return "".join(out), issues


def _find_backtick_run(text: str, start: int, run: int) -> int:
    for m in re.finditer(r"`+", text[start:]):
        if len(m.group(0)) == run:
            return start + m.start()
    return -1


def _find_math_close(text: str, start: int, display: bool) -> int:
    if display:
        return text.find("$$", start)
    if start >= len(text) or text[start].isspace():
        return -1  # "$ 5" is a dollar sign, not math
    j = start
    while True:
        j = text.find("$", j)
        if j < 0 or "\n\n" in text[start:j] or "`" in text[start:j]:
            return -1  # inline math does not cross a paragraph or a code span
        if text[j - 1] != "\\" and not text[j - 1].isspace() and not text[j + 1 : j + 2].isdigit():
            return j
        j += 1


_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"  # ideographs, CJK and full-width punctuation
_QUOTES = "\u201c\u201d\u2018\u2019"  # “ ” ‘ ’: Chinese text quotes with them too
_CJK_SOFT_BREAK = re.compile(  # with the indent of a list item's next line
    f"(?<=[{_CJK}])\n[ \t]*(?=[{_CJK}{_QUOTES}])|(?<=[{_CJK}{_QUOTES}])\n[ \t]*(?=[{_CJK}])"
)


def join_cjk_lines(text: str) -> str:
    """Drop a line break between two Chinese characters, or between one and a curly quote: Markdown
    renders a soft break as a space, and Chinese has none between words ("一模\n一样" must read
    一模一样, not 一模 一样; "对\n“白日" reads 对“白日). Two quotes or a quote and a Latin letter
    keep their break (English quotes with them as well). The indent of a list item's next line goes
    with the break."""
    return _CJK_SOFT_BREAK.sub("", text)


def convert_prose(markdown: str) -> tuple[str, list[MathIssue]]:
    """Math -> Unicode and Chinese soft breaks joined in every prose run of a Markdown text; fenced
    blocks pass through unchanged."""
    parts: list[str] = []
    issues: list[MathIssue] = []
    for block in blocks(markdown):
        text = "\n".join(block.lines)
        if block.kind == "prose":
            text, found = convert_math(text)
            text = join_cjk_lines(text)
            issues += [MathIssue(block.start + f.line, f.message) for f in found]
        parts.append(text)
    return "\n".join(parts), issues


# --- experiments in the body ----------------------------------------------------------------------


def parse_params(body: str) -> dict:
    """An experiment fence's TOML body; raises tomllib.TOMLDecodeError."""
    return tomllib.loads(body)


def split_body(markdown: str) -> list[str | ExperimentRef]:
    """Text chunks and experiment refs in reading order, for the UI (empty chunks dropped).

    The loader has already checked every experiment fence; one that fails to parse here (only
    possible for text that did not come from the loader) keeps empty params.
    """
    out: list[str | ExperimentRef] = []
    text: list[str] = []

    def flush() -> None:
        chunk = "\n".join(text).strip("\n")
        if chunk.strip():
            out.append(chunk)
        text.clear()

    for block in blocks(markdown):
        m = block.experiment()
        if m and m.group(1):
            flush()
            try:
                params = parse_params(block.body)
            except tomllib.TOMLDecodeError:
                params = {}
            out.append(ExperimentRef(name=m.group(1), params=params))
        else:
            text.extend(block.lines)
    flush()
    return out
