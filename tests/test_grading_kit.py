"""The check API (tutor/grading/kit.py) on the judge's side: what a check says when an expectation
fails, in the learner's language, with a stand-in for the worker (the real one: test_grading_exercises,
test_grading_sandbox)."""

from __future__ import annotations

import pytest
import torch

from tutor.grading.judging.judge import run_check
from tutor.grading.judging.remote import LearnerError
from tutor.grading.judging.voice import speaking
from tutor.grading.kit import (
    Learner,
    expect,
    expect_above,
    expect_close,
    expect_raises,
    seeded,
)
from tutor.texts import say


class Worker:
    """A submission defining `split_heads` (answered by `answer`) and a value `N`."""

    names = {"split_heads": "function", "N": "value"}

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def call(self, name, *args, **kwargs):
        self.calls.append((name, args))
        return self.answer(*args)


def _run(check, answer, lang: str = "en") -> tuple[str, str]:
    with speaking(lang, {}), seeded("0123456789abcdef", "x"):
        return run_check(check, Learner(Worker(answer)))


def _split(x, h):
    B, T, C = x.shape
    if C % h:
        raise LearnerError("ValueError", "ValueError: 10 channels, 3 heads")
    return x.view(B, T, h, C // h).transpose(1, 2)


def check_split(learner):
    x = torch.arange(24.0).reshape(1, 2, 12)
    expect(learner.split_heads(x, 3), x.view(1, 2, 3, 4).transpose(1, 2))


def test_a_right_answer_passes_naming_the_last_call():
    assert _run(check_split, _split) == ("pass", "as expected: split_heads(Tensor[1, 2, 12], 3)")
    assert _run(check_split, _split, "zh") == ("pass", "符合预期：split_heads(Tensor[1, 2, 12], 3)")


@pytest.mark.parametrize(
    "answer,said",
    [
        (
            lambda x, h: x,
            "split_heads(Tensor[1, 2, 12], 3): expected shape (1, 3, 2, 4), got shape (1, 2, 12)",
        ),
        (
            lambda x, h: torch.zeros(1, 3, 2, 4),
            "split_heads(Tensor[1, 2, 12], 3): expected 1 at index (0, 0, 0, 1), got 0",
        ),
        (
            lambda x, h: [1.0],
            "split_heads(Tensor[1, 2, 12], 3): expected a tensor of shape (1, 3, 2, 4), got list [1.0]",
        ),
    ],
)
def test_a_wrong_answer_fails_saying_what_was_expected_where(answer, said):
    assert _run(check_split, answer) == ("fail", said)


def test_the_learners_exception_names_the_call_and_a_missing_name_is_the_graders_words():
    def raising(x, h):
        raise LearnerError("RuntimeError", "RuntimeError: view size is not compatible")

    assert _run(check_split, raising) == (
        "error",
        "split_heads(Tensor[1, 2, 12], 3): RuntimeError: view size is not compatible",
    )
    assert _run(lambda learner: learner.merge_heads(1), _split, "de") == (
        "fail",
        say("grade.check.no_name", "de", name="merge_heads"),
    )
    assert _run(lambda learner: learner.N(), _split) == ("fail", say("grade.check.a_value", "en", name="N"))


def test_using_what_came_back_as_something_else_is_a_type_mismatch_naming_the_call():
    status, said = _run(lambda learner: expect(learner.split_heads(1, 2).shape, (1,)), lambda x, h: None)
    assert status == "fail" and said.startswith("type mismatch: split_heads(1, 2) returned NoneType None: ")


def check_refuses(learner):
    with expect_raises(ValueError) as refused:
        learner.split_heads(torch.zeros(1, 2, 10), 3)
    return refused.message


def test_expect_raises_passes_on_that_exception_only():
    assert _run(check_refuses, _split) == ("pass", "ValueError: 10 channels, 3 heads")
    assert _run(check_refuses, lambda x, h: x, "de") == (
        "fail",
        "split_heads(Tensor[1, 2, 10], 3): erwartet ValueError, erhalten kein Fehler",
    )

    def wrong(x, h):
        raise LearnerError("TypeError", "TypeError: no")

    assert _run(check_refuses, wrong) == (
        "fail",
        "split_heads(Tensor[1, 2, 10], 3): expected ValueError, got TypeError: no",
    )


def test_numbers_close_above_and_below():
    assert _run(lambda _: expect_close(0.1 + 0.2, 0.3, "sum"), _split) == ("pass", "as expected")
    assert _run(lambda _: expect_close([1.0, 2.5], [1.0, 2.0], "xs"), _split) == (
        "fail",
        "xs: expected 2 at index (1,), got 2.5",
    )
    assert _run(lambda _: expect_above(float("nan"), 0.0, "gap"), _split) == (
        "fail",
        "gap: expected a finite number, got nan",
    )
    assert _run(lambda _: expect_above(2e-7, 1e-3, "gap"), _split, "de") == (
        "fail",
        "gap: erwartet mindestens 0,001, erhalten 2e-07",  # a number in a sentence, the German way
    )


def test_inputs_drawn_in_a_check_repeat_for_the_same_file_and_differ_for_another():
    import random

    def draw(seed: str) -> tuple[int, float]:
        with seeded(seed, "shape"):
            return random.randint(0, 10**9), float(torch.randn(()))

    assert draw("00000000000000aa") == draw("00000000000000aa") != draw("00000000000000ab")


def test_a_raise_line_that_repeats_the_error_is_named_by_its_place_only():
    from tutor.grading.judging.remote import LearnerError

    def told(code: str, lang: str = "en") -> str:
        reply = {
            "type": "NotImplementedError",
            "text": "NotImplementedError: f: your code here",
            "at": [[18, "f", code]],
        }
        return LearnerError.from_reply(reply, lang).text

    assert told('raise NotImplementedError("f: your code here")') == (
        "NotImplementedError: f: your code here (at line 18 in f)"
    )
    assert (
        told("return x.view(B, T)")
        == "NotImplementedError: f: your code here (at line 18 in f: return x.view(B, T))"
    )
    assert told('raise NotImplementedError("f: your code here")', "de").startswith("Zeile 18 in `f`:")
