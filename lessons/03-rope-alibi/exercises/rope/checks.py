"""Checks for rope: apply_rope's geometry, agreement with the reference (either pairing), the
attention module (causal, same output as a reference with the weights the judge gives it), the model
(no pos_emb, the learner's attention in every block, sees the order with one layer) and its loss and
gradients, which must match a reference model's on random weights and inputs.

Inputs, positions and weights are drawn per run. Returning x unchanged keeps the shape, the lengths and
the relative scores too: those checks count only once apply_rope turns x at a nonzero position.
`start` is graded through apply_rope(x, pos) with pos = start … start + T − 1: within one call, RoPE
attention gives the same output at any start (scores depend on n − m only), so the module's output
cannot show whether forward honours it.
"""

import random
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from models.gpt import GPT, GPTConfig
from models.positions import apply_rope as half_rope
from models.positions import rope_cos_sin, rope_inv_freq
from tutor.grading.kit import expect, expect_above, expect_close, expect_number, msg

LAYOUTS = ("half", "interleaved")
ORDER = 1e-3  # a one-layer RoPE model tells two orders apart by ~0.1–3 on random weights; without, ~1e-6
CFG = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=4, n_embd=32, pos="none")
C = CFG.n_embd
ATTENTION = {"qkv.weight": (3 * C, C), "qkv.bias": (3 * C,), "proj.weight": (C, C), "proj.bias": (C,)}


