"""把 RoPE 拉伸到训练长度之外：PI、NTK-aware 和 YaRN 的逆频率。"""

import math

import torch


def scaled_inv_freq(d: int, base: float, scale: float, method: str, original_max: int = 128) -> torch.Tensor:
    """d/2 个逆频率 θᵢ = base^(−2i/d)，按 `method` 加以修改，使上下文达到训练长度的 `scale` 倍。"""
    i = torch.arange(0, d, 2, dtype=torch.float64)
    theta = base ** (-i / d)
    if method == "pi":
        return theta / scale  # 位置 m 变成 m / s：每一对都转慢 s 倍
    if method == "ntk":
        # 更大的 base：最快的一对（θ₀ = 1）速度不变，最慢的一对慢 s 倍
        return (base * scale ** (d / (d - 2))) ** (-i / d)
    if method == "yarn":
        # 在训练长度内转超过 β_fast = 32 圈的对保持不变，转不到 β_slow = 1 圈的对像 PI 一样插值，
        # 介于两者之间的对用一段线性斜坡过渡
        def correction_dim(turns: float) -> float:
            return d * math.log(original_max / (turns * 2 * math.pi)) / (2 * math.log(base))

        low = max(math.floor(correction_dim(32)), 0)
        high = min(math.ceil(correction_dim(1)), d - 1)
        if high == low:
            high += 0.001
        ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        return theta / scale * ramp + theta * (1 - ramp)
    raise ValueError(f"未知的方法 {method!r}；请选择 pi、ntk 或 yarn")
