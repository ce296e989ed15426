"""Reading typed numbers with the quiz's own expression reader (tutor.quiz.numbers): the forms the
explanations use are accepted, non-numbers are refused without a penalty, wrong values stay wrong."""

from __future__ import annotations

import math
import operator
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tutor.content.schema import NumberQuestion
from tutor.quiz.check import AnswerError, check_answer
from tutor.quiz.numbers import MAX_PARENTHESES, format_number, number_readings

EN = {"en": "x"}


def number(
    answer: float, tolerance: float = 0.0, rel: float = 0.0, unit: str | None = None
) -> NumberQuestion:
    return NumberQuestion(
        id="n",
        type="number",
        prompt=EN,
        explanation=EN,
        answer=answer,
        tolerance=tolerance,
        rel_tolerance=rel,
        unit={"en": unit, "de": "Parameter", "zh": "个参数"} if unit else None,
    )


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("262656", 262656),
        ("262,656", 262656),
        ("262 656", 262656),
        ("262_656", 262656),
        ("２６２，６５６", 262656),  # full-width digits and comma
        ("1,050,624", 1050624),
        ("1.050.624", 1050624),  # German grouping
        ("2.6e5", 260000),
        ("2,6e5", 260000),  # German decimal comma with an exponent
        ("2.6E5", 260000),
        ("2.6×10^5", 260000),
        ("2.6 x 10**5", 260000),
        ("2.6·10⁵", 260000),
        ("0,125", 0.125),
        ("1/8", 0.125),
        ("−3", -3),  # Unicode minus
        ("≈ 0.5", 0.5),
        # powers and products, as the explanations write them
        ("2^-8", 0.00390625),
        ("2⁻⁸", 0.00390625),
        ("1/2^8", 0.00390625),
        ("2**-8", 0.00390625),
        ("128²", 16384),  # not 1,282
        ("128^2", 16384),
        ("128×128", 16384),
        ("128*128", 16384),
        ("128 · 128", 16384),
        ("4·512² + 4·512", 1050624),
        ("(1 + 2) * 3", 9),
        ("-2^2", -4),  # the power first
        ("2^3^2", 512),  # powers group to the right
        ("½", 0.5),
        # German ways of writing a calculation
        ("128 : 8", 16),
        ("128:8", 16),
        ("１２８：８", 16),  # full-width
        ("4 ∶ 1", 4),  # the ratio sign
        ("128 durch 8", 16),
        ("128 geteilt durch 8", 16),
        ("128 mal 128", 16384),
        ("2 hoch -8", 0.00390625),
        ("1.024 : 8", 128),  # German grouping
        ("0,5 : 2", 0.25),
    ],
)
def test_number_forms_read_as_their_value(typed: str, value: float) -> None:
    assert value in number_readings(typed)


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("π", math.pi),
        ("pi", math.pi),
        ("2π", 2 * math.pi),
        ("2*pi", 2 * math.pi),
        ("2 PI", 2 * math.pi),
        ("1/2π", 1 / (2 * math.pi)),  # a number written before π belongs to it
        ("2π^2", 2 * math.pi**2),
        ("2π·10000^(0/64)", 2 * math.pi),
        ("10000^(-2/128)", 10000 ** (-2 / 128)),  # a RoPE frequency
    ],
)
def test_pi_and_fractional_powers_read_to_15_digits(typed: str, value: float) -> None:
    (reading,) = number_readings(typed)
    assert reading == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    "typed",
    [
        "abc",
        "",
        "sixteen",
        "1,2,3",
        "262,656,",
        "12 apples",
        "1/0",
        "e5",
        "2^",
        "(1 + 2",
        "1 + 2)",
        "2 ** ** 3",
        "0^-1",
        "(-8)^(1/3)",  # not a real number
        "10^400",  # too large for a float
        "__import__('os')",
        "(" * (MAX_PARENTHESES + 1) + "1" + ")" * (MAX_PARENTHESES + 1),
    ],
)
def test_non_numbers_have_no_reading(typed: str) -> None:
    assert number_readings(typed) == []


def test_ambiguous_separators_keep_both_readings() -> None:
    assert sorted(number_readings("1,050")) == [1.05, 1050.0]
    assert sorted(number_readings("262.656")) == [262.656, 262656.0]
    assert sorted(number_readings("1,050 × 2")) == [2.1, 2100.0]


@pytest.mark.parametrize(
    ("typed", "right"),
    [
        ("262,656", True),
        ("262656", True),
        ("262.656", True),  # German thousands
        ("262 656 parameters", True),
        ("262656 Parameter", True),
        ("512^2 + 512", True),
        ("512² + 512 parameters", True),
        ("262,657", False),
        ("262,000", False),
        ("2.6e5", False),  # exact answer: 2.6e5 is 2,656 off
        ("1,050,624", False),
        ("512^2", False),
    ],
)
def test_number_question_exact(typed: str, right: bool) -> None:
    assert check_answer(number(262656, unit="parameters"), typed).correct is right


