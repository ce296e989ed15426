"""Laying out text for a terminal: reflowing source lines, and where a line may break, measured in
terminal cells (a Chinese character is two). The plain-terminal quiz breaks its lines with `wrap`;
the app's prose (tutor.ui.rich_markdown) breaks Rich text at the same places (`breaks`).

Texts come from Markdown and TOML, where authors break long lines; such a break is soft (`reflow`).
English and German break between words, never inside one (a word longer than the line is the only
exception). Chinese breaks between any two characters, except that a line never starts with closing
punctuation (，。、；：？！）」』…) and never ends with opening punctuation (（「『). In every language a
formula written with spaces stays on one line: no break beside an operator between spaces ("d_k = 32",
"4·C² + 4·C"), so a line never ends in "d_k ="; nor inside a short tuple written inline ("(1, 5, 4, 8)").

Code is not prose: a line of code too long for the screen is broken for display only, and its
continuation starts under the line's own indentation with "↪ " (`code_breaks`, `wrap_code`), so the
code keeps its shape; a terminal's own wrap would start it at column 0.
"""

from __future__ import annotations

import re
import unicodedata

from rich.cells import cell_len

MAX_WIDTH = 100  # prose lines, in columns, however wide the terminal: longer ones are hard to read
NO_LINE_START = frozenset("，。、；：？！）」』〕〉》】｝〗〙…‥・ー々〜％,.;:!?)]}%”’")
NO_LINE_END = frozenset("（「『〔〈《【｛〖〘“‘([{")
FORMULA_JOIN = frozenset("=+−×·÷/≈≠≤≥<>")  # an operator between spaces holds its formula together


def wide(ch: str) -> bool:
    """A double-width character: Chinese, Japanese, Korean, full-width punctuation."""
    return unicodedata.east_asian_width(ch) in "WF"


_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,2}[.)])\s")  # "2. It takes no room..." keeps its own line


def reflow(text: str) -> str:
    """Join the source lines of each paragraph: with a space, or with nothing between two Chinese
    characters (`_joint`); a blank line still parts paragraphs, a list item starts a line."""
    return "\n\n".join(_join_lines(p.split("\n")) for p in _PARAGRAPH.split(text.strip()))


def _join_lines(lines: list[str]) -> str:
    out = ""
    for line in (raw.strip() for raw in lines):
        if out and line:
            out += "\n" if _LIST_ITEM.match(line) else _joint(out[-1], line[0])
        out += line
    return out


def _joint(before: str, after: str) -> str:
    """What a soft line break between two characters reads as: nothing between Chinese characters, nor
    between one and punctuation (，“ have their room in them), a space everywhere else, also between
    Chinese and Latin ("霜 is", "sees 山依": the texts write a space there, and a break stands for one)."""
    if not (wide(before) or wide(after)):
        return " "
    punctuation = [unicodedata.category(ch).startswith("P") for ch in (before, after)]
    if any(p and wide(ch) for p, ch in zip(punctuation, (before, after), strict=True)):
        return ""  # full-width: ，GPT, not ， GPT
    return "" if all(p or wide(ch) for p, ch in zip(punctuation, (before, after), strict=True)) else " "


def may_break_before(text: str, i: int) -> bool:
    """May a line start at text[i] (0 < i < len(text))?"""
    before, after = text[i - 1], text[i]
    if after.isspace() or after in NO_LINE_START or before in NO_LINE_END:
        return False
    if before.isspace():  # after a run of spaces, unless an operator stands beside it
        left = text[:i].rstrip()[-1:]
        if left == "," and _in_tuple(text, i):
            return False
        return left not in FORMULA_JOIN and after not in FORMULA_JOIN
    return wide(before) or wide(after)


TUPLE_MOST = 24  # characters of a tuple written inline, (1, 5, 4, 8), kept on one line
_TUPLE_ITEM = re.compile(r"\s*-?[\w.′/·*+−]+\s*")  # 1, -2, C, d_k, 0.5, C/h


def _in_tuple(text: str, i: int) -> bool:
    """Is text[i] just after ", " inside a short tuple of numbers or names standing on its own, a shape
    "(1, 5, 4, 8)" or "(B, h, T, C/h)"? Such a tuple is read as one thing: a break inside it reads as
    two. A call's arguments, "view(B, T, C)", may break (a long line of code would have no break left)."""
    left = text.rfind("(", max(0, i - TUPLE_MOST), i)
    right = text.find(")", i, left + TUPLE_MOST + 2) if left >= 0 else -1
    if right < 0 or (left > 0 and (text[left - 1].isalnum() or text[left - 1] in "._")):
        return False
    return all(_TUPLE_ITEM.fullmatch(item) for item in text[left + 1 : right].split(","))


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


def breaks(line: str, width: int) -> list[int]:
    """Where the lines of `line` (one paragraph, no line break in it) start after the first, to fit
    in `width` cells. The spaces at a break stay at the end of the line above: strip them."""
    if cell_len(line) <= width:
        return []
    out: list[int] = []
    start = 0
    while True:
        end = _line_end(line, start, max(width, 2))
        while end < len(line) and line[end] == " ":
            end += 1
        if end >= len(line):
            return out
        out.append(end)
        start = end


def widest_unit(line: str) -> int:
    """The cells of the widest piece of `line` that no break may split (its longest word)."""
    widest = piece = 0
    for i, ch in enumerate(line):
        if i and may_break_before(line, i):
            piece = 0
        piece += 0 if ch.isspace() else cell_len(ch)
        widest = max(widest, piece)
    return widest


def wrap(text: str, width: int) -> list[str]:
    """`text` as lines of at most `width` cells; its own line breaks are kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        start = 0
        for end in [*breaks(paragraph, width), len(paragraph)]:
            lines.append(paragraph[start:end].rstrip())
            start = end
    return lines


CONTINUED = "↪ "  # starts the continuation of a line of code broken for display


def code_breaks(line: str, width: int) -> tuple[str, list[int]]:
    """Where a line of code (one line, no line break in it) is broken to fit in `width` cells: what
    each continuation starts with (the line's indentation and CONTINUED), and where in `line` each
    continuation starts. A break comes after a space where one fits, else at the edge."""
    indent = line[: len(line) - len(line.lstrip(" "))]
    prefix = indent + CONTINUED if cell_len(indent + CONTINUED) <= width // 2 else CONTINUED
    out: list[int] = []
    start, room = 0, max(width, 1)
    while cell_len(line[start:]) > room:
        used, end, space = 0, start, None
        while end < len(line) and used + cell_len(line[end]) <= room:
            used += cell_len(line[end])
            end += 1
            if line[end - 1] == " " and end < len(line) and line[end] != " " and end - start > len(indent):
                space = end  # a continuation may start after this space
        nxt = space if space is not None and line[start:space].strip() else max(end, start + 1)
        out.append(nxt)
        start, room = nxt, max(width - cell_len(prefix), 1)
    return prefix, out


def wrap_code(code: str, width: int) -> str:
    """`code` with every line longer than `width` cells broken for display (`code_breaks`)."""
    lines = []
    for line in code.split("\n"):
        prefix, starts = code_breaks(line, width)
        pieces = [line[a:b] for a, b in zip([0, *starts], [*starts, len(line)], strict=True)]
        shown = [piece.rstrip(" ") for piece in pieces[:-1]] + pieces[-1:]
        lines.append("\n".join([shown[0], *(prefix + piece for piece in shown[1:])]))
    return "\n".join(lines)