def _reference(x: torch.Tensor, pos: torch.Tensor, base: float, layout: str) -> torch.Tensor:
    """RoPE in float64 with half-split pairs (xᵢ, xᵢ₊d/₂) or interleaved pairs (x₂ᵢ, x₂ᵢ₊₁)."""
    inv_freq, _ = rope_inv_freq(x.size(-1), base)
    x64 = x.to(torch.float64)
    if layout == "half":
        cos, sin = rope_cos_sin(pos, inv_freq, dtype=torch.float64)
        return half_rope(x64, cos, sin)
    angles = pos.to(torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos(), angles.sin()
    even, odd = x64[..., 0::2], x64[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class _ReferenceAttention(nn.Module):
    """The attention the learner is asked to write, with either pairing, for the same weights."""

    def __init__(self, cfg: GPTConfig, layout: str):
        super().__init__()
        self.n_head, self.base, self.layout = cfg.n_head, cfg.rope_base, layout
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x: torch.Tensor, start: int = 0, need_weights: bool = False) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        pos = torch.arange(start, start + T)
        q, k = (_reference(t, pos, self.base, self.layout).to(x.dtype) for t in (q, k))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


def _reference_model(cfg: GPTConfig, layout: str) -> GPT:
    model = GPT(cfg)
    for block in model.blocks:
        block.attn = _ReferenceAttention(cfg, layout)
    return model


def _random_state(names: dict) -> dict[str, torch.Tensor]:
    """Weights for every parameter, drawn now: LayerNorm weights near 1, everything else small."""
    state = {}
    for name, size in names.items():
        t = torch.randn(size) * 0.2
        state[name] = t + 1.0 if name.endswith(("ln1.weight", "ln2.weight", "ln_f.weight")) else t
    return state


def _rope(learner, x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """The learner's apply_rope(x, pos, base) in float64, of x's shape."""
    got = torch.as_tensor(learner.apply_rope(x, pos, base), dtype=torch.float64)
    expect(got.shape, x.shape)
    return got


def _turned(learner, x: torch.Tensor) -> torch.Tensor:
    """apply_rope(x, 0 … T − 1), failing unless it moved x at a nonzero position drawn now: returning x
    unchanged keeps the shape, the lengths and the relative scores as well."""
    got = _rope(learner, x, torch.arange(x.size(-2)))
    p = random.randint(1, x.size(-2) - 1)
    before = x[..., p, :].double()
    moved = float((got[..., p, :] - before).abs().max())
    # NaN counts as moved here: the comparisons after it fail on it
    assert not moved <= 1e-5 * float(before.abs().max()), msg("unrotated", p=p)
    return got


def check_shape_kept(learner):
    for size in ((2, 3, random.randint(3, 11), 16), (random.randint(3, 11), 8)):
        _turned(learner, torch.randn(size))


def check_norms_kept(learner):
    x = torch.randn(2, 3, random.randint(5, 19), 16)
    norms = _turned(learner, x).norm(dim=-1)
    expect_close(norms, x.double().norm(dim=-1), "‖apply_rope(x, pos)‖", rtol=1e-4, atol=0.0)


def check_relative_only(learner):
    T, d = 48, 32
    q, k = (torch.randn(d).expand(T, d).contiguous() for _ in range(2))
    scores = _turned(learner, q) @ _turned(learner, k).T  # scores[m, n] = <R_m q, R_n k>
    m, n = torch.arange(T)[:, None], torch.arange(T)[None, :]
    first = torch.minimum(m, n)  # scores[m, n] against the first of its diagonal, at the same n − m
    expect_close(scores, scores[m - first, n - first], msg("same_distance"), rtol=0.0, atol=1e-3)


def _closest(got: torch.Tensor, outputs: dict[str, torch.Tensor]) -> str:
    """The layout whose output is closest to `got`."""
    return min(outputs, key=lambda lay: float((got.double() - outputs[lay].double()).abs().max()))


def check_matches_reference(learner):
    x = torch.randn(2, 4, 6, 16)
    start, base = random.randint(1, 199), float(random.randint(100, 19999))
    seen = []
    for pos, b in ((torch.arange(6), 10000.0), (torch.arange(start, start + 6), base)):
        got = _rope(learner, x, pos, b)
        want = {lay: _reference(x, pos, b, lay) for lay in LAYOUTS}
        seen.append(_closest(got, want))
        expect_close(got, want[seen[-1]], rtol=0.0, atol=1e-4)
    return msg("agrees", pairing=msg(f"pairing_{seen[0]}"), start=start, base=f"{base:g}")


def _attention(learner):
    """The learner's attention, built from CFG and loaded with weights drawn now; the weights too."""
    module = learner.RoPECausalSelfAttention(CFG)
    expect(sorted(module.params), sorted(ATTENTION))
    state = _random_state(ATTENTION)
    module.load(state)
    return module, state


def _output(module, x: torch.Tensor, start: int = 0) -> torch.Tensor:
    got = torch.as_tensor(module.run(x, start=start), dtype=torch.float64)
    expect(got.shape, x.shape, f"attn(Tensor{list(x.shape)}, start={start})")
    return got


def check_causal(learner):
    module, _ = _attention(learner)
    T = random.randint(6, 13)
    p = random.randint(1, T - 2)  # with a later position to reach
    x = torch.randn(1, T, C)
    x2 = x.clone()
    x2[0, p] += 1.0
    y, y2 = _output(module, x), _output(module, x2)
    expect_close(y2[0, :p], y[0, :p], msg("before_p", p=p), rtol=0.0, atol=1e-6)
    # returning x, zeros or proj(x) sees no future either: causal counts once later positions attend to p
    expect_above(float((y2[0, p + 1 :] - y[0, p + 1 :]).abs().max()), 1e-6, msg("after_p", p=p))


def check_attention_output(learner):
    module, state = _attention(learner)
    x = torch.randn(2, random.randint(5, 11), C)
    for start in (0, random.randint(3, 59)):
        got = _output(module, x, start)
        want = {}
        for layout in LAYOUTS:
            ref = _ReferenceAttention(CFG, layout)
            ref.load_state_dict(state)
            with torch.no_grad():
                want[layout] = ref(x, start)
        where = f"attn(Tensor{list(x.shape)}, start={start})"
        expect_close(got, want[_closest(got, want)], where, rtol=0.0, atol=1e-4)


def _last_logits(model, idx: torch.Tensor) -> torch.Tensor:
    logits = model.run(idx)
    logits = torch.as_tensor(logits[0] if isinstance(logits, list) else logits, dtype=torch.float64)
    expect(logits.shape, (1, idx.size(1), CFG.vocab_size), f"model(Tensor{list(idx.shape)})[0].shape")
    return logits[0, -1]


def check_no_pos_emb(learner):
    model = learner.build_model(replace(CFG, pos="learned"))
    expect([n for n in model.params if "pos_emb" in n], [], msg("pos_emb_params"))
    attns = [cls if own else f"models.gpt.{cls}" for n, cls, own in model.modules
             if n.startswith("blocks.") and n.endswith(".attn")]  # fmt: skip
    expect(attns, ["RoPECausalSelfAttention"] * CFG.n_layer, msg("block_attention"))
    _last_logits(model, torch.randint(0, CFG.vocab_size, (1, CFG.block_size + random.randint(2, 9))))
    # a one-layer model without pos_emb sees the order only through the rotation: five characters and
    # the same five with the first four reversed give different last logits (without RoPE, ~1e-6)
    cfg = replace(CFG, n_layer=1)
    model = learner.build_model(replace(cfg, pos="learned"))
    reference = _reference_model(cfg, "half").eval()
    for _ in range(10):  # weights on which the reference clearly sees the order (almost always the first)
        state = _random_state({n: tuple(p.shape) for n, p in reference.named_parameters()})
        reference.load_state_dict(state, strict=False)
        ids = torch.randperm(cfg.vocab_size)[:5]
        a, b = ids[None], torch.cat([ids[:4].flip(0), ids[4:]])[None]
        with torch.no_grad():
            if float((reference(a)[0][0, -1] - reference(b)[0][0, -1]).abs().max()) > 100 * ORDER:
                break
    model.load(state)
    gap = float((_last_logits(model, a) - _last_logits(model, b)).abs().max())
    expect_above(gap, ORDER, msg("sees_order", a=a[0].tolist(), b=b[0].tolist()))


def _trained(cfg: GPTConfig, layout: str, state: dict, idx, targets) -> tuple[float, dict]:
    """A reference model's loss and gradients for `state`'s weights on one batch."""
    ref = _reference_model(cfg, layout)
    ref.load_state_dict(state, strict=False)
    _, loss = ref(idx, targets)
    loss.backward()
    return float(loss), {n: p.grad for n, p in ref.named_parameters()}


def _gap(got: dict, want: dict) -> float:
    """The worst gradient's distance from `want`'s, relative to its size (inf for one missing)."""
    gaps = [float((got[n].double() - g).abs().max()) / (float(g.abs().max()) + 1e-8)
            if isinstance(got.get(n), torch.Tensor) and got[n].shape == g.shape else float("inf")
            for n, g in want.items()]  # fmt: skip
    return max(gaps)


def check_trains(learner):
    model = learner.build_model(CFG)
    state = _random_state({n: tuple(p.shape) for n, p in _reference_model(CFG, "half").named_parameters()})
    model.load(state)
    idx, targets = (torch.randint(0, CFG.vocab_size, (4, CFG.block_size)) for _ in range(2))
    got = model.grads(idx, targets)
    loss = expect_number(got["loss"], "model(idx, targets)[1]")
    refs = [_trained(CFG, layout, state, idx, targets) for layout in LAYOUTS]
    want_loss, want_grads = min(refs, key=lambda ref: abs(loss - ref[0]) + _gap(got["grads"], ref[1]))
    expect_close(loss, want_loss, "model(idx, targets)[1]", rtol=0.0, atol=1e-4)
    for name, grad in want_grads.items():
        atol = 1e-3 * float(grad.abs().max()) + 1e-8
        expect_close(got["grads"].get(name), grad, f"`{name}.grad`", rtol=0.0, atol=atol)
