"""ALiBi：按距离施加的固定惩罚，加在注意力分数上，每个头一个斜率。"""

import math

import torch


def alibi_slopes(n_head: int) -> list[float]:
    """Press et al.（2022）的斜率：一个等比数列；n 不是 2 的幂时交错取值。"""

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)  # 第一个斜率同时也是相邻两项的公比
        return [start ** (k + 1) for k in range(n)]

    if math.log2(n_head).is_integer():
        return power_of_two(n_head)
    p = 2 ** math.floor(math.log2(n_head))
    # 先取小于 n 的最大的 2 的幂，再从下一个 2 的幂的斜率里隔一个取一个
    return power_of_two(p) + alibi_slopes(2 * p)[0::2][: n_head - p]


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """(n_head, T, T)：key j ≤ i 时为 −slope·(i − j)（对角线上为 0），未来的 key j > i 为 −inf。"""
    slopes = torch.tensor(alibi_slopes(n_head))
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf"))
