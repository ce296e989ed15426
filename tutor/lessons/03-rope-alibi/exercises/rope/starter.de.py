"""Rotary Position Embedding (RoPE) für das Kurs-GPT: q und k drehen, pos_emb weglassen.

Bewerten mit:  python -m tutor grade rope
"""

import math  # noqa: F401
from dataclasses import replace  # noqa: F401

import torch
import torch.nn.functional as F  # noqa: F401
from torch import nn

from tutor.model import GPT, GPTConfig


def apply_rope(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Dreht x (..., T, d) um seine Positionen pos (T,): Paar i um den Winkel pos·θᵢ, θᵢ = base^(−2i/d).

    Paare die Dimensionen entweder als (x[i], x[i + d/2]) (die halbierte Form, wie tutor/model/positions.py)
    oder als (x[2i], x[2i + 1]) (verschränkt, wie im RoFormer-Paper); beides wird als richtig bewertet.
    Gibt einen Tensor derselben Form zurück.
    """
    raise NotImplementedError("apply_rope: hier kommt dein Code hin")


class RoPECausalSelfAttention(nn.Module):
    """Ein direkter Ersatz für tutor.model.gpt.CausalSelfAttention: dieselben Schichten qkv und proj,
    q und k gedreht."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.base = cfg.rope_base
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        """x (B, T, C) -> (B, T, C); die Positionen sind start … start + T − 1; kausal."""
        raise NotImplementedError("RoPECausalSelfAttention.forward: hier kommt dein Code hin")


def build_model(cfg: GPTConfig) -> GPT:
    """Das Kurs-GPT ohne pos_emb, in dessen Blöcken überall RoPECausalSelfAttention steckt."""
    raise NotImplementedError("build_model: hier kommt dein Code hin")
