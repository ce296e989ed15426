"""ALiBi：按距离施加的固定惩罚，加在注意力分数上，每个头一个斜率。

评分命令：  python -m tutor grade alibi
"""

import math  # noqa: F401

import torch


def alibi_slopes(n_head: int) -> list[float]:
    """每个头一个斜率，按 ALiBi 论文的规则。

    n 是 2 的幂时：从 2^(−8/n) 开始，每次再乘以 2^(−8/n)（8 个头：1/2 … 1/256）。
    否则先取不超过 n 的最大的 2 的幂 p 对应的斜率，再从 2p 对应的数列里隔一个取一个，
    直到凑够 n_head 个斜率。
    """
    raise NotImplementedError("alibi_slopes：在这里写你的代码")


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """形状为 (n_head, T, T) 的分数偏置：query i 与 key j ≤ i 之间为 −slope·(i − j)，
    i 之后的 key 为 −inf。"""
    raise NotImplementedError("alibi_bias：在这里写你的代码")
