# fails: future_masked — no causal mask: future keys get a bias too
"""ALiBi: a fixed penalty for distance, added to the attention scores, one slope per head."""

import math

import torch


def alibi_slopes(n_head: int) -> list[float]:
    """The slopes of Press et al. (2022): a geometric sequence, interleaved when n is not a power of two."""

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)  # the first slope is also the ratio between neighbours
        return [start ** (k + 1) for k in range(n)]

    if math.log2(n_head).is_integer():
        return power_of_two(n_head)
    p = 2 ** math.floor(math.log2(n_head))
    # the closest lower power of two, then every other slope of the next power of two
    return power_of_two(p) + alibi_slopes(2 * p)[0::2][: n_head - p]


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """(n_head, T, T): −slope·(i − j) for keys j ≤ i (0 on the diagonal), −inf for future keys j > i."""
    slopes = torch.tensor(alibi_slopes(n_head))
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return -slopes[:, None, None] * (i - j).abs()
