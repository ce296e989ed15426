"""Reading a typed number: a small arithmetic language of its own, never `eval`.

Accepted (the forms the lesson explanations use):
- literals: "262656", "262,656", "262 656", "262_656", "2.6e5", full-width digits;
- operators: + - * × · x / ÷ ^ ** and parentheses; "2^-8" == "2**-8" == "1/2^8";
- German ways of writing them: ":" divides ("128 : 8", as a ratio "4:1"), and the words "mal",
  "durch" (or "geteilt durch") and "hoch" ("2 hoch -8");
- superscript powers: "2⁻⁸", "128²", "2.6·10⁵" ("128²" is 128 squared, never 1282);
- π: "π", "pi", "2π", "2*pi"; a number written right before π or "(" multiplies it, binding
  tighter than "/" ("1/2π" is 1/(2π)), and a power binds tighter still ("2π^2" is 2·π²);
- a unit after the number ("262656 parameters") and a leading "≈", "~" or "=".

A comma or a dot is ambiguous between languages ("1,050" is 1050 in English, 1.05 in German;
"262.656" the other way round), so the text is read once with each convention and every value
that comes out is a reading; the answer is right if any reading is within the tolerance. The two
readings differ by about 1000×, so this never turns a genuinely wrong answer right.

Grammar (recursive descent, one function per rule):

    sum      := product (("+" | "-") product)*
    product  := signed (("*" | "/") signed)*
    signed   := ("+" | "-") signed | adjacent
    adjacent := power (power starting with "π" or "(")*
    power    := atom ("^" exponent)?
    exponent := ("+" | "-") exponent | power
    atom     := NUMBER | "π" | "(" sum ")"
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from tutor.quiz.normalise import fold
from tutor.texts import marked

_APPLY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
MAX_LENGTH = 80  # longer input is not a number anyone types; it also bounds the recursion
MAX_PARENTHESES = 12  # nested at most this deep

_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_SUPERSCRIPT_RUN = re.compile(f"[{_SUPERSCRIPTS}]+")
_TO_ASCII = str.maketrans(_SUPERSCRIPTS, "0123456789-+")
_DIGIT_GAP = re.compile(r"(?<=\d)[\s_'’\u2009\u202f\u00a0](?=\d)")
_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:\d[\d.,]*|[.,]\d+)(?:e[+-]?\d+)?)"
    r"|(?P<op>\*\*|[-+*/^()×·⋅x÷⁄:∶]|(?:geteilt\s+)?durch|mal|hoch)"
    r"|(?P<pi>pi|π))",
    re.IGNORECASE,
)
_OPERATOR = {
    "**": "^",
    "×": "*",
    "·": "*",
    "⋅": "*",
    "x": "*",
    "÷": "/",
    "⁄": "/",
    ":": "/",
    "∶": "/",
    "mal": "*",
    "durch": "/",
    "hoch": "^",
}


@dataclass(frozen=True)
class Convention:
    """How a language writes a decimal number: its thousands separator and its decimal mark."""

    group: str
    decimal: str

    def literal(self, raw: str) -> float | None:
        """The value of one number as written in this convention, or None if it is not valid."""
        mantissa, _, exponent = raw.casefold().partition("e")
        g, d = re.escape(self.group), re.escape(self.decimal)
        plain = re.fullmatch(rf"\d+(?:{d}\d*)?|{d}\d+", mantissa)
        grouped = re.fullmatch(rf"[1-9]\d{{0,2}}(?:{g}\d{{3}})+(?:{d}\d+)?", mantissa)
        if not (plain or grouped):
            return None
        digits = mantissa.replace(self.group, "").replace(self.decimal, ".")
        return float(digits + (f"e{exponent}" if exponent else ""))


ENGLISH = Convention(group=",", decimal=".")
GERMAN = Convention(group=".", decimal=",")


class NotANumber(ValueError):
    """The text does not read as a number in one convention."""


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs: kind is "number", "op" or "pi"; raises NotANumber on anything else."""
    out: list[tuple[str, str]] = []
    pos, text = 0, text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise NotANumber(f"cannot read {text[pos:]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "op":
            value = value.casefold().split()[-1]  # "X" is "x", "geteilt durch" is "durch"
            value = _OPERATOR.get(value, value)
        out.append((kind, value))
        pos = m.end()
    return out


class _Parser:
    """One pass of the grammar in the module docstring over `tokens`, with one convention."""

    def __init__(self, items: list[tuple[str, str]], literal: Callable[[str], float | None]):
        self.items, self.literal, self.pos, self.depth = items, literal, 0, 0

    def peek(self) -> tuple[str, str]:
        return self.items[self.pos] if self.pos < len(self.items) else ("end", "")

    def take(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.pos += 1
            return True
        return False

    def value(self) -> float:
        result = self.sum()
        if self.peek()[0] != "end":
            raise NotANumber(f"unexpected {self.peek()[1]!r}")
        return result

    def sum(self) -> float:
        return self.chain(self.product, ("+", "-"))

    def product(self) -> float:
        return self.chain(self.signed, ("*", "/"))

    def chain(self, operand: Callable[[], float], ops: tuple[str, str]) -> float:
        """operand (op operand)*, left to right: 8/2/2 is 2, 5-2-1 is 2."""
        result = operand()
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            op = self.items[self.pos][1]
            self.pos += 1
            rhs = operand()
            if op == "/" and rhs == 0:
                raise NotANumber("division by zero")
            result = _APPLY[op](result, rhs)
        return result

    def signed(self) -> float:
        return self.with_sign(self.adjacent)

    def adjacent(self) -> float:
        result = self.power()
        while self.peek()[0] == "pi" or self.peek() == ("op", "("):
            result *= self.power()
        return result

    def power(self) -> float:
        base = self.atom()
        if not self.take("^"):
            return base
        exponent = self.exponent()
        try:
            result = base**exponent
        except (OverflowError, ZeroDivisionError) as err:
            raise NotANumber(str(err)) from None
        if isinstance(result, complex):
            raise NotANumber("a negative number to a fractional power")
        return result

    def exponent(self) -> float:
        return self.with_sign(self.power)

    def with_sign(self, then: Callable[[], float]) -> float:
        """Leading signs (-, +, --), then what `then` reads: -2^2 is -(2^2), 2^-3 is 2^(-3)."""
        negative = False
        while (minus := self.take("-")) or self.take("+"):
            negative ^= bool(minus)
        value = then()
        return -value if negative else value

    def atom(self) -> float:
        kind, text = self.peek()
        self.pos += 1
        if kind == "number":
            value = self.literal(text)
            if value is None:
                raise NotANumber(f"{text!r} is not a number")
            return value
        if kind == "pi":
            return math.pi
        if (kind, text) == ("op", "(") and self.depth < MAX_PARENTHESES:
            self.depth += 1
            inner = self.sum()
            self.depth -= 1
            if self.take(")"):
                return inner
        raise NotANumber(f"unexpected {text or 'end'!r}")


def clean_number_text(text: str, units: list[str] | tuple[str, ...] = ()) -> str:
    """The typed text with superscripts made explicit (2⁻⁸ -> 2^(-8)), folded, and unit and gaps removed."""
    s = _SUPERSCRIPT_RUN.sub(lambda m: f"^({m.group().translate(_TO_ASCII)})", text)  # before NFKC
    s = fold(s).lstrip("≈~=").strip()
    low = s.casefold()
    for unit in sorted(units, key=len, reverse=True):
        u = fold(unit).casefold()
        if u and low.endswith(u):
            s = s[: len(s) - len(u)].strip()
            break
    return _DIGIT_GAP.sub("", s)


def evaluate(text: str, convention: Convention = ENGLISH) -> float:
    """The value of an already prepared expression in one convention; raises NotANumber."""
    if len(text) > MAX_LENGTH:
        raise NotANumber("too long")
    result = _Parser(tokens(text), convention.literal).value()
    if not math.isfinite(result):
        raise NotANumber("not finite")
    return float(f"{result:.15g}")  # 2.6 * 10^5 is 260000, not 260000.00000000003


def number_readings(text: str, units: list[str] | tuple[str, ...] = ()) -> list[float]:
    """Every plausible value of `text` (empty if it is not a number). `units`: accepted suffixes."""
    s = clean_number_text(text, units)
    readings: list[float] = []
    for convention in (ENGLISH, GERMAN):
        try:
            readings.append(evaluate(s, convention))
        except NotANumber:
            continue
    return list(dict.fromkeys(readings))


def number_matches(value: float, answer: float, tolerance: float = 0.0, rel_tolerance: float = 0.0) -> bool:
    allowed = max(tolerance, rel_tolerance * abs(answer))
    # a hair of slack so that 0.1 + 0.2 style float error never fails an exact answer
    return abs(value - answer) <= allowed + 1e-9 * max(1.0, abs(answer))


def format_number(x: float, lang: str = "en") -> str:
    """262656.0 -> '262,656'; 0.125 -> '0.125'; 2.6e-07 -> '2.6e-07'; in German '262.656', '0,125'."""
    text = f"{int(x):,}" if x == int(x) and abs(x) < 1e15 else f"{x:.6g}"
    return marked(text, lang)
