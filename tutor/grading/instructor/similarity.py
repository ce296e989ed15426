"""Which files of a batch are alike (`grade ID --batch DIR --similar`): pairs whose normalised token
streams overlap, found as MOSS finds them (Schleimer, Wilkerson and Aiken, "Winnowing", SIGMOD 2003).

Each file is tokenised as Python reads it; comments, blank lines and indentation tokens are dropped,
every identifier becomes "v", every number "n" and every string "s" (keywords and operators stay), so
renaming variables or rewording strings changes nothing. Every run of K tokens is hashed (crc32, the
same on every machine), and in each window of W hashes the smallest is kept: the file's fingerprints,
each with the lines it spans. Fingerprints of the exercise's starter file, and those in more than half
the files or in more than 10 (what solutions share; MOSS's -m 10), are left out. Two files are alike by the share of the smaller
one's fingerprints that the other has too; pairs sharing at least 5 and at or above `threshold` are reported, most alike first,
with the line ranges the shared fingerprints cover in each.

    pairs = similar_pairs({"a.py": text_a, "b.py": text_b}, starter=starter_text, threshold=0.5)
"""

from __future__ import annotations

import io
import keyword
import tokenize
import zlib
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

K = 5  # tokens in a k-gram
W = 4  # k-grams in a winnowing window
MIN_SHARED = 5  # fingerprints a pair must share: fewer is chance (a few common lines)
CROWD = 10  # a fingerprint in more files than this (or than half of them) is common code, as MOSS's -m 10
_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
    tokenize.TYPE_COMMENT if hasattr(tokenize, "TYPE_COMMENT") else -1,
}

_FSTRING = {
    getattr(tokenize, name)
    for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
}


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    similarity: float  # 0 to 1: the share of the smaller file's fingerprints the other has too
    lines_a: list[tuple[int, int]]  # line ranges (first, last) of `a` that the shared fingerprints cover
    lines_b: list[tuple[int, int]]

    def to_json(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "similarity": round(self.similarity, 3),
            "lines_a": [list(r) for r in self.lines_a],
            "lines_b": [list(r) for r in self.lines_b],
        }


def tokens(text: str) -> list[tuple[str, int]]:
    """(normalised token, line) of the text; what does not tokenise ends the stream there."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _SKIP:
                continue
            if tok.type == tokenize.NAME:
                word = tok.string if keyword.iskeyword(tok.string) else "v"
            elif tok.type == tokenize.NUMBER:
                word = "n"
            elif tok.type == tokenize.STRING or tok.type in _FSTRING:
                word = "s"
            else:
                word = tok.string
            out.append((word, tok.start[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def fingerprints(text: str) -> dict[int, tuple[int, int]]:
    """{hash: (first line, last line)} of the winnowed k-grams of `text`."""
    stream = tokens(text)
    grams = [
        (zlib.crc32("\0".join(w for w, _ in stream[i : i + K]).encode()), stream[i][1], stream[i + K - 1][1])
        for i in range(len(stream) - K + 1)
    ]
    kept: dict[int, tuple[int, int]] = {}
    for start in range(max(1, len(grams) - W + 1)):
        window = grams[start : start + W]
        if not window:
            break
        low = min(range(len(window)), key=lambda i: (window[i][0], -i))  # the rightmost smallest
        h, first, last = window[low]
        kept.setdefault(h, (first, last))
    return kept


def _ranges(lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line spans joined where they touch or overlap."""
    out: list[list[int]] = []
    for first, last in sorted(lines):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return [(a, b) for a, b in out]


def similar_pairs(texts: dict[str, str], starter: str = "", threshold: float = 0.5) -> list[Pair]:
    prints = {name: fingerprints(text) for name, text in texts.items()}
    common = set(fingerprints(starter)) if starter else set()
    holders: dict[int, list[str]] = defaultdict(list)
    for name, found in prints.items():
        for h in found:
            if h not in common:
                holders[h].append(name)
    crowd = max(2, min(CROWD, len(texts) // 2))  # in more files: what solutions share (MOSS's -m)
    shared: dict[tuple[str, str], list[int]] = defaultdict(list)
    for h, names in holders.items():
        if len(names) > crowd:
            continue
        for a, b in combinations(sorted(names), 2):
            shared[(a, b)].append(h)
    own = {
        name: sum(1 for h in found if h not in common and len(holders[h]) <= crowd)
        for name, found in prints.items()
    }
    pairs = []
    for (a, b), hashes in shared.items():
        smaller = min(own[a], own[b])
        if len(hashes) < MIN_SHARED or len(hashes) / smaller < threshold:
            continue
        pairs.append(
            Pair(
                a,
                b,
                len(hashes) / smaller,
                _ranges([prints[a][h] for h in hashes]),
                _ranges([prints[b][h] for h in hashes]),
            )
        )
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return pairs
