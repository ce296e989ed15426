"""Checks for alibi: the paper's slopes, the bias values and mask, and the broken symmetry."""

import math

import torch

from tutor.grading.kit import CheckFailed, as_tensor, expect_tensor, fail, need, shape

SLOPES = {
    8: [2.0 ** -(k + 1) for k in range(8)],
    4: [0.25, 0.0625, 0.015625, 0.00390625],
    6: [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125],
    12: [2.0 ** -(k + 1) for k in range(8)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
    3: [0.0625, 0.00390625, 0.25],
}


def _slopes(sub, n: int) -> list[float]:
    got = as_tensor(need(sub, "alibi_slopes")(n), f"alibi_slopes({n})").flatten()
    return [float(v) for v in got]


def _compare(sub, n: int) -> None:
    got, want = _slopes(sub, n), SLOPES[n]
    if len(got) != n or any(abs(g - w) > 1e-9 * max(1.0, w) for g, w in zip(got, want, strict=False)):
        raise fail(
            "[" + ", ".join(f"{w:.6g}" for w in want) + "]",
            "[" + ", ".join(f"{g:.6g}" for g in got) + "]",
            f"alibi_slopes({n})",
        )


def check_slopes_8(sub) -> str:
    _compare(sub, 8)
    _compare(sub, 4)
    return "8 heads: 1/2, 1/4, …, 1/256; 4 heads: 1/4 … 1/256"


def check_slopes_other(sub) -> str:
    for n in (6, 12, 3):
        _compare(sub, n)
    return "6, 12 and 3 heads follow the paper's rule for n not a power of two"


def _bias(sub, n: int, T: int) -> torch.Tensor:
    bias = expect_tensor(need(sub, "alibi_bias")(n, T), "alibi_bias").detach().to(torch.float64)
    if tuple(bias.shape) != (n, T, T):
        raise fail(f"shape ({n}, {T}, {T}) = (n_head, T, T)", shape(bias), f"alibi_bias({n}, {T})")
    return bias


def check_bias_values(sub) -> str:
    n, T = 4, 6
    bias = _bias(sub, n, T)
    slopes = torch.tensor(SLOPES[n], dtype=torch.float64)
    for h in range(n):
        for i in range(T):
            for j in range(i + 1):
                got = float(bias[h, i, j] - bias[h, i, i])  # softmax ignores a shift per row
                want = -float(slopes[h]) * (i - j)
                if not math.isfinite(got) or abs(got - want) > 1e-5:
                    raise fail(
                        f"bias[{h}, {i}, {j}] − bias[{h}, {i}, {i}] = −{slopes[h]:.6g}·{i - j} = {want:.6g}",
                        f"{got:.6g}",
                        f"head {h}, query {i}, key {j}",
                    )
    return "−slope·(i − j) for every key at or before the query"


def check_future_masked(sub) -> str:
    n, T = 4, 6
    bias = _bias(sub, n, T)
    weights = torch.softmax(bias, dim=-1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    leak = float(weights[:, future].max())
    if leak > 1e-9:
        i, j = [int(v) for v in future.nonzero()[int(weights[0][future].argmax())]]
        raise fail(
            "−inf (weight 0 after softmax) for every key after the query",
            f"bias[0, {i}, {j}] = {float(bias[0, i, j]):.4g}, weight up to {leak:.3g}",
        )
    return "future keys get −inf"


def _gap(model, vocab: int) -> float:
    a = torch.tensor([[3, 7, 11, 19, 23]])
    b = torch.tensor([[19, 11, 7, 3, 23]])  # the same tokens, the first four reversed
    with torch.no_grad():
        return float((model(a)[0][0, -1] - model(b)[0][0, -1]).abs().max())


def check_breaks_symmetry(sub) -> str:
    import models.gpt as gpt
    from models.gpt import GPT, GPTConfig

    learner_bias = need(sub, "alibi_bias")
    torch.manual_seed(0)
    plain = GPT(GPTConfig(vocab_size=32, n_layer=1, n_head=4, n_embd=32, pos="none")).eval()
    torch.manual_seed(0)
    alibi = GPT(GPTConfig(vocab_size=32, n_layer=1, n_head=4, n_embd=32, pos="alibi")).eval()
    original = gpt.alibi_bias
    gpt.alibi_bias = lambda n_head, T, dtype=torch.float32: learner_bias(n_head, T).to(dtype)
    try:
        with_alibi = _gap(alibi, 32)
    finally:
        gpt.alibi_bias = original
    without = _gap(plain, 32)
    if without > 1e-5:
        raise CheckFailed(f"the plain one-layer model should not see the order, but differs by {without:.3g}")
    if not with_alibi > 1e-3:
        raise fail(
            "one ALiBi layer to tell the two orders apart (gap clearly > 0)",
            f"a gap of {with_alibi:.3g} (plain layer: {without:.2e})",
        )
    return f"one layer: plain gap {without:.1e}, with your ALiBi bias {with_alibi:.3g}"
