"""Lesson prose: math -> Unicode outside code, and experiment fences in and out of the text.

An experiment is embedded as a fenced block whose info string is `experiment NAME`; its body is
TOML (the parameters to start from, may be empty). Everything else in a fence is code and is left
exactly as written, and so is `inline code`.

markdown-it-py finds the fences, code spans and escapes, and mdit-py-plugins' dollarmath finds
`$...$` and `$$...$$` with its rules: no space just inside a single `$`, no digit just outside
(so `$5` is a dollar sign), the first `$` after an opening one its only closing candidate. Math
ends with its paragraph, list item, heading or table row (CommonMark blocks with GFM tables; no
indented code and no HTML blocks, so a four-space indent is prose). Links, autolinks and inline
HTML are text to the scanner, as they were to the hand-written one. The text around the math is
kept exactly as written; content/latex.py converts the formulas.
"""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, fence
from markdown_it.rules_inline import StateInline, backtick, escape
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.dollarmath.index import math_inline_dollar

from tutor.content.latex import LatexError, latex_to_unicode
from tutor.content.schema import ExperimentRef
from tutor.texts import Said

_EXPERIMENT_INFO = re.compile(r"^experiment(?:\s+(\S+))?\s*(.*)$")
_MD_SPECIAL = re.compile(r"([\\`_\[\]<>|#])")
_RAW_LATEX = re.compile(r"\\([A-Za-z]+)")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")  # what a backslash escapes (CommonMark)
_SPECIAL = re.compile(r"[\\`$]")  # text without any has no math, code or escape: nothing to parse
_FENCE_MARK = re.compile(r"```|~~~")
_NOT_A_FENCE_LINE = re.compile(r"^([ \t]*)(?! {0,3}(?:```|~~~))\S.*$", re.M)  # but its indent may count
_DOLLARMATH = {"allow_space": False, "allow_digits": False}  # "$ 5", "$5 and $6" and "$x$5" are no math

_FENCE_ALT = ["paragraph", "reference", "blockquote", "list"]  # what a fence may interrupt (markdown-it's)
InlineRule = Callable[[StateInline, bool], bool]


