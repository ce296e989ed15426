"""A lesson's Markdown as plain lines, for a screen reader or a pipe (`python -m tutor read`).

No markup is left to be read aloud: emphasis markers, backticks and the escapes the math conversion
adds are dropped, a heading is its words, a table row is read as "heading: value | heading: value" (the
pair's punctuation in the learner's language; a bar between cells, as a cell's own ";" must not read as
the next column), code keeps its lines, indented by four spaces. A paragraph is
one line (its source lines joined as tutor.wrap joins them), or broken at `width` cells when a width
is given (a terminal). Experiment fences are not handled here: the caller gets them from
tutor.content.markdown.blocks and says what they show.
"""

from __future__ import annotations

import re

from tutor.texts import say
from tutor.wrap import reflow, wrap

_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_LIST = re.compile(r"^(\s*)([-*+]|\d{1,2}[.)])\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>$])")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_ID = re.compile(r"\s*\{#[^}]*\}\s*$")


def inline(text: str) -> str:
    """One line of Markdown as its words: code spans keep their content as written."""
    parts = []
    last = 0
    for m in _CODE_SPAN.finditer(text):
        parts.append(_words(text[last : m.start()]))
        parts.append(m.group(2).strip())
        last = m.end()
    parts.append(_words(text[last:]))
    return "".join(parts)


def _words(text: str) -> str:
    text = _LINK.sub(r"\1 (\2)", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(r"\1", text)
    return _ESCAPE.sub(r"\1", text)


def _cells(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [inline(c.strip()) for c in re.split(r"(?<!\\)\|", row)]


def table_lines(rows: list[str], lang: str) -> list[str]:
    """A Markdown table, one line per row: each cell after its column's heading."""
    if len(rows) >= 2 and _TABLE_RULE.match(rows[1]):
        head, body = _cells(rows[0]), rows[2:]
    else:
        head, body = [], rows
    out = []
    for row in body:
        cells = _cells(row)
        pairs = [
            say("plain.pair", lang, name=head[i], value=c) if i < len(head) and head[i] else c
            for i, c in enumerate(cells)
        ]
        out.append(say("plain.sep", lang).join(pairs))
    return out


def prose_lines(markdown: str, lang: str, width: int | None = None) -> list[str]:
    """A prose block (no fences) as plain lines; blank lines part paragraphs."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0

    def emit(text: str, indent: str = "", hang: str = "") -> None:
        if width is None:
            out.append(indent + text)
            return
        for n, line in enumerate(wrap(text, max(20, width - len(indent)))):
            out.append((indent if n == 0 else hang or indent) + line)

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if out and out[-1]:
                out.append("")
            i += 1
        elif m := _HEADING.match(line):
            emit(inline(_ID.sub("", m.group(1))))
            i += 1
        elif line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            for row in table_lines(rows, lang):
                emit(row, hang="  ")
        elif m := _LIST.match(line):
            item = [m.group(3)]
            i += 1
            while (
                i < len(lines) and lines[i].strip() and lines[i].startswith(" ") and not _LIST.match(lines[i])
            ):
                item.append(lines[i])
                i += 1
            marker = m.group(1) + m.group(2) + " "
            emit(inline(reflow("\n".join(item))), indent=marker, hang=" " * len(marker))
        else:
            para = []
            while (
                i < len(lines)
                and lines[i].strip()
                and not _HEADING.match(lines[i])
                and not lines[i].lstrip().startswith("|")
                and not _LIST.match(lines[i])
            ):
                para.append(lines[i])
                i += 1
            emit(inline(reflow("\n".join(para))))
    while out and not out[-1]:
        out.pop()
    return out


def code_lines(code: str) -> list[str]:
    """A code block: its lines as written, four spaces in."""
    return ["    " + line if line.strip() else "" for line in code.splitlines()]
