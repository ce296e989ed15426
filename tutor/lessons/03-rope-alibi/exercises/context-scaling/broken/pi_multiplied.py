# fails: pi — PI speeds the pairs up instead of slowing them down
"""Stretch RoPE past the trained length: the inverse frequencies for PI, NTK-aware and YaRN."""

import math

import torch


def scaled_inv_freq(d: int, base: float, scale: float, method: str, original_max: int = 128) -> torch.Tensor:
    """The d/2 inverse frequencies θᵢ = base^(−2i/d), changed by `method` to reach `scale` × the trained length."""
    i = torch.arange(0, d, 2, dtype=torch.float64)
    theta = base ** (-i / d)
    if method == "pi":
        return theta * scale  # position m becomes m / s: every pair turns s times slower
    if method == "ntk":
        # a larger base: the fastest pair (θ₀ = 1) keeps its speed, the slowest is slowed by s
        return (base * scale ** (d / (d - 2))) ** (-i / d)
    if method == "yarn":
        # pairs that complete more than β_fast = 32 turns in the trained length are kept, pairs with
        # fewer than β_slow = 1 turn are interpolated like PI, and a linear ramp blends the band between
        def correction_dim(turns: float) -> float:
            return d * math.log(original_max / (turns * 2 * math.pi)) / (2 * math.log(base))

        low = max(math.floor(correction_dim(32)), 0)
        high = min(math.ceil(correction_dim(1)), d - 1)
        if high == low:
            high += 0.001
        ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        return theta / scale * ramp + theta * (1 - ramp)
    raise ValueError(f"unknown method {method!r}; choose pi, ntk or yarn")