def _fence_noting_its_end(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """markdown-it's fence rule, noting in the token's meta whether a closing fence ended it (an
    open one ends with the text or its list item or quote). Four spaces in, a line is prose."""
    if state.sCount[start] - state.blkIndent >= 4 or not fence(state, start, end, silent):
        return False
    if not silent:
        token, last = state.tokens[-1], state.line - 1
        tail = state.src[state.bMarks[last] + state.tShift[last] : state.eMarks[last]].rstrip(" \t")
        token.meta["closed"] = (
            last > start
            and not state.is_code_block(last)
            and len(tail) >= len(token.markup)
            and tail == token.markup[0] * len(tail)
        )
    return True


def _spanning(rule: InlineRule, kind: str) -> InlineRule:
    """An inline rule that also notes in env["spans"] where in its source what it read starts and ends."""

    def spanning(state: StateInline, silent: bool) -> bool:
        start = state.pos
        if not rule(state, silent):
            return False
        if not silent and (kind != "escape" or state.src[start + 1] in _ESCAPABLE):
            state.env["spans"].append((start, state.pos, kind))  # `\f` is raw LaTeX, no escape
        return True

    return spanning


def _parser(math: bool) -> MarkdownIt:
    """For fences: markdown-it's fence, paragraph and indented-code rules (a fence starts and ends at an
    indent of at most three spaces, in a list item too, not in a quote). For math: CommonMark with
    GFM tables and `$$` blocks, but no indented code and no HTML blocks (both would hide prose)."""
    if not math:
        md = MarkdownIt("zero").enable(["fence", "code"])  # "zero": paragraphs only
        md.block.ruler.at("fence", _fence_noting_its_end, {"alt": _FENCE_ALT})
        return md
    md = MarkdownIt("commonmark").enable("table").disable(["code", "html_block", "lheading", "reference"])
    md.inline.ruler.disable(["emphasis", "link", "image", "autolink", "html_inline", "entity"])
    md.block.ruler.at("fence", _fence_noting_its_end, {"alt": _FENCE_ALT})
    md.use(dollarmath_plugin, **_DOLLARMATH, double_inline=True, allow_labels=False)
    md.inline.ruler.at("math_inline", _spanning(math_inline_dollar(**_DOLLARMATH, allow_double=True), "math"))
    md.inline.ruler.at("backticks", _spanning(backtick, "code"))
    md.inline.ruler.at("escape", _spanning(escape, "escape"))
    return md


_FENCES = _parser(math=False)
_MATH = _parser(math=True)


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
    """Split Markdown into prose runs and fenced blocks (CommonMark fences, found by markdown-it; no
    indented code), by the lines `str.splitlines` gives."""
    lines = text.splitlines()
    if not _FENCE_MARK.search(text):
        if lines:
            yield Block("prose", 0, lines)
        return
    # The fence rule reads the fence lines and the others' indents only: the rest of each line need
    # not be scanned (a fourth of the time lessons take to load).
    skeleton = _NOT_A_FENCE_LINE.sub(r"\1x", "\n".join(lines))
    tokens: list = []
    _FENCES.block.parse(skeleton + "\n", _FENCES, {}, tokens)  # "\n": a last blank line too
    i = 0
    for token in tokens:
        if token.type == "fence" and token.map is not None:
            first, end = token.map
            if first > i:
                yield Block("prose", i, lines[i:first])
            yield Block(
                "fence", first, lines[first:end], info=token.info.strip(), closed=token.meta["closed"]
            )
            i = end
    if i < len(lines):
        yield Block("prose", i, lines[i:])


# --- math ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MathIssue:
    line: int  # 0-based line within the converted text
    message: Said  # what is wrong (a catalogue text)


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: str  # "math" | "code" | "escape" | "text" (inline text between them)
    run: int  # the paragraph, heading or table row it is in; -1 for a `$$` block


def _scan(text: str) -> list[_Span]:
    """The math, code spans, escapes and inline text of `text` as markdown-it reads it, in order.
    Lines no inline text is on (fences, rules, blank lines) are in no span."""
    tokens: list = []
    _MATH.block.parse(text.replace("\r", " "), _MATH, {}, tokens)  # \r: a line break to markdown-it
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    ends = [s - 1 for s in starts[1:]] + [len(text)]
    runs: set[tuple[int, int]] = set()
    spans: list[_Span] = []
    for token in tokens:
        if token.map is None:
            continue
        first, last = token.map[0], token.map[1] - 1
        if token.type == "math_block":
            open_at = text.find("$$", starts[first])
            close_at = text.rfind("$$", open_at + 2, ends[last])
            if 0 <= open_at < close_at:
                spans.append(_Span(open_at, close_at + 2, "math", -1))
                continue
        if token.type in ("inline", "math_block"):
            runs.add((starts[first], ends[last]))  # a table row once, not once per cell
    for run, (start, stop) in enumerate(sorted(runs)):
        env: dict = {"spans": []}
        if _SPECIAL.search(text, start, stop):  # else all text
            _MATH.inline.parse(text[start:stop], _MATH, env, [])
        at = start
        for a, b, kind in sorted(env["spans"]):
            if a + start >= at:  # not inside one already noted (none is, but be sure)
                if a + start > at:
                    spans.append(_Span(at, a + start, "text", run))
                spans.append(_Span(a + start, b + start, kind, run))
                at = b + start
        if at < stop:
            spans.append(_Span(at, stop, "text", run))
    return sorted(spans, key=lambda s: s.start)


def convert_math(text: str, markdown: bool = True) -> tuple[str, list[MathIssue]]:
    """Replace `$...$` and `$$...$$` in prose by Unicode; code spans and `\\$` are left alone.

    With `markdown`, the converted formula is escaped so Markdown shows it literally (a `_` or `|`
    in a formula must not start emphasis or break a table). `*` becomes `∗` either way.
    Fenced blocks are left as written (a lesson file's prose comes without them: see `convert_prose`).
    """
    if not _SPECIAL.search(text):
        return text, []
    out: list[str] = []
    issues: list[tuple[int, MathIssue]] = []
    at = 0
    spans = _scan(text)
    for span in spans:
        out.append(text[at : span.start])
        piece = text[span.start : span.end]
        if span.kind == "math":
            opener = 2 if piece.startswith("$$") else 1
            source = piece[opener : len(piece) - opener]
            try:
                formula = latex_to_unicode(source).replace("*", "∗")
            except LatexError as err:
                issues.append((span.start, _issue(text, span.start, Said(err.key, **err.values))))
                formula = source
            piece = _MD_SPECIAL.sub(r"\\\1", formula) if markdown else formula
        elif span.kind == "escape" and piece == "\\$" and not markdown:
            piece = "$"
        elif span.kind == "text":
            for m in _RAW_LATEX.finditer(text, span.start, span.end):
                issues.append((m.start(), _issue(text, m.start(), Said("problem.math.raw", name=m.group(0)))))
        out.append(piece)
        at = span.end
    out.append(text[at:])
    issues += [(pos, _issue(text, pos, Said("problem.math.unclosed"))) for pos in _unclosed(text, spans)]
    return "".join(out), [issue for _, issue in sorted(issues, key=lambda x: x[0])]


def _issue(text: str, pos: int, said: Said) -> MathIssue:
    return MathIssue(text.count("\n", 0, pos), said)


def _unclosed(text: str, spans: list[_Span]) -> list[int]:
    """Where a `$` left in the text would open math (no space after it, no digit before: dollarmath's
    rules) and no `$` follows in its paragraph, code aside; and every `$$` left. A `$` that opens
    with a `$` after it that dollarmath did not take for math, as in "costs $5 and $6", is a dollar
    sign, and so is that second one."""
    dollars: dict[int, list[tuple[int, bool]]] = defaultdict(list)  # run -> (where, left over)
    for span in spans:
        if span.kind == "math" and span.run >= 0:
            dollars[span.run].append((span.start, False))
        elif span.kind == "text":
            run = text[span.start : span.end]
            dollars[span.run] += [(span.start + m.start(), True) for m in re.finditer(r"\$", run)]
    found: list[int] = []
    for events in dollars.values():
        events.sort()
        i = 0
        while i < len(events):
            pos, left = events[i]
            after = events[i + 1] if i + 1 < len(events) else None
            if not left:
                i += 1
            elif after == (pos + 1, True):  # `$$` with no `$$` to close it
                found.append(pos)
                i += 2
            elif not text[pos + 1 : pos + 2].strip() or text[pos - 1 : pos].isdigit():
                i += 1  # no opening `$`: a dollar sign
            elif after is None:
                found.append(pos)
                i += 1
            else:
                i += 2 if after[1] else 1
    return found


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
