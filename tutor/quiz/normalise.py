"""Reading what a learner typed: tensor shapes and short text, forgiving about form only.
(Numbers have their own reader, tutor.quiz.numbers.)

Decisions (the issue leaves them open):
- Full-width forms (（１，４）, ２６２６５６, ，) are folded by Unicode NFKC; 。、「」 and curly quotes by hand.
- Shapes: "(1, 4, 5, 8)" == "1,4,5,8" == "[1, 4, 5, 8]" == "1 4 5 8" == "1×4×5×8" == "torch.Size([1, 4, 5, 8])";
  symbolic dimensions compare without spaces or case: "(B, T, C // n_head)" == "(b, t, c//n_head)".
  Where the answer's dimensions are numbers, the typed ones must be whole numbers (tutor.quiz.check
  refuses "2^-8" as a shape rather than reading it as the shape (2^-8,)).
- Text: case, all spacing, hyphens inside words and trailing sentence punctuation are ignored.
- Identifiers (an answer with "_" in it, such as rotate_half): case is ignored, and a space or a
  hyphen may stand for an underscore ("rotate half", "rotate-half"); dropping it is a different
  name ("rotatehalf" is wrong), as is any other change.
"""

from __future__ import annotations

import re
import unicodedata

# Punctuation NFKC leaves alone: ideographic full stop and comma, quotes, dashes, minus sign.
_PUNCT = str.maketrans({"。": ".", "、": ",", "−": "-", "–": "-", "—": "-", "‐": "-", "‑": "-"})
_QUOTES = "\"'“”‘’「」『』《》〈〉«»„‚`"


def fold(text: str) -> str:
    """NFKC (full-width -> ASCII) plus the CJK punctuation NFKC keeps; whitespace trimmed."""
    return unicodedata.normalize("NFKC", text).translate(_PUNCT).strip()


# --- shapes ------------------------------------------------------------------------------

_SIZE_PREFIX = re.compile(r"^(?:torch\.)?size\s*", re.IGNORECASE)
_NUMERIC_PRODUCT = re.compile(r"\d+(?:\s*[x×*]\s*\d+)+", re.IGNORECASE)


def shape_tokens(text: str) -> tuple[str, ...] | None:
    """The dimensions of a typed shape, normalised; None if it does not read as a shape."""
    s = _SIZE_PREFIX.sub("", fold(text))
    s = s.strip().lstrip("([{").rstrip(")]}").strip()
    if not s:
        return None
    if "," in s:
        parts = s.split(",")
        if parts[-1].strip() == "":  # "(8,)": a one-dimensional shape
            parts = parts[:-1]
    elif _NUMERIC_PRODUCT.fullmatch(s):
        parts = re.split(r"[x×*]", s, flags=re.IGNORECASE)
    else:
        parts = s.split()
    tokens = tuple(re.sub(r"\s+", "", p).casefold() for p in parts)
    if not tokens or any(not t for t in tokens):
        return None
    return tokens


def is_integer_shape(tokens: tuple[str, ...]) -> bool:
    """Every dimension a whole number ("8", not "2^-8" or "n_head")."""
    return all(t.isascii() and t.isdigit() for t in tokens)


def format_shape(tokens: tuple[str, ...]) -> str:
    return "(" + ", ".join(tokens) + (",)" if len(tokens) == 1 else ")")


# --- text --------------------------------------------------------------------------------

_INNER_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")


_SEPARATOR = re.compile(r"(?<=\w)[\s\-]+(?=\w)")


def normalise_text(text: str) -> str:
    s = fold(text).casefold()
    s = "".join(ch for ch in s if ch not in _QUOTES)
    s = re.sub(r"\s+", "", s)
    s = _INNER_HYPHEN.sub("", s)
    return s.strip(".!?;:,")


def normalise_identifier(text: str) -> str:
    """An identifier as typed: a space or hyphen between two word characters is an underscore."""
    s = fold(text).casefold()
    s = "".join(ch for ch in s if ch not in _QUOTES).strip().strip(".!?;:,")
    return re.sub(r"\s+", "", _SEPARATOR.sub("_", s))


def text_matches(typed: str, answer: str) -> bool:
    """Is `typed` the text answer `answer`, forgiving about form only (the module docstring)?"""
    if "_" in answer:
        return normalise_identifier(typed) == normalise_identifier(answer)
    return normalise_text(typed) == normalise_text(answer)
