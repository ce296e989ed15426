"""Reading typed answers: shapes, text, choices and self-ratings (numbers: test_quiz_numbers.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tutor.content.schema import ExactQuestion, MultipleChoice, OpenQuestion, SingleChoice
from tutor.quiz.check import AnswerError, check_answer, parse_choice_ids
from tutor.quiz.normalise import normalise_text, shape_tokens

EN = {"en": "x"}


def exact(answer: str, kind: str = "text", also: list[str] | None = None) -> ExactQuestion:
    return ExactQuestion(
        id="e", type="exact", prompt=EN, explanation=EN, answer=answer, kind=kind, also=also or []
    )


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


@pytest.mark.parametrize("typed", ["(1, 5, 4, 8)", "(1, 4, 5)", "(1, 4, 5, 8, 1)", "1458"])
def test_wrong_shapes_are_wrong(typed: str) -> None:
    assert check_answer(exact("(1, 4, 5, 8)", kind="shape"), typed).correct is False


@pytest.mark.parametrize(
    "typed", ["2^-8", "2⁻⁸", "(1, 4, 5, 8.5)", "(B, 4, 5, 8)", "(1,,4,5,8)", "()", "four"]
)
def test_a_shape_of_numbers_is_answered_with_whole_numbers_or_asked_again(typed: str) -> None:
    with pytest.raises(AnswerError) as err:
        check_answer(exact("(1, 4, 5, 8)", kind="shape"), typed)
    assert err.value.key == "quiz.err.not_a_shape"
    assert "is not a shape: type its sizes as whole numbers" in str(err.value)
    assert "ist keine Form" in err.value.in_lang("de") and "不是形状" in err.value.in_lang("zh")


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


@pytest.mark.parametrize(
    ("typed", "right"),
    [
        ("rotate_half", True),
        ("rotate half", True),  # a space for the underscore
        ("rotate-half", True),
        ("Rotate  Half", True),
        ("`rotate_half`", True),
        ("rotate half(x)", True),  # listed in `also`
        ("rotate_half ()", True),
        ("rotatehalf", False),  # another name
        ("rotate__half", False),
        ("rotate halves", False),
        ("rotate half x", False),
        ("half rotate", False),
    ],
)
def test_an_identifier_may_be_typed_with_spaces_or_hyphens_for_underscores(typed: str, right: bool) -> None:
    q = exact("rotate_half", also=["rotate_half()", "rotate_half(x)"])
    assert check_answer(q, typed).correct is right


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


def test_choices_are_typed_as_their_numbers_and_given_as_ids_by_code() -> None:
    q = _choices("multiple")
    assert parse_choice_ids(q, "1, 3") == ["same", "half"]
    assert parse_choice_ids(q, "3 1 3") == ["half", "same"]
    assert parse_choice_ids(q, ["half", "same"]) == ["half", "same"]
    assert check_answer(q, "3，1").correct is True  # full-width comma
    assert check_answer(q, "1").correct is False  # a multiple choice needs every right one


@pytest.mark.parametrize("typed", ["same", "2, half", "4", "0"])
def test_a_choice_is_typed_as_its_number_and_a_refusal_names_no_choice_id(typed: str) -> None:
    with pytest.raises(AnswerError) as err:
        check_answer(_choices("single"), typed)
    message = str(err.value)
    assert "type a number from 1 to 3" in message
    # it listed every id ("1-3 or same, times8, half"), and the right one among them
    assert [i for i in ("same", "times8", "half") if i in message and i not in typed] == []


def test_wrong_choice_carries_its_misconception() -> None:
    check = check_answer(_choices("single"), ["times8"])
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


def test_what_a_learner_may_type_is_listed_once_in_the_catalogue_and_taken_in_every_language() -> None:
    from tutor.i18n import LANGS
    from tutor.texts import catalogue, say, typed

    q = OpenQuestion(id="o", type="open", prompt=EN, explanation=EN, model_answer={"en": "because"})
    for lang in LANGS:
        for rating, name in enumerate(("again", "hard", "good", "easy"), 1):
            words = [w.strip() for w in catalogue(lang)[f"typed.{name}"].split(",")]
            assert words[0] in say("quiz.rate", lang)  # the prompt offers the first
            for word in words:
                assert check_answer(q, word.upper()).rating == rating, (lang, word)
    assert (
        typed("typed.yes") == {"y", "yes", "j", "ja", "是"}
    )  # a yes at `progress reset`, `exercise reset` --------------------------------------------------------------------------


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
