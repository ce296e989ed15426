"""Stretch RoPE past the trained length: the inverse frequencies for PI, NTK-aware and YaRN.

Grade with:  python -m tutor grade context-scaling
"""

import math  # noqa: F401

import torch


def scaled_inv_freq(d: int, base: float, scale: float, method: str, original_max: int = 128) -> torch.Tensor:
    """The d/2 inverse frequencies θᵢ = base^(−2i/d) (the exponent runs over 0, −2/d, …, −(d − 2)/d),
    changed by `method`:

    - "pi":   every θᵢ divided by `scale`;
    - "ntk":  θᵢ computed with base' = base · scale^(d/(d−2));
    - "yarn": the ramp form of the reference code (β_fast 32, β_slow 1, trained length `original_max`).
    """
    raise NotImplementedError("scaled_inv_freq: your code here")
