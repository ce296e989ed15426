"""Checks for alibi: the paper's slopes, the bias values and mask, and the broken symmetry.

The learner's functions run in the worker; the judge compares what comes back with REFERENCE.md's
slopes and with models.positions (trusted), on head counts and lengths drawn per run, and runs its own
one-layer course GPT with the learner's bias tensor in its own attention (`_BiasedAttention`). A bias
of zeros, or a plain causal mask, earns nothing: the mask counts once the past is penalised by distance.
What the checks say is in exercise.toml's [messages].
"""

import math

import torch
from torch import nn

from models.gpt import GPT, GPTConfig
from models.positions import alibi_bias as course_bias
from models.positions import alibi_slopes as course_slopes
from tutor.grading.kit import (
    CheckFailed,
    below,
    describe,
    expect_tensor,
    fail,
    finite,
    fresh,
    mismatch,
    msg,
    need,
    shape,
)

# ../shared/REFERENCE.md (Press et al. 2022, reference code `get_slopes`)
SLOPES = {
    8: [2.0 ** -(k + 1) for k in range(8)],
    4: [0.25, 0.0625, 0.015625, 0.00390625],
    6: [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125],
    12: [2.0 ** -(k + 1) for k in range(8)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
    3: [0.0625, 0.00390625, 0.25],
}
# float32 holds a slope to 6e-8 relative, and a power taken in float32 of a rounded ratio drifts by up to
# k times that (2e-6 at 32 heads): a float32 answer passes, a wrong slope (off by 1e-3 or more) does not
REL = 5e-6
CLEAR = 1e-3  # a gap the ALiBi layer must reach; the plain layer stays near 1e-7


def _numbers(value, what: str) -> torch.Tensor:
    """A list of numbers or a float tensor of any precision, as float64; anything else is a type mismatch."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            raise fail(msg("as_floats", what=what), describe(value), mismatch())
        return finite(value, what).reshape(-1).to(torch.float64)
    if isinstance(value, list | tuple):
        items = []
        for v in value:
            # a list of one-number tensors (or of numpy floats, which arrive as such) is a list of numbers
            if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel() == 1:
                v = float(v.reshape(()))
            if not isinstance(v, int | float) or isinstance(v, bool):
                raise fail(msg("as_list", what=what), msg("list_holding", what=describe(v)), mismatch())
            items.append(float(v))
        return finite(torch.tensor(items, dtype=torch.float64), what)
    raise fail(msg("as_list_or_tensor", what=what), describe(value), mismatch())


def _compare(sub, n: int, want: list[float]) -> None:
    call = f"alibi_slopes({n})"
    value = need(sub, "alibi_slopes")(n)
    got = _numbers(value, call)
    if got.numel() != n:
        raise fail(msg("n_slopes", n=n), f"{got.numel()}: " + _listed(got.tolist()), call)
    pairs = zip(got.tolist(), want, strict=True)
    bad = [k for k, (g, w) in enumerate(pairs) if not abs(g - w) <= REL * abs(w)]  # NaN-safe
    if bad:
        note = ""
        if isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16):
            note = msg("half_note", dtype=str(value.dtype).removeprefix("torch."))
        raise fail(
            _listed(want), _listed(got.tolist()), msg("first_wrong", call=call, head=bad[0], note=note)
        )


def _listed(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.8g}" for v in values) + "]"


def check_slopes_8(sub) -> str:
    _compare(sub, 8, SLOPES[8])
    _compare(sub, 4, SLOPES[4])
    n = (2, 16, 32)[below(3)]
    _compare(sub, n, course_slopes(n))
    return msg("slopes_8_ok", n=n)


def check_slopes_other(sub) -> str:
    for n in (6, 12, 3):
        _compare(sub, n, SLOPES[n])
    n = (5, 7, 10, 20, 24)[below(5)]
    _compare(sub, n, course_slopes(n))
    return msg("slopes_other_ok", n=n)


def _draw() -> tuple[int, int]:
    """A head count and a length nobody knows in advance."""
    return (4, 8)[below(2)], 5 + below(5)


def _bias(sub, n: int, T: int) -> torch.Tensor:
    """The learner's alibi_bias(n, T) as float64: the right shape, no NaN, finite at and before the query."""
    call = f"alibi_bias({n}, {T})"
    bias = expect_tensor(need(sub, "alibi_bias")(n, T), "alibi_bias")
    if tuple(bias.shape) != (n, T, T):
        raise fail(msg("bias_shape", shape=(n, T, T)), shape(bias), call)
    if not bias.is_floating_point():
        raise fail(msg("float_tensor"), describe(bias), mismatch(call))
    bias = bias.to(torch.float64)
    nan = bias.isnan()
    if bool(nan.any()):
        h, i, j = (int(v) for v in nan.nonzero()[0])
        raise CheckFailed(msg("nan", call=call, at=[h, i, j]))
    past = torch.ones(T, T, dtype=torch.bool).tril()
    infinite = bias.isinf() & past
    if bool(infinite.any()):
        h, i, j = (int(v) for v in infinite.nonzero()[0])
        raise fail(msg("finite_past", j=j, i=i), f"bias[{h}, {i}, {j}] = {float(bias[h, i, j])}", call)
    return bias


def check_bias_values(sub) -> str:
    n, T = _draw()
    bias = _bias(sub, n, T)
    slopes = torch.tensor(course_slopes(n), dtype=torch.float64)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    got = bias - bias.diagonal(dim1=1, dim2=2)[:, :, None]  # softmax ignores a shift per row
    want = -slopes[:, None, None] * (i - j)
    wrong = ((got - want).abs() > 1e-5 * want.abs().clamp(min=1.0)) & (j <= i)
    if bool(wrong.any()):
        h, qi, kj = (int(v) for v in wrong.nonzero()[0])
        raise fail(
            f"bias[{h}, {qi}, {kj}] − bias[{h}, {qi}, {qi}] = −{slopes[h]:.6g}·{qi - kj} = {float(want[h, qi, kj]):.6g}",
            f"{float(got[h, qi, kj]):.6g}",
            msg("bias_where", call=f"alibi_bias({n}, {T})", h=h, q=qi, k=kj),
        )
    return msg("bias_ok", call=f"alibi_bias({n}, {T})")


def check_future_masked(sub) -> str:
    n, T = _draw()
    bias = _bias(sub, n, T)
    weights = torch.softmax(bias, dim=-1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    leaks = weights[:, future]  # (n, number of future pairs)
    leak = float(leaks.max())
    if not leak <= 1e-9:
        h, k = divmod(int(leaks.argmax()), leaks.size(1))
        i, j = (int(v) for v in future.nonzero()[k])
        raise fail(
            msg("future_inf"),
            msg("leak", at=f"bias[{h}, {i}, {j}]", value=f"{float(bias[h, i, j]):.4g}", leak=f"{leak:.3g}"),
            f"alibi_bias({n}, {T})",
        )
    # zeros with −inf above the diagonal pass the lines above: a causal mask and nothing of ALiBi
    rows, later = bias[:, 1:], future[1:]  # each query i ≥ 1 and its keys 0 … i (finite: see _bias)
    spread = rows.masked_fill(later, -math.inf).amax(-1) - rows.masked_fill(later, math.inf).amin(-1)
    flat = spread <= 1e-9
    if bool(flat.any()):
        h, i = (int(v) for v in flat.nonzero()[0])
        i += 1
        raise CheckFailed(
            msg("mask_only", call=f"alibi_bias({n}, {T})", h=h, i=i, value=f"{float(bias[h, i, 0]):.4g}")
        )
    return msg("future_ok", call=f"alibi_bias({n}, {T})")


def _pair(gen: torch.Generator, vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Five distinct random tokens, and the same five with the first four reversed (same last token)."""
    ids = torch.randperm(vocab, generator=gen)[:5]
    return ids[None], torch.cat([ids[:4].flip(0), ids[4:]])[None]


def _gap(model, a: torch.Tensor, b: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(a)[0][0, -1] - model(b)[0][0, -1]).abs().max())


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


def check_breaks_symmetry(sub) -> str:
    n, T, vocab = 4, 5, 32
    learner = _bias(sub, n, T).to(torch.float32)
    gen = fresh()
    cfg = GPTConfig(vocab_size=vocab, n_layer=1, n_head=n, n_embd=32, pos="none")
    # a draw where the course's own ALiBi bias clearly shows the order (almost always the first)
    for _ in range(10):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
            state = GPT(cfg).state_dict()
        a, b = _pair(gen, vocab)
        if _gap(_with_bias(cfg, state, course_bias(n, T)), a, b) > 3 * CLEAR:
            break
    without = _gap(_with_bias(cfg, state, None), a, b)  # the same weights, no bias
    if without > 1e-5:
        raise CheckFailed(msg("plain_sees", gap=f"{without:.3g}"))
    with_alibi = _gap(_with_bias(cfg, state, learner), a, b)
    if not with_alibi > CLEAR:
        raise fail(
            msg("tell_apart"),
            msg("gap_of", gap=f"{with_alibi:.3g}", plain=f"{without:.2e}"),
            msg("tokens", a=a[0].tolist(), b=b[0].tolist()),
        )
    return msg("symmetry_ok", plain=f"{without:.1e}", alibi=f"{with_alibi:.3g}")
