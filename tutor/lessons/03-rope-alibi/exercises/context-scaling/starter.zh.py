"""把 RoPE 拉伸到训练长度之外：PI、NTK-aware 和 YaRN 的逆频率。

评分命令：  python -m tutor grade context-scaling
"""

import math  # noqa: F401

import torch


def scaled_inv_freq(d: int, base: float, scale: float, method: str, original_max: int = 128) -> torch.Tensor:
    """d/2 个逆频率 θᵢ = base^(−2i/d)（指数依次为 0, −2/d, …, −(d − 2)/d），按 `method` 加以修改：

    - `"pi"`：  每个 θᵢ 都除以 `scale`；
    - `"ntk"`： 用 `base' = base · scale^(d/(d−2))` 计算 θᵢ；
    - `"yarn"`：参考代码里的斜坡形式（β_fast 32，β_slow 1，训练长度 `original_max`）。
    """
    raise NotImplementedError("scaled_inv_freq：在这里写你的代码")