@pytest.mark.parametrize("typed", ["banana", "sixteen", "16 heads of 8", "1/0"])
def test_a_non_number_is_refused_not_marked_wrong(typed: str) -> None:
    with pytest.raises(AnswerError) as err:
        check_answer(number(16), typed)
    assert err.value.key == "quiz.err.not_a_number"
    assert "2^-8" in str(err.value)  # the message shows what it can read
    assert "不是能读懂的数" in err.value.in_lang("zh")


def test_a_german_division_answers_a_number_question() -> None:
    assert check_answer(number(16), "128 : 8", "de").correct is True
    assert check_answer(number(16), "128 : 4", "de").correct is False


def test_numbers_are_shown_back_in_the_learners_way() -> None:
    check = check_answer(number(262656, tolerance=0.5), "262 656", "de")
    assert (check.understood, check.expected) == ("262.656", "262.656 ± 0,5")
    assert check_answer(number(0.125, tolerance=0.01), "1/8", "de").understood == "0,125"
    assert check_answer(number(0.125, tolerance=0.01), "1/8", "zh").understood == "0.125"


def test_scientific_form_is_right_only_where_the_tolerance_allows() -> None:
    assert check_answer(number(262656, rel=0.02), "2.6e5").correct is True
    assert check_answer(number(262656, rel=0.001), "2.6e5").correct is False
    assert check_answer(number(262656, tolerance=3000), "2,6e5").correct is True


def test_number_feedback_says_how_it_was_read() -> None:
    check = check_answer(number(262656), "262 656")
    assert (check.understood, check.expected) == ("262,656", "262,656")
    assert check_answer(number(0.00390625), "2⁻⁸").understood == "0.00390625"
    assert check_answer(number(16384), "128²").understood == "16,384"
    assert check_answer(number(6.2832, tolerance=0.001), "2π").understood == "6.28319"
    assert check_answer(number(0.125, tolerance=0.01), "1").expected == "0.125 ± 0.01"


# --- properties --------------------------------------------------------------------------


@given(st.integers(min_value=0, max_value=10**12))
def test_integers_read_back_with_or_without_grouping(n: int) -> None:
    for typed in (str(n), f"{n:,}", f"{n:_}", f"{n:,}".replace(",", " ")):
        assert float(n) in number_readings(typed)


_SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


@given(st.integers(min_value=1, max_value=4096), st.integers(min_value=-12, max_value=12))
def test_every_spelling_of_a_power_reads_the_same(base: int, exponent: int) -> None:
    value = float(Fraction(base) ** exponent)
    spellings = [f"{base}^{exponent}", f"{base}**{exponent}", f"{base}{str(exponent).translate(_SUPER)}"]
    if exponent < 0:
        spellings.append(f"1/{base}^{-exponent}")
    for typed in spellings:
        assert any(r == pytest.approx(value, rel=1e-12) for r in number_readings(typed)), typed


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_every_spelling_of_a_product_reads_the_same(a: int, b: int) -> None:
    for sign in ("*", "×", "·", " x "):
        assert float(a * b) in number_readings(f"{a}{sign}{b}")


# Expression trees with their exact value (fractions), printed with full parentheses.
_leaves = st.integers(min_value=0, max_value=999).map(lambda n: (str(n), Fraction(n)))


_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def _combine(pair: tuple) -> tuple[str, Fraction]:
    (left, lv), op, (right, rv) = pair
    op = "+" if op == "/" and rv == 0 else op
    return (f"({left}{op}{right})", _OPS[op](lv, rv))


_trees = st.recursive(
    _leaves,
    lambda inner: st.tuples(inner, st.sampled_from("+-*/"), inner).map(_combine),
    max_leaves=8,
)


@given(_trees)
def test_an_arithmetic_expression_reads_as_its_exact_value(tree) -> None:
    text, value = tree
    if text.count("(") > MAX_PARENTHESES:
        return
    assert number_readings(text)[0] == pytest.approx(float(value), rel=1e-9, abs=1e-9)


@given(st.text(max_size=40))
def test_any_text_gives_a_list_of_finite_readings_and_never_raises(text: str) -> None:
    assert all(math.isfinite(r) for r in number_readings(text))


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda x: x != 0))
def test_a_wrong_number_far_outside_the_tolerance_is_never_right(x: float) -> None:
    q = number(x, rel=0.01)
    far = x * 1.5 if abs(x) > 1e-6 else x + 1
    assert check_answer(q, repr(far)).correct is False
    assert check_answer(q, repr(x)).correct is True


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
def test_a_number_reads_back_from_how_it_is_echoed(x: float) -> None:
    shown = format_number(x)
    assert any(r == pytest.approx(x, rel=1e-5, abs=1e-9) for r in number_readings(shown))
