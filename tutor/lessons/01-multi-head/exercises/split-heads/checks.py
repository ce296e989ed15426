"""Checks for split-heads. Sizes and values are drawn per run; returning x, or zeros of the right
shape, passes none of them: shapes count with the input's own numbers in them.

Each check fails only for what its title names: matches_view reads the heads whatever order the learner's
axes are in (the shape is its own check), round_trip feeds merge_heads the course's split (a split_heads of
the wrong layout is matches_view's), and rejects_bad_split asks first for one split of a C that divides on
one character, where every layout and axis order give the same numbers."""

import random

import torch

from tutor.grading.kit import expect, expect_raises, msg


def _case() -> tuple[torch.Tensor, int]:
    """x of shape (B, T, h·d), and h, with T ≠ h ≠ d: two swapped axes never have the right shape."""
    h = random.randint(2, 5)
    T = h + random.randint(1, 3)
    d = T + random.randint(1, 2)
    return torch.randn(random.randint(1, 3), T, h * d), h


def _heads(x: torch.Tensor, h: int) -> torch.Tensor:
    """The layout of tutor/model/gpt.py: head i holds channels i·d … (i+1)·d − 1 of every character."""
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
    B, T, C = x.shape
    if B in (h, T, C // h):  # four different sizes: each axis of the answer is told by its size
        x = torch.randn(next(b for b in (1, 2, 3, 4) if b not in (h, T, C // h)), T, C)
    heads = learner.split_heads(x, h)
    want = _heads(x, h)
    if sorted(heads.shape) != sorted(want.shape):
        expect(heads.shape, tuple(want.shape))  # no four axes of B, h, T and d to read heads from
    order = [tuple(heads.shape).index(n) for n in want.shape]
    expect(heads.permute(*order), want, msg("axes_read", h=h, order=tuple(order)))


def check_round_trip(learner):
    for _ in range(3):  # the course's split, a transposed view, goes back in
        x, h = _case()
        expect(learner.merge_heads(_heads(x, h)), x, f"merge_heads(x.view(B, T, {h}, d).transpose(1, 2))")
    y = torch.randn(_heads(*_case()).shape)  # as att @ v gives it: contiguous, so its transpose is not
    expect(learner.merge_heads(y), y.transpose(1, 2).flatten(2))


def _splits(learner) -> None:
    """Fail unless split_heads splits a C that divides evenly: on one character (B = T = 1), where every
    layout and axis order agree, x's channels in their order, with an axis of n_head. A split_heads that
    always raises would refuse bad splits too; x itself, zeros or one head holds no heads."""
    h = random.randint(2, 5)
    x = torch.randn(1, 1, h * (h + random.randint(1, 3)))  # d > h: the head axis is told by its size
    heads = learner.split_heads(x, h)
    split = (
        isinstance(heads, torch.Tensor)
        and h in heads.shape
        and heads.numel() == x.numel()
        and torch.equal(heads.flatten(), x.flatten())
    )
    assert split, msg("splits_first", h=h, C=x.size(-1))


def check_rejects_bad_split(learner):
    _splits(learner)
    h = random.randint(3, 5)
    for c, n in ((10, 3), (h * random.randint(1, 4) + random.randint(1, h - 1), h)):
        with expect_raises(ValueError) as refused:
            learner.split_heads(torch.randn(1, 2, c), n)
    return refused.message
