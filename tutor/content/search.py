"""Search in the lessons' text (the command palette's text hits): every paragraph of every section in
one language, as plain text, and where a query occurs in it, with a snippet around the match.

The passages of a language are made the first time that language is searched (a few milliseconds
for the course), never at start-up; the app keeps them while the course stays the same.

    found = find(passages(course, "de"), "kopf")   # [(passage, start, end), ...] in course order
    text, at, end = snippet(passage.text, start, end)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tutor.content.markdown import split_body
from tutor.i18n import pick

MIN_QUERY = 3  # characters of a query before the text is searched (2 for Chinese: a word is two)
SNIPPET = 60  # characters of text shown around a match
LIMIT = 40  # hits at most

_MARKUP = [
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links and images: their text
    (re.compile(r"^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+", re.M), ""),  # heading, quote and list marks
    # emphasis and code marks; an _ inside a word stays (d_k, rotate_half: the learner searches for them)
    (re.compile(r"[*`]+|(?<![\w\\])_+(?=\w)|(?<=\w)_+(?!\w)"), ""),
    (re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>$])"), r"\1"),  # Markdown's escapes: d\_k is d_k
    (re.compile(r"\s+"), " "),
]
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*\|?\s*$")  # |---|:--:|
_CELL_BAR = re.compile(r"\s*(?<!\\)\|\s*")


@dataclass(frozen=True)
class Passage:
    lesson: str
    section: str
    text: str  # plain text, one line
    folded: str  # lower-cased, as queries are matched (casefold would move the offsets: ß)


def plain_text(markdown: str) -> str:
    """A paragraph as one line of words. A table's rows are its cells one after another, " · " between
    cells and " / " between rows, its bars and rule line gone (no "| · ·" between rows, no "---")."""
    lines = markdown.strip().split("\n")
    if lines and all(line.lstrip().startswith("|") for line in lines):
        rows = [
            _CELL_BAR.split(line.strip().strip("|").strip()) for line in lines if not _TABLE_RULE.match(line)
        ]
        markdown = " / ".join(" · ".join(c.replace("\\|", "|") for c in row if c) for row in rows)
    for pattern, repl in _MARKUP:
        markdown = pattern.sub(repl, markdown)
    return markdown.strip()


def passages(course, lang: str) -> list[Passage]:
    """Every paragraph of the course's sections in `lang` (code blocks included: the learner
    searches for `rotate_half` too)."""
    out = []
    for lesson in course.lessons:
        for section in lesson.sections:
            for part in split_body(pick(section.body, lang)):
                if not isinstance(part, str):
                    continue  # an experiment
                for paragraph in re.split(r"\n\s*\n", part):
                    text = plain_text(paragraph)
                    if text:
                        out.append(Passage(lesson.id, section.id, text, text.lower()))
    return out


def searchable(query: str) -> bool:
    query = query.strip()
    return len(query) >= MIN_QUERY or (len(query) >= 2 and not query.isascii())


def find(found_in: list[Passage], query: str, limit: int = LIMIT) -> list[tuple[Passage, int, int]]:
    """The passages holding `query` (case and spacing aside), with where: (passage, start, end)."""
    needle = " ".join(query.split()).lower()
    if not searchable(needle):
        return []
    out = []
    for passage in found_in:
        at = passage.folded.find(needle)
        if at >= 0:
            out.append((passage, at, at + len(needle)))
            if len(out) >= limit:
                break
    return out


def snippet(text: str, start: int, end: int, width: int = SNIPPET) -> tuple[str, int, int]:
    """About `width` characters of `text` around text[start:end], cut at word boundaries where there
    are spaces, with … where cut; and where the match is in the snippet."""
    room = max(width - (end - start), 0)
    left = max(0, start - room // 3)
    right = min(len(text), end + room - (start - left))
    if left > 0 and " " in text[left:start]:
        left = text.index(" ", left) + 1
    if right < len(text) and " " in text[end:right]:
        right = text.rindex(" ", end, right)
    head = "…" if left > 0 else ""
    tail = "…" if right < len(text) else ""
    shown = head + text[left:right] + tail
    return shown, start - left + len(head), end - left + len(head)
