"""Checks for split-heads: shapes, the view/transpose layout, the round trip, and a clear refusal."""

import torch

from tutor.grading.kit import CheckFailed, expect_tensor, fail, need, shape


def _x(*size: int) -> torch.Tensor:
    return torch.randn(*size, generator=torch.Generator().manual_seed(7))


def check_shape(sub) -> str:
    split, merge = need(sub, "split_heads"), need(sub, "merge_heads")
    x = _x(2, 5, 12)
    y = expect_tensor(split(x, 3), "split_heads")
    if tuple(y.shape) != (2, 3, 5, 4):
        raise fail("(2, 3, 5, 4) = (B, n_head, T, C // n_head)", shape(y), "split_heads(x (2, 5, 12), 3)")
    z = expect_tensor(merge(x.view(2, 5, 3, 4).transpose(1, 2)), "merge_heads")
    if tuple(z.shape) != (2, 5, 12):
        raise fail("(2, 5, 12) = (B, T, C)", shape(z), "merge_heads(x (2, 3, 5, 4))")
    return "split (2, 5, 12) -> (2, 3, 5, 4) and merged back to (2, 5, 12)"


def check_matches_view(sub) -> str:
    split = need(sub, "split_heads")
    x = _x(2, 5, 12)
    want = x.view(2, 5, 3, 4).transpose(1, 2)
    got = expect_tensor(split(x, 3), "split_heads")
    if got.shape != want.shape:
        raise fail("shape (2, 3, 5, 4)", shape(got), "split_heads(x (2, 5, 12), 3)")
    if not torch.equal(got, want):
        h, t = [int(i) for i in (got != want).any(-1)[0].nonzero()[0]]
        raise fail(
            f"x[0, {t}, {4 * h}:{4 * h + 4}] = {[round(v, 3) for v in want[0, h, t].tolist()]}",
            str([round(v, 3) for v in got[0, h, t].tolist()]),
            f"head {h}, character {t}",
        )
    return "head i holds channels i·d … (i+1)·d − 1 of every token, as view + transpose(1, 2) does"


def check_round_trip(sub) -> str:
    split, merge = need(sub, "split_heads"), need(sub, "merge_heads")
    for size, h in (((2, 5, 12), 3), ((1, 7, 32), 4), ((3, 1, 8), 8), ((2, 4, 6), 1)):
        x = _x(*size)
        back = expect_tensor(merge(split(x, h)), "merge_heads")
        if back.shape != x.shape or not torch.equal(back, x):
            raise fail(
                f"the input back, shape {size}", f"shape {shape(back)}", f"merge_heads(split_heads(x, {h}))"
            )
    # attention output arrives from a matmul on the transposed tensor: not contiguous
    y = _x(2, 3, 5, 4)  # what att @ v returns: contiguous (B, h, T, d); its transpose is not
    merged = expect_tensor(merge(y), "merge_heads")
    if not torch.equal(merged, y.transpose(1, 2).reshape(2, 5, 12)):
        raise CheckFailed("merge_heads gave the wrong values for a non-contiguous input")
    return "merge_heads(split_heads(x, h)) == x for four shapes"


def check_rejects_bad_split(sub) -> str:
    split = need(sub, "split_heads")
    try:
        split(_x(1, 2, 10), 3)
    except ValueError as err:
        return f"ValueError: {err}"
    except Exception as err:  # noqa: BLE001 - the wrong kind of error is the finding
        raise fail(
            "ValueError (10 channels cannot be split into 3 heads)", f"{type(err).__name__}: {err}"
        ) from None
    raise fail("ValueError (10 channels cannot be split into 3 heads)", "no error")
