"""Checks for alibi: the paper's slopes, the bias values and mask, and the broken symmetry.

The judge compares what the learner's functions return with the published slopes and with
tutor.model.positions (trusted), and runs its own one-layer course GPT with the learner's bias tensor in its
own attention (`_BiasedAttention`). Head counts (up to 32768 for the slopes, 64 for a bias) and lengths
(up to 48) are drawn per run from ranges no table of answers covers.

Each check fails only for what its title names: slopes_8 judges the power-of-two slopes; slopes_other the
rule for other head counts, on the learner's own power-of-two slopes; bias_values the bias against the
learner's own slopes; future_masked and breaks_symmetry hold for any slopes of either sign. A bias of
zeros, a plain causal mask or noise still earns nothing: the mask and the order seen count only for a
bias that changes steadily with distance (`_by_distance`). A failed check names what the learner's code
gave and the rule it breaks, never the reference's value for that call.
"""

import math
import random

import torch
from torch import nn

from tutor.grading.kit import CheckFailed, expect, expect_above, expect_close, msg
from tutor.model import GPT, GPTConfig
from tutor.model.positions import alibi_bias as course_bias
from tutor.model.positions import alibi_slopes as course_slopes

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


def _numbers(value, call: str, n: int) -> torch.Tensor:
    """What the learner returned for `call`, n numbers (a list or a tensor), as float64."""
    try:
        numbers = torch.as_tensor(value, dtype=torch.float64).flatten()
    except (TypeError, ValueError, RuntimeError):
        raise CheckFailed(msg("not_numbers", call=call, n=n, got=type(value).__name__)) from None
    expect(len(numbers), n, f"len({call})")
    return numbers


def _off(got: torch.Tensor, want: torch.Tensor, n: int) -> int | None:
    """The first index where `got` is not `want` (to float32's drift at n heads), or None."""
    bad = ~((got - want).abs() <= (REL + 5e-8 * n) * want.abs())
    return int(bad.nonzero()[0]) if bool(bad.any()) else None


def check_slopes_8(learner):
    for n in (8, 4, 2 ** random.randint(0, 9), 2 ** random.randint(10, MAX_POWER)):
        call = f"alibi_slopes({n})"
        got = _numbers(learner.alibi_slopes(n), call, n)
        want = torch.tensor(SLOPES[n] if n in SLOPES else course_slopes(n), dtype=torch.float64)
        k = _off(got, want, n)
        if k is not None:  # the learner's slope and the rule it breaks; the right value is theirs to work out
            raise CheckFailed(msg("slope_off", call=call, k=k, got=f"{float(got[k]):.6g}", k1=k + 1, n=n))


def _other(low: int, high: int) -> int:
    """A head count in [low, high] that is not a power of two."""
    while math.log2(n := random.randint(low, high)).is_integer():
        pass
    return n


def check_slopes_other(learner):
    """The paper's rule for n that is no power of two, on the learner's own slopes for p and 2p (their
    values are slopes_8's to judge): alibi_slopes(p), then every other slope of alibi_slopes(2p)."""
    for n in (6, 12, 3, _other(5, 100), _other(101, 4000)):
        p = 2 ** math.floor(math.log2(n))
        low = _numbers(learner.alibi_slopes(p), f"alibi_slopes({p})", p)
        if not (
            bool((low > 0).all()) and len(set(low.tolist())) > 1
        ):  # zeros or one number: no slopes at all
            raise CheckFailed(msg("no_slopes", p=p))
        high = _numbers(learner.alibi_slopes(2 * p), f"alibi_slopes({2 * p})", 2 * p)
        call = f"alibi_slopes({n})"
        got = _numbers(learner.alibi_slopes(n), call, n)
        k = _off(got, torch.cat([low, high[0::2][: n - p]]), n)
        if k is not None:
            said = {"call": call, "k": k, "got": f"{float(got[k]):.6g}", "n": n, "p": p}
            if k < p:
                raise CheckFailed(msg("other_low", yours=f"{float(low[k]):.6g}", **said))
            m = 2 * (k - p)
            raise CheckFailed(msg("other_high", m=m, p2=2 * p, yours=f"{float(high[m]):.6g}", **said))


