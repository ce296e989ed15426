"""ALiBi: a fixed penalty for distance, added to the attention scores, one slope per head.

Grade with:  python -m tutor grade alibi
"""

import math  # noqa: F401

import torch


def alibi_slopes(n_head: int) -> list[float]:
    """One slope per head, as in the ALiBi paper.

    For n a power of two: start at 2^(−8/n) and multiply by 2^(−8/n) each time (8 heads: 1/2 … 1/256).
    Otherwise take the slopes for the closest lower power of two p, then every other slope of the
    sequence for 2p until there are n_head slopes.
    """
    raise NotImplementedError("alibi_slopes: your code here")


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """(n_head, T, T) score bias: −slope·(i − j) for query i and key j ≤ i, −inf for keys after i."""
    raise NotImplementedError("alibi_bias: your code here")
