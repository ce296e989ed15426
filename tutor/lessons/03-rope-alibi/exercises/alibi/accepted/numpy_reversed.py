"""An accepted alternative: numpy instead of torch, the bias built for the keys in reverse order and
turned back with `[:, :, ::-1]`, so it comes back as a view with a negative stride."""

import math

import numpy as np


def alibi_slopes(n_head: int) -> np.ndarray:
    """The slopes of Press et al. (2022) as a float64 array; interleaved when n is not a power of two."""
    p = 2 ** math.floor(math.log2(n_head))  # the closest power of two at or below n_head
    slopes = (2.0 ** (-8.0 / p)) ** np.arange(1, p + 1)
    # every other slope of the sequence for 2p: its odd powers of 2^(−8/2p), the first n − p of them
    extra = (2.0 ** (-8.0 / (2 * p))) ** np.arange(1, 2 * (n_head - p), 2)
    return np.concatenate([slopes, extra])


def alibi_bias(n_head: int, T: int) -> np.ndarray:
    """(n_head, T, T): −slope·(i − j) for keys j ≤ i (0 on the diagonal), −inf for future keys j > i."""
    slopes = alibi_slopes(n_head)[:, None, None]
    i = np.arange(T)[:, None]
    back = np.arange(T)[None, :]  # column c is key T − 1 − c, counted from the end
    distance = i - (T - 1 - back)
    reversed_keys = np.where(distance >= 0, -slopes * distance, -np.inf)
    return reversed_keys[:, :, ::-1]  # the keys in order again, without a copy
