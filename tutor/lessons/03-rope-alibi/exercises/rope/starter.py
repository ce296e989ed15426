"""Rotary position embedding (RoPE) for the course GPT: rotate q and k, drop pos_emb.

Grade with:  python -m tutor grade rope
"""

import math  # noqa: F401
from dataclasses import replace  # noqa: F401

import torch
import torch.nn.functional as F  # noqa: F401
from torch import nn

from tutor.model import GPT, GPTConfig


def apply_rope(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate x (..., T, d) by its positions pos (T,): pair i turns by the angle pos·θᵢ, θᵢ = base^(−2i/d).

    Pair the dimensions either as (x[i], x[i + d/2]) ("half-split", like tutor/model/positions.py) or as
    (x[2i], x[2i + 1]) ("interleaved", like the RoFormer paper); both are graded as correct.
    Returns a tensor of the same shape.
    """
    raise NotImplementedError("apply_rope: your code here")


class RoPECausalSelfAttention(nn.Module):
    """A drop-in for tutor.model.gpt.CausalSelfAttention: same qkv and proj layers, q and k rotated."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.base = cfg.rope_base
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        """x (B, T, C) -> (B, T, C); positions are start … start + T − 1; causal."""
        raise NotImplementedError("RoPECausalSelfAttention.forward: your code here")


def build_model(cfg: GPTConfig) -> GPT:
    """The course GPT with no pos_emb whose blocks all use RoPECausalSelfAttention."""
    raise NotImplementedError("build_model: your code here")
