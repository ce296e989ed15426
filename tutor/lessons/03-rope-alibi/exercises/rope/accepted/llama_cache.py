"""An accepted alternative in the style of Meta's Llama: interleaved pairs turned as complex numbers, and
the attention's turns computed once for 2 × block_size positions (`freqs_cis`), then sliced at `start`."""

from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from tutor.model import GPT, GPTConfig


def _freqs_cis(pos: torch.Tensor, d: int, base: float) -> torch.Tensor:
    """(T, d/2) unit complex numbers e^(i·m·θⱼ) for the positions m in pos, θⱼ = base^(−2j/d)."""
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.outer(pos.to(torch.float64), theta)
    return torch.polar(torch.ones_like(angles), angles).to(torch.complex64)


def _turn(x: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    """x (..., T, d), its pairs (x₂ⱼ, x₂ⱼ₊₁) read as complex numbers and multiplied by freqs_cis (T, d/2)."""
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * freqs_cis).flatten(-2).type_as(x)


def apply_rope(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate each interleaved pair (x₂ᵢ, x₂ᵢ₊₁) of x (..., T, d) by pos·θᵢ: a product of complex numbers."""
    return _turn(x, _freqs_cis(pos, x.size(-1), base))


class RoPECausalSelfAttention(nn.Module):
    """The course attention, with q and k turned by a table of e^(i·m·θ) made once, as Llama does."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        # Llama keeps twice the trained length: generating may run on past block_size
        positions = torch.arange(2 * cfg.block_size)
        freqs_cis = _freqs_cis(positions, cfg.n_embd // cfg.n_head, cfg.rope_base)
        self.register_buffer("freqs_cis", freqs_cis, persistent=False)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        freqs_cis = self.freqs_cis[start : start + T]  # positions start … start + T − 1
        q, k = _turn(q, freqs_cis), _turn(k, freqs_cis)  # v carries content only
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


def build_model(cfg: GPTConfig) -> GPT:
    """The course GPT without pos_emb, every block's attention replaced by the RoPE one."""
    cfg = replace(cfg, pos="none")  # no position table: the rotation carries the positions
    model = GPT(cfg)
    for block in model.blocks:
        block.attn = RoPECausalSelfAttention(cfg)
    model.apply(model._init_weights)
    return model
