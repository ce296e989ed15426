"""Position schemes that act inside attention: RoPE (with context scaling) and ALiBi.

The learned absolute table (`pos_emb`) lives in gpt.py, because it is added to the token
embeddings before any block; these two work on q, k or on the scores instead.
"""

from __future__ import annotations

import math

import torch

ROPE_SCALINGS = ("none", "pi", "ntk", "yarn")
_ALIASES = {"linear": "pi"}


def canonical_scaling(method: str) -> str:
    name = _ALIASES.get(method, method)
    if name not in ROPE_SCALINGS:
        raise ValueError(
            f"unknown RoPE scaling {method!r}; choose one of {', '.join(ROPE_SCALINGS)} (or 'linear' for pi)"
        )
    return name


def rope_inv_freq(
    d: int, base: float = 10000.0, scaling: str = "none", scale: float = 1.0, original_max: int = 128
) -> tuple[torch.Tensor, float]:
    """θᵢ = base^(−2i/d) for the d/2 rotation pairs, stretched by a context-scaling method.

    Returns (inv_freq in float64, attention factor). The factor is 1 except for YaRN, where
    0.1·ln(s) + 1 multiplies cos and sin (a softmax temperature). `d` is the head dimension.
    """
    if d <= 0 or d % 2:
        raise ValueError(f"RoPE needs an even head dimension, got {d}")
    if scale < 1.0:
        raise ValueError(f"context scale must be ≥ 1, got {scale}")
    method = canonical_scaling(scaling)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    if method == "ntk":
        # stretch the base so the slowest pair is interpolated by s while the fastest stays put
        base = base * scale ** (d / (d - 2))
    inv_freq = base ** (-i / d)
    if method == "pi":
        return inv_freq / scale, 1.0
    if method != "yarn" or scale == 1.0:
        return inv_freq, 1.0

    # YaRN in Hugging Face's form (β_fast 32, β_slow 1): pairs that turn fast enough to complete
    # many rotations inside the trained length keep their frequency; slow ones are interpolated
    # like PI; a linear ramp over the pair index blends the band between.
    def correction_dim(n_rot: float) -> float:
        return d * math.log(original_max / (n_rot * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(32)), 0)
    high: float = min(math.ceil(correction_dim(1)), d - 1)
    if high == low:
        high += 0.001
    ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    inv_freq = inv_freq / scale * ramp + inv_freq * (1 - ramp)
    return inv_freq, 0.1 * math.log(scale) + 1.0


def rope_cos_sin(
    positions: torch.Tensor, inv_freq: torch.Tensor, factor: float = 1.0, dtype=torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of m·θᵢ, shape (T, d) in the half-split layout (pair i = dims i and i + d/2)."""
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return (angles.cos() * factor).to(dtype), (angles.sin() * factor).to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate every pair (xᵢ, xᵢ₊d/₂) of x (..., T, d) by its angle m·θᵢ."""
    return x * cos + rotate_half(x) * sin


def alibi_slopes(n_head: int) -> list[float]:
    """Per-head slopes of Press et al. (2022), reference rule included for n not a power of two."""
    if n_head < 1:
        raise ValueError(f"ALiBi needs at least one head, got {n_head}")

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (k + 1) for k in range(n)]

    if math.log2(n_head).is_integer():
        return power_of_two(n_head)
    p = 2 ** math.floor(math.log2(n_head))
    return power_of_two(p) + alibi_slopes(2 * p)[0::2][: n_head - p]


def alibi_bias(n_head: int, T: int, dtype=torch.float32) -> torch.Tensor:
    """(n_head, T, T) additive score bias: −m·(i − j) for keys j ≤ i, −inf for future keys j > i."""
    slopes = torch.tensor(alibi_slopes(n_head), dtype=torch.float64)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    distance = (i - j).to(torch.float64)
    bias = -slopes[:, None, None] * distance
    bias = bias.masked_fill(j > i, float("-inf"))
    return bias.to(dtype)
