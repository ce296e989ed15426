"""The course's GPT: a small character-level decoder, in the order the lessons read it.

Token embedding + (optionally) a learned position table, a stack of pre-norm blocks of
multi-head causal self-attention and an MLP, then a linear head tied to the token embedding.
`GPTConfig.pos` picks how order reaches attention, so experiments can compare the schemes on
the same model: "learned" (GPT-2's table), "none", "rope" (rotate q and k) or "alibi" (score bias).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

POS_MODES = ("learned", "none", "rope", "alibi")


def _positions():
    """RoPE and ALiBi (positions.py), imported only by the modes that use them: the grading box of the
    RoPE, ALiBi and context-scaling exercises builds this model without the course's own answers."""
    try:
        from tutor.model import positions
    except ImportError as err:  # a grading box that was not handed the course's answers
        raise ImportError(
            "pos='rope' and pos='alibi' need tutor/model/positions.py, the course's own RoPE and ALiBi, which this "
            "exercise's grader does not hand to your code: write that part yourself"
        ) from err
    return positions


@dataclass
class GPTConfig:
    vocab_size: int = 4000
    block_size: int = 128  # longest context trained on; the learned table has this many rows
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True
    pos: str = "learned"
    rope_base: float = 10000.0
    rope_scaling: str = "none"  # none | pi (linear) | ntk | yarn: stretch RoPE past block_size
    rope_scale: float = 1.0
    rope_original_max: int | None = None  # trained length for YaRN's ramp; default block_size

    def __post_init__(self) -> None:
        if self.pos not in POS_MODES:
            raise ValueError(f"unknown position mode {self.pos!r}; choose one of {', '.join(POS_MODES)}")
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.n_embd % self.n_head:
            raise ValueError(
                f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head}): "
                f"each head gets n_embd // n_head dimensions"
            )
        if self.pos == "rope" and (self.n_embd // self.n_head) % 2:
            raise ValueError(
                f"RoPE rotates pairs of dimensions: head dim {self.n_embd // self.n_head} must be even"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.pos == "rope" or self.rope_scaling != "none":
            self.rope_scaling = _positions().canonical_scaling(self.rope_scaling)

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.pos = cfg.pos
        # one matmul makes q, k and v for every head at once
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)
        self.dropout = cfg.dropout
        if cfg.pos == "rope":
            inv_freq, factor = _positions().rope_inv_freq(
                cfg.head_dim,
                cfg.rope_base,
                cfg.rope_scaling,
                cfg.rope_scale,
                cfg.rope_original_max or cfg.block_size,
            )
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.rope_factor = factor

    def forward(
        self, x: torch.Tensor, start: int = 0, need_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The heads' mixed output (B, T, C); with need_weights, also their weights (B, n_head, T, T), rows =
        queries, computed the slow, explicit way (the default uses PyTorch's fused attention)."""
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        # split C into heads: (B, T, C) -> (B, n_head, T, head_dim)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if self.pos == "rope":
            rope = _positions()
            positions = torch.arange(start, start + T, device=x.device)
            cos, sin = rope.rope_cos_sin(positions, self.inv_freq, self.rope_factor, dtype=q.dtype)
            q, k = rope.apply_rope(q, cos, sin), rope.apply_rope(k, cos, sin)
        bias = None
        if self.pos == "alibi":
            bias = _positions().alibi_bias(self.n_head, T, dtype=q.dtype).to(x.device)

        att = None
        if need_weights:
            att = (q @ k.transpose(-2, -1)) / k.size(-1) ** 0.5
            if bias is not None:
                att = att + bias  # already -inf above the diagonal
            else:
                # causal mask: a position may look only at itself and to its left
                future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
                att = att.masked_fill(future, float("-inf"))
            att = att.softmax(dim=-1)
            y = self.attn_drop(att) @ v
        else:
            drop = self.dropout if self.training else 0.0
            if bias is None:
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=drop)
        # put the heads side by side again and let proj mix what they found
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_drop(self.proj(y))
        return y if att is None else (y, att.detach())


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.out = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.out(F.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(
        self, x: torch.Tensor, start: int = 0, need_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The block's output; with need_weights, also its attention weights (B, n_head, T, T)."""
        if not need_weights:  # the attention may be a learner's module that never returns weights
            x = x + self.attn(self.ln1(x), start)
            return x + self.mlp(self.ln2(x))
        y, att = self.attn(self.ln1(x), start, need_weights=True)
        x = x + y
        return x + self.mlp(self.ln2(x)), att


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        if cfg.pos == "learned":
            # one learned vector per position, added to the character's vector
            self.pos_emb = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying: reading and writing share one table
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(
        self,
        idx: torch.Tensor,
        targets: torch.Tensor | None = None,
        start: int = 0,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None] | tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """(logits, loss or None); with need_weights, also every head's attention weights
        (B, n_layer, n_head, T, T), rows = queries, the model keeping nothing of them."""
        B, T = idx.size()
        x = self.tok_emb(idx)
        if self.cfg.pos == "learned":
            if start < 0 or start + T > self.cfg.block_size:
                raise ValueError(
                    f"positions {start}..{start + T - 1} do not fit the learned table of {self.cfg.block_size} rows "
                    f"(block_size): a learned position embedding has no vector past position {self.cfg.block_size - 1}"
                )
            pos = torch.arange(start, start + T, device=idx.device)
            x = x + self.pos_emb(pos)
        x = self.drop(x)
        maps = []
        for block in self.blocks:
            if need_weights:
                x, att = block(x, start, need_weights=True)
                maps.append(att)
            else:
                x = block(x, start)
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        if need_weights:
            return logits, loss, torch.stack(maps, dim=1)
        return logits, loss

    @torch.no_grad()
    def attention_maps(self, idx: torch.Tensor) -> torch.Tensor:
        """Every head's attention weights for one input: (n_layer, n_head, T, T), rows = queries."""
        if idx.dim() == 1:
            idx = idx[None]
        if idx.size(0) != 1:
            raise ValueError(f"attention_maps reads one sequence at a time, got a batch of {idx.size(0)}")
        was_training = self.training
        self.eval()
        try:
            return self(idx, need_weights=True)[2][0]
        finally:
            self.train(was_training)

    @torch.no_grad()
    def generate(
        self,
        prompt: torch.Tensor | list[int],
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        seed: int | None = None,
    ) -> torch.Tensor:
        """Continue `prompt` (token ids) by sampling; returns prompt + new ids as a 1-D tensor."""
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1 (or None for no cut), got {top_k}")
        idx = torch.as_tensor(prompt, dtype=torch.long)
        idx = idx[None] if idx.dim() == 1 else idx
        if idx.numel() == 0:
            raise ValueError("generate needs a non-empty prompt")
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        was_training = self.training
        self.eval()
        try:
            for _ in range(max_new_tokens):
                context = idx[:, -self.cfg.block_size :]
                logits, _ = self(context)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
                    logits = logits.masked_fill(logits < kth, float("-inf"))
                next_id = torch.multinomial(logits.softmax(-1), 1, generator=gen)
                idx = torch.cat([idx, next_id], dim=1)
        finally:
            self.train(was_training)
        return idx[0]
