"""Reading typed answers: the forms the issue names are accepted, wrong values are not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tutor.content.schema import ExactQuestion, MultipleChoice, NumberQuestion, OpenQuestion, SingleChoice
from tutor.quiz.check import AnswerError, check_answer, parse_choice_ids
from tutor.quiz.normalise import normalise_text, number_readings, shape_tokens

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


def exact(answer: str, kind: str = "text", also: list[str] | None = None) -> ExactQuestion:
    return ExactQuestion(
        id="e", type="exact", prompt=EN, explanation=EN, answer=answer, kind=kind, also=also or []
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
    ],
)
def test_number_forms_read_as_their_value(typed: str, value: float) -> None:
    assert value in number_readings(typed)


@pytest.mark.parametrize("typed", ["abc", "", "1,2,3", "262,656,", "12 apples", "1/0", "e5"])
def test_non_numbers_have_no_reading(typed: str) -> None:
    assert number_readings(typed) == []


def test_ambiguous_separators_keep_both_readings() -> None:
    assert sorted(number_readings("1,050")) == [1.05, 1050.0]
    assert sorted(number_readings("262.656")) == [262.656, 262656.0]


@pytest.mark.parametrize(
    ("typed", "right"),
    [
        ("262,656", True),
        ("262656", True),
        ("262.656", True),  # German thousands
        ("262 656 parameters", True),
        ("262656 Parameter", True),
        ("262,657", False),
        ("262,000", False),
        ("2.6e5", False),  # exact answer: 2.6e5 is 2,656 off
        ("1,050,624", False),
        ("banana", False),
    ],
)
def test_number_question_exact(typed: str, right: bool) -> None:
    assert check_answer(number(262656, unit="parameters"), typed).correct is right


def test_scientific_form_is_right_only_where_the_tolerance_allows() -> None:
    assert check_answer(number(262656, rel=0.02), "2.6e5").correct is True
    assert check_answer(number(262656, rel=0.001), "2.6e5").correct is False
    assert check_answer(number(262656, tolerance=3000), "2,6e5").correct is True


def test_number_feedback_says_how_it_was_read() -> None:
    check = check_answer(number(262656), "262 656")
    assert (check.understood, check.expected) == ("262,656", "262,656")
    assert check_answer(number(0.125, tolerance=0.01), "x").understood == "not a number"
    assert check_answer(number(0.125, tolerance=0.01), "1").expected == "0.125 ± 0.01"


@pytest.mark.parametrize(
    "typed",
    [
        "(1, 4, 5, 8)",
        "1,4,5,8",
        "[1, 4, 5, 8]",
        "（1，4，5，8）",
        "1、4、5、8",
        "1 4 5 8",
        "1×4×5×8",
        "1 x 4 x 5 x 8",
        "torch.Size([1, 4, 5, 8])",
        "  ( 1 ,4, 5 ,8 ) ",
    ],
)
def test_shape_forms_are_right(typed: str) -> None:
    assert check_answer(exact("(1, 4, 5, 8)", kind="shape"), typed).correct is True


@pytest.mark.parametrize(
    "typed", ["(1, 5, 4, 8)", "(1, 4, 5)", "(1, 4, 5, 8, 1)", "1458", "(1,,4,5,8)", "()", "four"]
)
def test_wrong_shapes_are_wrong(typed: str) -> None:
    assert check_answer(exact("(1, 4, 5, 8)", kind="shape"), typed).correct is False


def test_symbolic_shapes_ignore_spacing_and_case() -> None:
    q = exact("(B, n_head, T, C // n_head)", kind="shape")
    assert check_answer(q, "(b, n_head, t, C//n_head)").correct is True
    assert check_answer(q, "(B, T, n_head, C // n_head)").correct is False
    assert shape_tokens("(8,)") == ("8",)


@pytest.mark.parametrize(
    ("typed", "right"),
    [
        ("Multi-Head Attention", True),
        ("multi head attention", True),
        ("  MULTIHEAD   attention. ", True),
        ("“multi-head attention”", True),
        ("mha", True),  # listed in `also`
        ("ＭＨＡ", True),  # full-width letters
        ("self attention", False),
        ("multi-head", False),
    ],
)
def test_text_answers_ignore_case_spacing_and_punctuation(typed: str, right: bool) -> None:
    assert check_answer(exact("multi-head attention", also=["MHA"]), typed).correct is right


def test_chinese_punctuation_and_spacing() -> None:
    q = exact("旋转位置编码")
    assert check_answer(q, "旋转 位置 编码。").correct is True
    assert check_answer(q, "「旋转位置编码」").correct is True
    assert check_answer(q, "绝对位置编码").correct is False
    assert normalise_text("ALiBi，RoPE") == normalise_text("alibi, rope")


def _choices(kind: str) -> SingleChoice | MultipleChoice:
    cls = SingleChoice if kind == "single" else MultipleChoice
    return cls(
        id="c",
        type=kind,
        prompt=EN,
        explanation=EN,
        choices=[
            {"id": "same", "text": {"en": "same"}, "correct": True},
            {"id": "times8", "text": {"en": "8x"}, "why": {"en": "heads split d_model"}},
            {"id": "half", "text": {"en": "half"}, "correct": kind == "multiple"},
        ],
    )


def test_choices_by_number_or_id() -> None:
    q = _choices("multiple")
    assert parse_choice_ids(q, "1, 3") == ["same", "half"]
    assert parse_choice_ids(q, "same half") == ["same", "half"]
    assert parse_choice_ids(q, ["half", "same"]) == ["half", "same"]
    assert check_answer(q, "3，1").correct is True  # full-width comma
    assert check_answer(q, "1").correct is False  # a multiple choice needs every right one


def test_wrong_choice_carries_its_misconception() -> None:
    check = check_answer(_choices("single"), "times8")
    assert check.correct is False
    picked = [c for c in check.choices if c.picked]
    assert [(c.id, c.why) for c in picked] == [("times8", "heads split d_model")]
    assert check.expected == "same"


@pytest.mark.parametrize("typed", ["", "7", "nonsense", "1 2"])
def test_non_answers_to_a_single_choice_are_refused(typed: str) -> None:
    with pytest.raises(AnswerError):
        check_answer(_choices("single"), typed)


def test_open_question_takes_a_self_rating() -> None:
    q = OpenQuestion(id="o", type="open", prompt=EN, explanation=EN, model_answer={"en": "because"})
    assert check_answer(q, "easy").rating == 4
    assert check_answer(q, "1").rating == 1
    assert check_answer(q, "gut").rating == 3
    assert check_answer(q, "good").expected == "because"
    with pytest.raises(AnswerError):
        check_answer(q, "perfect")


# --- properties --------------------------------------------------------------------------

dims = st.lists(st.integers(min_value=1, max_value=4096), min_size=1, max_size=5)


@given(
    dims,
    st.sampled_from(["({})", "[{}]", "{}", "torch.Size([{}])", "（{}）"]),
    st.sampled_from([", ", ",", " , ", "，"]),
)
def test_any_bracket_and_separator_spelling_reads_as_the_same_shape(
    shape: list[int], wrap: str, sep: str
) -> None:
    typed = wrap.format(sep.join(map(str, shape)))
    assert shape_tokens(typed) == tuple(map(str, shape))


@given(st.integers(min_value=0, max_value=10**12))
def test_integers_read_back_with_or_without_grouping(n: int) -> None:
    for typed in (str(n), f"{n:,}", f"{n:_}", f"{n:,}".replace(",", " ")):
        assert float(n) in number_readings(typed)


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda x: x != 0))
def test_a_wrong_number_far_outside_the_tolerance_is_never_right(x: float) -> None:
    q = number(x, rel=0.01)
    far = x * 1.5 if abs(x) > 1e-6 else x + 1
    assert check_answer(q, repr(far)).correct is False
    assert check_answer(q, repr(x)).correct is True