def _bias(learner) -> tuple[torch.Tensor, str]:
    """The learner's alibi_bias(n, T) as float64, for a head count (two or more: heads that differ) and a
    length drawn now; the call."""
    n, T = random.randint(2, 64), random.randint(10, 48)
    bias = torch.as_tensor(learner.alibi_bias(n, T), dtype=torch.float64)
    expect(bias.shape, (n, T, T))
    return bias, f"alibi_bias({n}, {T})"


def _by_distance(bias: torch.Tensor, call: str) -> None:
    """Fail unless, in every head, the bias of keys 0 … i of each query i changes steadily with their
    distance, the same way in every row: what any slopes give, of either sign. A mask over zeros (one
    value per row) or over noise does not."""
    n, T, _ = bias.shape
    past = torch.ones(T, T, dtype=torch.bool).tril()[:, 1:]  # key j + 1 ≤ query i
    steps = (bias[:, :, 1:] - bias[:, :, :-1]).where(past, math.nan)  # bias of key j + 1 minus key j
    for h in range(n):
        for i in range(1, T):
            row = steps[h, i, :i]
            if bool((row == 0).all()):
                raise CheckFailed(msg("mask_only", call=call, h=h, i=i, value=f"{float(bias[h, i, 0]):.4g}"))
            first = steps[h, 1, 0]
            if not bool((torch.sign(row) == torch.sign(first)).all()):
                shown = ", ".join(f"{float(v):.3g}" for v in bias[h, i, : min(i + 1, 6)])
                raise CheckFailed(msg("not_by_distance", call=call, h=h, i=i, values=shown))


def check_bias_values(learner):
    """−slope·(i − j) for past keys, with the learner's own slopes (their values are the slopes checks'
    business); a shift per query row is allowed (softmax ignores one)."""
    bias, call = _bias(learner)
    n, T, _ = bias.shape
    slopes = _numbers(learner.alibi_slopes(n), f"alibi_slopes({n})", n)
    for h in range(n):  # a penalty: key 0 of query 1 gets less than the diagonal
        if not float(bias[h, 1, 0]) < float(bias[h, 1, 1]):
            step = f"{float(bias[h, 1, 0] - bias[h, 1, 1]):+.4g}"
            raise CheckFailed(msg("no_penalty", call=call, h=h, step=step))
    past = torch.ones(T, T, dtype=torch.bool).tril()
    got = bias - bias.diagonal(dim1=1, dim2=2)[:, :, None]
    distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).to(torch.float64)
    want = -slopes[:, None, None] * distance
    bad = ~((got - want).abs() <= 1e-5 + 1e-5 * want.abs()) & past
    if bool(bad.any()):
        h, i, j = (int(v) for v in bad.nonzero()[0])
        raise CheckFailed(
            msg(
                "bias_off",
                call=call,
                h=h,
                i=i,
                j=j,
                got=f"{float(got[h, i, j]):.6g}",
                n=n,
                slope=f"{float(slopes[h]):.6g}",
            )
        )


def check_future_masked(learner):
    bias, call = _bias(learner)
    T = bias.size(-1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    weights = torch.softmax(bias, dim=-1).where(future, 0.0)
    expect_close(weights, torch.zeros_like(weights), f"softmax({call})[h, i, j], j > i", rtol=0.0, atol=1e-9)
    _by_distance(bias, call)  # a mask over zeros or over noise is no ALiBi, whatever the slopes


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
    call = f"alibi_bias({n}, {T})"
    _by_distance(bias.to(torch.float64), call)  # noise tells orders apart too, but is no ALiBi
    cfg = GPTConfig(vocab_size=vocab, n_layer=1, n_head=n, n_embd=48, pos="none")
    for _ in range(10):  # a draw where the course's own ALiBi bias clearly shows the order (almost always)
        state = GPT(cfg).state_dict()
        a, b = _pair(vocab, T)
        if _gap(_with_bias(cfg, state, course_bias(n, T)), a, b) > 3 * CLEAR:
            break
    plain = _gap(_with_bias(cfg, state, None), a, b)  # the same weights, no bias: rounding only
    gap = _gap(_with_bias(cfg, state, bias), a, b)
    expect_above(gap, CLEAR, msg("tell_apart", T=T, k=T - 1))
    return msg("symmetry_ok", plain=f"{plain:.1e}", alibi=f"{gap:.3g}")
