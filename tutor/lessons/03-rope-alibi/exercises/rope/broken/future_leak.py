# fails: causal — future leak: no causal mask
"""Rotary position embedding (RoPE) for the course GPT: rotate q and k, drop pos_emb."""

import math
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from tutor.model import GPT, GPTConfig


def apply_rope(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate each pair (xᵢ, xᵢ₊d/₂) of x (..., T, d) by the angle pos·θᵢ, θᵢ = base^(−2i/d)."""
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = pos.to(torch.float64)[:, None] * theta[None, :]  # (T, d/2)
    angles = torch.cat([angles, angles], dim=-1)  # the half-split layout pairs dim i with i + d/2
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * cos + rotated * sin


class RoPECausalSelfAttention(nn.Module):
    """The course attention, with q and k rotated by their positions instead of a pos_emb table."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.base = cfg.rope_base
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        pos = torch.arange(start, start + T, device=x.device)
        q, k = apply_rope(q, pos, self.base), apply_rope(k, pos, self.base)  # v carries content only
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        att = att.softmax(dim=-1)  # forgot the mask
        y = F.dropout(att, 0.0) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


def build_model(cfg: GPTConfig) -> GPT:
    """The course GPT without pos_emb, every block's attention replaced by the RoPE one."""
    cfg = replace(cfg, pos="none")  # no position table: the rotation carries the positions
    model = GPT(cfg)
    for block in model.blocks:
        block.attn = RoPECausalSelfAttention(cfg)
    model.apply(model._init_weights)
    return model
