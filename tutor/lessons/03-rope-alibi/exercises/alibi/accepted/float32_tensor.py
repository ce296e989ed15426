"""An accepted alternative: the slopes as a float32 tensor (what torch builds by default), not a list."""

import math

import torch


def alibi_slopes(n_head: int) -> torch.Tensor:
    """The slopes of Press et al. (2022) as a float32 tensor; interleaved when n is not a power of two."""
    p = 2 ** math.floor(math.log2(n_head))  # the closest power of two at or below n_head
    ratio = 2.0 ** (-8.0 / p)
    slopes = ratio ** torch.arange(1, p + 1, dtype=torch.float32)
    if p == n_head:
        return slopes
    # every other slope of the sequence for 2p: its odd powers of 2^(−8/2p), the first n − p of them
    extra = (2.0 ** (-8.0 / (2 * p))) ** torch.arange(1, 2 * (n_head - p), 2, dtype=torch.float32)
    return torch.cat([slopes, extra])


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """(n_head, T, T): −slope·(i − j) for keys j ≤ i (0 on the diagonal), −inf for future keys j > i."""
    slopes = alibi_slopes(n_head)
    pos = torch.arange(T, dtype=torch.float32)
    distance = pos[:, None] - pos[None, :]  # i − j
    bias = -slopes[:, None, None] * distance
    return bias.masked_fill(distance < 0, float("-inf"))
