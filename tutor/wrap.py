"""Laying out quiz text: reflowing its source lines, and breaking lines for the plain terminal,
measured in terminal cells (a Chinese character is two).

Quiz texts come from TOML, where authors break long lines; such a break is soft (`reflow`), as in
Markdown. English and German break between words, never inside one (a word longer than the line is
the only exception). Chinese breaks between any two characters, except that a line never starts
with closing punctuation (，。、；：？！）」』…) and never ends with opening punctuation (（「『).
"""

from __future__ import annotations

import re
import unicodedata

from rich.cells import cell_len

NO_LINE_START = frozenset("，。、；：？！）」』〕〉》】｝〗〙…‥・ー々〜％,.;:!?)]}%”’")
NO_LINE_END = frozenset("（「『〔〈《【｛〖〘“‘([{")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,2}[.)])\s")  # "2. It takes no room..." keeps its own line


def reflow(text: str) -> str:
    """Join the source lines of each paragraph: with a space, or with nothing where a Chinese
    character meets the break; a blank line still parts paragraphs, a list item starts a line."""
    return "\n\n".join(_join_lines(p.split("\n")) for p in _PARAGRAPH.split(text.strip()))


def _join_lines(lines: list[str]) -> str:
    out = ""
    for line in (raw.strip() for raw in lines):
        if out and line:
            out += "\n" if _LIST_ITEM.match(line) else "" if _wide(out[-1]) or _wide(line[0]) else " "
        out += line
    return out


def may_break_before(text: str, i: int) -> bool:
    """May a line start at text[i] (0 < i < len(text))?"""
    before, after = text[i - 1], text[i]
    if after.isspace() or after in NO_LINE_START or before in NO_LINE_END:
        return False
    return before.isspace() or _wide(before) or _wide(after)


def _line_end(text: str, start: int, width: int) -> int:
    """Where the line that starts at `start` ends: the last allowed break that fits in `width`."""
    used = fits = 0
    best = None
    for i in range(start, len(text)):
        used += cell_len(text[i])
        if not text[i].isspace():
            fits = used
        if fits > width:
            return best if best is not None else max(i, start + 1)  # a word longer than the line
        if i + 1 < len(text) and may_break_before(text, i + 1):
            best = i + 1
    return len(text)


def wrap(text: str, width: int) -> list[str]:
    """`text` as lines of at most `width` cells; its own line breaks are kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        start = 0
        while True:
            end = _line_end(paragraph, start, max(width, 2))
            lines.append(paragraph[start:end].rstrip())
            start = end
            while start < len(paragraph) and paragraph[start] == " ":
                start += 1
            if start >= len(paragraph):
                break
    return lines
