"""Reading what a learner typed: numbers, tensor shapes and short text, forgiving about form only.

Decisions (the issue leaves them open):
- Full-width forms (（１，４）, ２６２６５６, ，) are folded by Unicode NFKC; 。、「」 and curly quotes by hand.
- Numbers: "262,656", "262656", "262 656", "262_656", "2.6e5", "2.6×10^5", "2.6·10⁵", "1/8", "−3".
  A comma or dot is ambiguous between languages ("1,050" is 1050 in English, 1.05 in German;
  "262.656" the other way round), so every plausible reading is kept and the answer is right if
  any reading is within the tolerance. The readings differ by about 1000×, so this never turns a
  genuinely wrong answer right. "2,6e5" reads as 2.6e5.
- Shapes: "(1, 4, 5, 8)" == "1,4,5,8" == "[1, 4, 5, 8]" == "1 4 5 8" == "1×4×5×8" == "torch.Size([1, 4, 5, 8])";
  symbolic dimensions compare without spaces or case: "(B, T, C // n_head)" == "(b, t, c//n_head)".
- Text: case, all spacing, hyphens inside words and trailing sentence punctuation are ignored.
"""

from __future__ import annotations

import re
import unicodedata

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
# Punctuation NFKC leaves alone: ideographic full stop and comma, quotes, dashes, minus sign.
_PUNCT = str.maketrans({"。": ".", "、": ",", "−": "-", "–": "-", "—": "-", "‐": "-", "‑": "-"})
_QUOTES = "\"'“”‘’「」『』《》〈〉«»„‚`"


def fold(text: str) -> str:
    """NFKC (full-width -> ASCII) plus the CJK punctuation NFKC keeps; whitespace trimmed."""
    return unicodedata.normalize("NFKC", text).translate(_PUNCT).strip()


# --- numbers -----------------------------------------------------------------------------

_EXP = r"(?:e[+-]?\d+)?"
_PLAIN = re.compile(rf"[+-]?(?:\d+\.?\d*|\.\d+){_EXP}")
_EN_THOUSANDS = re.compile(rf"[+-]?[1-9]\d{{0,2}}(?:,\d{{3}})+(?:\.\d+)?{_EXP}")
_DE_THOUSANDS = re.compile(rf"[+-]?[1-9]\d{{0,2}}(?:\.\d{{3}})+(?:,\d+)?{_EXP}")
_DECIMAL_COMMA = re.compile(rf"[+-]?\d+,\d+{_EXP}")
_FRACTION = re.compile(r"([+-]?\d+)/(\d+)")
_TIMES_TEN = re.compile(r"\s*[x×*·⋅]\s*10\s*(?:\^|\*\*)\s*\(?([+-]?\d+)\)?", re.IGNORECASE)
_TIMES_TEN_SUP = re.compile(r"\s*[x×*·⋅]\s*10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)", re.IGNORECASE)
_DIGIT_GAP = re.compile(r"(?<=\d)[\s_'’\u2009\u202f\u00a0](?=\d)")


def number_readings(text: str, units: list[str] | tuple[str, ...] = ()) -> list[float]:
    """Every plausible value of `text` as a number (empty if it is not one). `units`: accepted suffixes."""
    # Superscript exponents first: NFKC would turn 10⁵ into 105.
    s = _TIMES_TEN_SUP.sub(lambda m: "e" + m.group(1).translate(_SUPERSCRIPT), text)
    s = fold(s).lstrip("≈~=").strip()
    low = s.casefold()
    for unit in sorted(units, key=len, reverse=True):
        u = fold(unit).casefold()
        if u and low.endswith(u):
            s = s[: len(s) - len(u)].strip()
            break
    s = _TIMES_TEN.sub(lambda m: "e" + m.group(1), s)
    s = _DIGIT_GAP.sub("", s).replace("E", "e")
    readings: list[float] = []
    if _PLAIN.fullmatch(s):
        readings.append(float(s))
    if _EN_THOUSANDS.fullmatch(s):
        readings.append(float(s.replace(",", "")))
    if _DE_THOUSANDS.fullmatch(s):
        readings.append(float(s.replace(".", "").replace(",", ".")))
    if _DECIMAL_COMMA.fullmatch(s):
        readings.append(float(s.replace(",", ".")))
    m = _FRACTION.fullmatch(s)
    if m and int(m.group(2)) != 0:
        readings.append(int(m.group(1)) / int(m.group(2)))
    return list(dict.fromkeys(readings))


def number_matches(value: float, answer: float, tolerance: float = 0.0, rel_tolerance: float = 0.0) -> bool:
    allowed = max(tolerance, rel_tolerance * abs(answer))
    # a hair of slack so that 0.1 + 0.2 style float error never fails an exact answer
    return abs(value - answer) <= allowed + 1e-9 * max(1.0, abs(answer))


def format_number(x: float) -> str:
    """262656.0 -> '262,656'; 0.125 -> '0.125'; 2.6e-07 -> '2.6e-07'."""
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:.6g}"


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


def format_shape(tokens: tuple[str, ...]) -> str:
    return "(" + ", ".join(tokens) + (",)" if len(tokens) == 1 else ")")


# --- text --------------------------------------------------------------------------------

_INNER_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")


def normalise_text(text: str) -> str:
    s = fold(text).casefold()
    s = "".join(ch for ch in s if ch not in _QUOTES)
    s = re.sub(r"\s+", "", s)
    s = _INNER_HYPHEN.sub("", s)
    return s.strip(".!?;:,")
