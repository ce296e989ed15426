"""Checks for split-heads. Sizes and values are drawn per run; returning x, or zeros of the right
shape, passes none of them: shapes count with the input's own numbers in them."""

import random

import torch

from tutor.grading.kit import expect, expect_raises


def _case() -> tuple[torch.Tensor, int]:
    """x of shape (B, T, h·d), and h, with T ≠ h ≠ d: two swapped axes never have the right shape."""
    h = random.randint(2, 5)
    T = h + random.randint(1, 3)
    d = T + random.randint(1, 2)
    return torch.randn(random.randint(1, 3), T, h * d), h


def _heads(x: torch.Tensor, h: int) -> torch.Tensor:
    """The layout of models/gpt.py: head i holds channels i·d … (i+1)·d − 1 of every character."""
    B, T, C = x.shape
    return x.view(B, T, h, C // h).transpose(1, 2)


def _sorted(t: torch.Tensor) -> torch.Tensor:
    return t.flatten().sort().values


def check_shape(learner):
    x, h = _case()
    B, T, C = x.shape
    heads = learner.split_heads(x, h)
    expect(heads.shape, (B, h, T, C // h))
    expect(_sorted(heads), _sorted(x), f"sorted(split_heads(x, {h}))")  # x's own numbers, not zeros
    merged = learner.merge_heads(_heads(x, h))
    expect(merged.shape, x.shape)
    expect(_sorted(merged), _sorted(x), "sorted(merge_heads(x))")


def check_matches_view(learner):
    x, h = _case()
    expect(learner.split_heads(x, h), _heads(x, h))


def check_round_trip(learner):
    for _ in range(3):  # split's own output, a transposed view, goes back in
        x, h = _case()
        expect(learner.merge_heads(learner.split_heads(x, h)), x, f"merge_heads(split_heads(x, {h}))")
    y = torch.randn(_heads(*_case()).shape)  # as att @ v gives it: contiguous, so its transpose is not
    expect(learner.merge_heads(y), y.transpose(1, 2).flatten(2))


def check_rejects_bad_split(learner):
    check_matches_view(learner)  # a split_heads that always raises would refuse bad splits too
    h = random.randint(3, 5)
    for c, n in ((10, 3), (h * random.randint(1, 4) + random.randint(1, h - 1), h)):
        with expect_raises(ValueError) as refused:
            learner.split_heads(torch.randn(1, 2, c), n)
    return refused.message
