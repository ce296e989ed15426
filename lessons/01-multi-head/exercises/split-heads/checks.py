"""Checks for split-heads: shapes, the view/transpose layout, the round trip, and a clear refusal.

Sizes and values are drawn fresh for every run; the learner's tensors come back as bytes and are
compared here with what view + transpose gives. Returning x, or zeros of the right shape, earns
nothing: shapes count with the input's own numbers in them, and the refusal of a bad split counts once
a good one is split. What the checks say is in exercise.toml's [messages].
"""

import torch

from tutor.grading.kit import CheckFailed, LearnerError, expect_tensor, fail, fresh, msg, need, shape
from tutor.grading.wire import Permuted


def _case(gen: torch.Generator) -> tuple[int, int, int, int]:
    """(B, T, n_head, d) with at least two heads of at least two channels each, and T ≠ n_head ≠ d so
    that a tensor with two of those axes swapped never has the right shape by chance."""
    B, h = (int(torch.randint(lo, hi, (1,), generator=gen)) for lo, hi in ((1, 4), (2, 6)))
    T = h + int(torch.randint(1, 4, (1,), generator=gen))
    d = T + int(torch.randint(1, 3, (1,), generator=gen))
    return B, T, h, d


def _same_numbers(got: torch.Tensor, x: torch.Tensor, call: str) -> None:
    """Splitting and merging only move numbers: `got` must hold exactly x's, in any order."""
    if not torch.equal(got.to(x.dtype).flatten().sort().values, x.flatten().sort().values):
        raise fail(msg("numbers_kept"), msg("numbers_changed"), call)


def _good_split(sub, gen: torch.Generator) -> tuple[torch.Tensor, int]:
    """split_heads on a C that divides evenly must give (B, n_head, T, d) holding x's numbers (zeros of
    the right shape are no split); returns x and n_head."""
    B, T, h, d = _case(gen)
    x = torch.randn(B, T, h * d, generator=gen)
    call = f"split_heads(x {(B, T, h * d)}, {h})"
    y = expect_tensor(need(sub, "split_heads")(x, h), "split_heads")
    if tuple(y.shape) != (B, h, T, d):
        raise fail(f"{(B, h, T, d)} = (B, n_head, T, C // n_head)", shape(y), call)
    _same_numbers(y, x, call)
    return x, h


def check_shape(sub) -> str:
    x, h = _good_split(sub, fresh())
    merge = need(sub, "merge_heads")
    B, T, C = x.shape
    d = C // h
    z = expect_tensor(
        merge(Permuted(x.view(B, T, h, d), (0, 2, 1, 3))), "merge_heads"
    )  # a view, as split makes
    call = f"merge_heads(x {(B, h, T, d)})"
    if tuple(z.shape) != (B, T, h * d):
        raise fail(f"{(B, T, h * d)} = (B, T, C)", shape(z), call)
    _same_numbers(z, x, call)
    return msg("shape_ok", x=(B, T, h * d), heads=(B, h, T, d), back=(B, T, h * d))


def check_matches_view(sub) -> str:
    split = need(sub, "split_heads")
    gen = fresh()
    B, T, h, d = _case(gen)
    x = torch.randn(B, T, h * d, generator=gen)
    want = x.view(B, T, h, d).transpose(1, 2)
    got = expect_tensor(split(x, h), "split_heads")
    if got.shape != want.shape:
        raise fail(
            msg("a_shape", shape=tuple(want.shape)), shape(got), f"split_heads(x {(B, T, h * d)}, {h})"
        )
    if not torch.equal(got.to(want.dtype), want):
        b, head, t = (int(i) for i in (got.to(want.dtype) != want).any(-1).nonzero()[0])
        raise fail(
            f"x[{b}, {t}, {d * head}:{d * head + d}] = {[round(v, 3) for v in want[b, head, t].tolist()]}",
            str([round(float(v), 3) for v in got[b, head, t].tolist()]),
            msg("head_char", head=head, t=t),
        )
    return msg("view_ok")


def check_round_trip(sub) -> str:
    need(sub, "split_heads"), need(sub, "merge_heads")
    gen = fresh()
    for _ in range(3):
        B, T, h, d = _case(gen)
        x = torch.randn(B, T, h * d, generator=gen)
        split, heads = sub.call_kept(
            "split_heads", x, h
        )  # the learner's own (non-contiguous) view goes back in
        if tuple(getattr(split, "shape", ())) != (B, h, T, d):  # x unchanged makes a round trip too
            raise fail(
                msg("a_shape", shape=(B, h, T, d)), shape(split), f"split_heads(x {(B, T, h * d)}, {h})"
            )
        back = expect_tensor(sub.call("merge_heads", heads), "merge_heads")
        if back.shape != x.shape or not torch.equal(back.to(x.dtype), x):
            raise fail(
                msg("input_back", shape=tuple(x.shape)),
                msg("a_shape", shape=shape(back)),
                f"merge_heads(split_heads(x, {h}))",
            )
    # attention output arrives from a matmul on the heads: (B, h, T, d), contiguous; its transpose is not
    B, T, h, d = _case(gen)
    y = torch.randn(B, h, T, d, generator=gen)
    merged = expect_tensor(sub.call("merge_heads", y), "merge_heads")
    if not torch.equal(merged.to(y.dtype), y.transpose(1, 2).reshape(B, T, h * d)):
        raise CheckFailed(msg("merge_att_v"))
    return msg("round_trip_ok")


def check_rejects_bad_split(sub) -> str:
    split = need(sub, "split_heads")
    gen = fresh()
    _good_split(sub, gen)  # a function that raises for every input refuses bad splits as well
    h = int(torch.randint(3, 6, (1,), generator=gen))
    C = h * int(torch.randint(1, 5, (1,), generator=gen)) + int(torch.randint(1, h, (1,), generator=gen))
    # the textbook case first (its message is the same every run), then one drawn now
    for c, n in ((10, 3), (C, h)):
        want = msg("want_value_error", c=c, n=n)
        try:
            split(torch.randn(1, 2, c, generator=gen), n)
        except LearnerError as err:
            if err.type_name != "ValueError":
                raise fail(want, err.text) from None
            message = err.text
        else:
            raise fail(want, msg("no_error"))
    return message
