"""课程 GPT 的旋转位置编码（RoPE）：旋转 q 和 k，去掉 pos_emb。

评分命令：  python -m tutor grade rope
"""

import math  # noqa: F401
from dataclasses import replace  # noqa: F401

import torch
import torch.nn.functional as F  # noqa: F401
from torch import nn

from tutor.model import GPT, GPTConfig


def apply_rope(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """按位置 pos (T,) 旋转 x (..., T, d)：第 i 对维度旋转 pos·θᵢ 角，θᵢ = base^(−2i/d)。

    维度可以按 (x[i], x[i + d/2]) 配对（「对半式」，同 tutor/model/positions.py），
    也可以按 (x[2i], x[2i + 1]) 配对（「交错式」，同 RoFormer 论文）；两种都算对。
    返回形状相同的张量。
    """
    raise NotImplementedError("apply_rope：在这里写你的代码")


class RoPECausalSelfAttention(nn.Module):
    """可以直接替换 tutor.model.gpt.CausalSelfAttention：qkv 层和 proj 层不变，q 和 k 经过旋转。"""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.base = cfg.rope_base
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        """x (B, T, C) -> (B, T, C)；位置为 start … start + T − 1；带因果掩码。"""
        raise NotImplementedError("RoPECausalSelfAttention.forward：在这里写你的代码")


def build_model(cfg: GPTConfig) -> GPT:
    """不带 pos_emb 的课程 GPT，每个块都用 RoPECausalSelfAttention。"""
    raise NotImplementedError("build_model：在这里写你的代码")
