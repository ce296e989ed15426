"""Checks for alibi: the paper's slopes, the bias values and mask, and the broken symmetry.

The judge compares what the learner's functions return with the published slopes and with
models.positions (trusted), and runs its own one-layer course GPT with the learner's bias tensor in its
own attention (`_BiasedAttention`), against the same GPT with the course's bias. Head counts (up to
32768 for the slopes, 64 for a bias) and lengths (up to 48) are drawn per run from ranges no table of
answers covers. A bias of zeros, a plain causal mask or noise earns nothing: every check compares
values, the mask counts next to the past's distance penalty, and the order a layer sees must be ALiBi's.
"""

import math
import random

import torch
from torch import nn

from models.gpt import GPT, GPTConfig
from models.positions import alibi_bias as course_bias
from models.positions import alibi_slopes as course_slopes
from tutor.grading.kit import CheckFailed, expect, expect_above, expect_close, msg

# Press et al. 2022 (ALiBi), their reference code `get_slopes`
SLOPES = {
    8: [2.0 ** -(k + 1) for k in range(8)],
    4: [0.25, 0.0625, 0.015625, 0.00390625],
    6: [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125],
    12: [2.0 ** -(k + 1) for k in range(8)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
    3: [0.0625, 0.00390625, 0.25],
}
# float32 holds a slope to 6e-8 relative, and a power taken in float32 of a rounded ratio drifts by about
# k times that (2e-6 at 32 heads, 2e-4 at 32768): a float32 answer passes, a wrong slope does not
REL = 5e-6
CLEAR = 1e-3  # a gap the ALiBi layer must reach; the plain layer stays near 1e-7
MAX_POWER = 15  # slopes for up to 2^15 = 32768 heads: a table of every answer would not fit in a file


def _slopes(learner, *counts: int) -> None:
    """alibi_slopes(n), a list of numbers or a float tensor, against the published ones or the course's."""
    for n in counts:
        want = SLOPES[n] if n in SLOPES else course_slopes(n)
        expect_close(learner.alibi_slopes(n), want, rtol=REL + 5e-8 * n, atol=0.0)


def _other(low: int, high: int) -> int:
    """A head count in [low, high] that is not a power of two."""
    while math.log2(n := random.randint(low, high)).is_integer():
        pass
    return n


def check_slopes_8(learner):
    _slopes(learner, 8, 4, 2 ** random.randint(0, 9), 2 ** random.randint(10, MAX_POWER))


def check_slopes_other(learner):
    _slopes(learner, 6, 12, 3, _other(5, 100), _other(101, 4000))


def _bias(learner) -> tuple[torch.Tensor, str]:
    """The learner's alibi_bias(n, T) as float64, for a head count and a length drawn now; the call."""
    n, T = random.randint(1, 64), random.randint(10, 48)
    bias = torch.as_tensor(learner.alibi_bias(n, T), dtype=torch.float64)
    expect(bias.shape, (n, T, T))
    return bias, f"alibi_bias({n}, {T})"


def _past(bias: torch.Tensor, call: str) -> None:
    """Fail unless the bias of every key j ≤ i is −slope·(i − j), up to a shift per query row (softmax
    ignores one)."""
    n, T, _ = bias.shape
    past = torch.ones(T, T, dtype=torch.bool).tril()  # keys j ≤ query i
    got = (bias - bias.diagonal(dim1=1, dim2=2)[:, :, None]).where(past, 0.0)
    distance = torch.arange(T)[:, None] - torch.arange(T)[None, :]
    want = (-torch.tensor(course_slopes(n), dtype=torch.float64)[:, None, None] * distance).where(past, 0.0)
    expect_close(got, want, f"{call}[h, i, j] − {call}[h, i, i], j ≤ i", rtol=1e-5, atol=1e-5)


def check_bias_values(learner):
    _past(*_bias(learner))


def check_future_masked(learner):
    bias, call = _bias(learner)
    T = bias.size(-1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    weights = torch.softmax(bias, dim=-1).where(future, 0.0)
    expect_close(weights, torch.zeros_like(weights), f"softmax({call})[h, i, j], j > i", rtol=0.0, atol=1e-9)
    # zeros with −inf above the diagonal pass the line above: a causal mask and nothing of ALiBi
    rows, later = bias[:, 1:], future[1:]  # each query i ≥ 1 and its keys 0 … i
    spread = rows.masked_fill(later, -math.inf).amax(-1) - rows.masked_fill(later, math.inf).amin(-1)
    flat = (spread <= 1e-9).nonzero()
    if len(flat):
        h, i = int(flat[0, 0]), int(flat[0, 1]) + 1
        raise CheckFailed(msg("mask_only", call=call, h=h, i=i, value=f"{float(bias[h, i, 0]):.4g}"))
    _past(bias, call)  # and noise under the mask is not ALiBi either


def _pair(vocab: int, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """T distinct random tokens, and the same T with the first T − 1 reversed (the same last token)."""
    ids = torch.randperm(vocab)[:T]
    return ids[None], torch.cat([ids[:-1].flip(0), ids[-1:]])[None]


def _last(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(ids)[0][0, -1]


def _gap(model, a: torch.Tensor, b: torch.Tensor) -> float:
    return float((_last(model, a) - _last(model, b)).abs().max())


class _BiasedAttention(nn.Module):
    """The course attention with a given (n_head, T, T) score bias added before the softmax, as the
    course model does with ALiBi: the bias is also the causal mask. The judge's own code, fed the
    learner's tensor; its parameters have the course attention's names, so a block's weights load."""

    def __init__(self, cfg: GPTConfig, bias: torch.Tensor):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.register_buffer("bias", bias, persistent=False)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1)) + self.bias[:, :T, :T].to(q.dtype)
        y = att.softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


def _with_bias(cfg: GPTConfig, state: dict, bias: torch.Tensor | None) -> GPT:
    """The course GPT without positions and with `state`'s weights; with `bias`, every block's attention
    is `_BiasedAttention` with that bias (ALiBi's), without, the plain causal attention."""
    model = GPT(cfg)
    if bias is not None:
        for block in model.blocks:
            block.attn = _BiasedAttention(cfg, bias)
    model.load_state_dict(state)
    return model.eval()


def check_breaks_symmetry(learner):
    # heads that divide n_embd 48, but not one: a lone slope of 1/256 moves a short line's logits too little
    n, T, vocab = random.choice((2, 3, 4, 6, 8, 12, 16)), random.randint(8, 40), 64
    bias = torch.as_tensor(learner.alibi_bias(n, T), dtype=torch.float32)
    expect(bias.shape, (n, T, T))
    cfg = GPTConfig(vocab_size=vocab, n_layer=1, n_head=n, n_embd=48, pos="none")
    for _ in range(10):  # a draw where the course's own ALiBi bias clearly shows the order (almost always)
        state = GPT(cfg).state_dict()
        a, b = _pair(vocab, T)
        alibi = _with_bias(cfg, state, course_bias(n, T))
        if _gap(alibi, a, b) > 3 * CLEAR:
            break
    plain = _gap(_with_bias(cfg, state, None), a, b)  # the same weights, no bias: rounding only
    yours = _with_bias(cfg, state, bias)
    gap = _gap(yours, a, b)
    expect_above(gap, CLEAR, msg("tell_apart", T=T, k=T - 1))
    for ids in (a, b):  # any bias that differs by distance tells orders apart: the order seen must be ALiBi's
        expect_close(_last(yours, ids), _last(alibi, ids), msg("same_logits", n=n, T=T), rtol=0.0, atol=1e-4)
    return msg("symmetry_ok", plain=f"{plain:.1e}", alibi=f"{gap:.3g}")
