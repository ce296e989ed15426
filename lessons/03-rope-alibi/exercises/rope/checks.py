"""Checks for rope: apply_rope's geometry, agreement with the reference (either pairing), the
attention module (causal, same output as a reference with the weights the judge gives it), the model
(no pos_emb, the learner's attention in every block, sees the order with one layer) and its loss and
gradients, which must match a reference model's on random weights and inputs.

Inputs, positions and weights are drawn fresh for every run, and every verdict comes from what the
learner's code returns, never from its source. Returning x unchanged keeps the shape, the lengths and
the relative scores too: those checks count only once apply_rope turns x at a nonzero position.
`start` is graded through apply_rope(x, pos) with pos = start … start + T − 1: within one call, RoPE
attention gives the same output at any start (scores depend on n − m only), so the module's output
cannot show whether forward honours it. What the checks say is in exercise.toml's [messages].
"""

import math
from dataclasses import asdict

import torch
import torch.nn.functional as F
from torch import nn

from models.gpt import GPT, GPTConfig
from models.positions import apply_rope as half_rope
from models.positions import rope_cos_sin, rope_inv_freq
from tutor.grading.kit import (
    CheckFailed,
    expect_tensor,
    fail,
    finite,
    fresh,
    max_diff,
    mismatch,
    msg,
    need,
    shape,
)

LAYOUTS = ("half", "interleaved")
ORDER = 1e-3  # a one-layer RoPE model tells two orders apart by ~0.1–3 on random weights; without, ~1e-6
CFG = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=4, n_embd=32, pos="none")


def _rope(sub, x, pos, base=10000.0) -> torch.Tensor:
    got = expect_tensor(need(sub, "apply_rope")(x, pos, base), "apply_rope")
    return finite(got, "apply_rope")


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


def _random_state(names: dict, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Weights for every parameter, drawn now: LayerNorm weights near 1, everything else small."""
    state = {}
    for name, size in names.items():
        t = torch.randn(size, generator=gen) * 0.2
        state[name] = t + 1.0 if name.endswith(("ln1.weight", "ln2.weight", "ln_f.weight")) else t
    return state


def _turned(x: torch.Tensor, got: torch.Tensor, gen: torch.Generator) -> None:
    """Fail unless `got` = apply_rope(x, 0 … T − 1) moved x at a nonzero position drawn now: returning x
    unchanged keeps the shape, the lengths and the relative scores as well."""
    p = int(torch.randint(1, x.size(-2), (1,), generator=gen))
    before, after = x[..., p, :].double(), got[..., p, :].double()
    if float((after - before).abs().max()) <= 1e-5 * float(before.abs().max()):
        raise CheckFailed(msg("unrotated", p=p))


def check_shape_kept(sub) -> str:
    gen = fresh()
    sizes = (
        (2, 3, int(torch.randint(3, 12, (1,), generator=gen)), 16),
        (int(torch.randint(3, 12, (1,), generator=gen)), 8),
    )
    for size in sizes:
        x = torch.randn(*size, generator=gen)
        got = _rope(sub, x, torch.arange(size[-2]))
        if got.shape != x.shape:
            raise fail(msg("input_shape", shape=tuple(x.shape)), shape(got), "apply_rope(x, pos)")
        _turned(x, got, gen)
    return msg("shape_ok", a=sizes[0], b=sizes[1])


def check_norms_kept(sub) -> str:
    gen = fresh()
    T = int(torch.randint(5, 20, (1,), generator=gen))
    x = torch.randn(2, 3, T, 16, generator=gen)
    got = _rope(sub, x, torch.arange(T))
    if got.shape != x.shape:
        raise fail(msg("a_shape", shape=tuple(x.shape)), shape(got), "apply_rope(x, pos)")
    _turned(x, got, gen)
    norms = x.norm(dim=-1)
    rel = float(((got.double().norm(dim=-1) - norms).abs() / norms).max())
    if rel > 1e-4:
        raise fail(msg("lengths_same"), msg("rel_change", rel=f"{rel:.3g}"))
    return msg("norms_ok", rel=f"{rel:.1e}")


def check_relative_only(sub) -> str:
    gen = fresh()
    T, d = 48, 32
    q = torch.randn(d, generator=gen).expand(T, d).contiguous()
    k = torch.randn(d, generator=gen).expand(T, d).contiguous()
    pos = torch.arange(T)
    rq, rk = _rope(sub, q, pos).double(), _rope(sub, k, pos).double()
    if rq.shape != q.shape or rk.shape != k.shape:
        raise fail(msg("a_shape", shape=(T, d)), shape(rq), "apply_rope(x, pos)")
    _turned(q, rq, gen)
    _turned(k, rk, gen)
    scores = rq @ rk.T  # scores[m, n] = <R_m q, R_n k>
    worst, at = 0.0, 0
    for offset in range(-(T - 1), T):
        diag = torch.diagonal(scores, offset)
        spread = float(diag.max() - diag.min())
        if spread > worst:
            worst, at = spread, offset
    if worst > 1e-3:
        raise fail(msg("same_score"), msg("spread", at=at, worst=f"{worst:.3g}"), msg("qk_after"))
    return msg("relative_ok", worst=f"{worst:.1e}")


def _which_layout(
    got: torch.Tensor, x: torch.Tensor, pos: torch.Tensor, base: float
) -> tuple[str | None, float]:
    errors = {lay: max_diff(got.double(), _reference(x, pos, base, lay)) for lay in LAYOUTS}
    best = min(errors, key=errors.get)
    return (best if errors[best] < 1e-4 else None), errors[best]


def check_matches_reference(sub) -> str:
    gen = fresh()
    x = torch.randn(2, 4, 6, 16, generator=gen)
    start = int(torch.randint(1, 200, (1,), generator=gen))
    base = float(torch.randint(100, 20000, (1,), generator=gen))
    seen = []
    for pos, b in ((torch.arange(6), 10000.0), (torch.arange(start, start + 6), base)):
        got = _rope(sub, x, pos, b)
        if got.shape != x.shape:
            raise fail(msg("a_shape", shape=tuple(x.shape)), shape(got), "apply_rope(x, pos, base)")
        layout, err = _which_layout(got, x, pos, b)
        if layout is None:
            raise fail(
                msg("rope_either"),
                msg("away", err=f"{err:.3g}", first=int(pos[0]), last=int(pos[-1]), base=f"{b:g}"),
            )
        seen.append(layout)
    return msg("agrees", pairing=msg(f"pairing_{seen[0]}"), start=start, base=f"{base:g}")


def _attention(sub, gen: torch.Generator):
    """The learner's attention, built from CFG and loaded with weights drawn now; the weights too."""
    need(sub, "RoPECausalSelfAttention")
    module = sub.new("RoPECausalSelfAttention", asdict(CFG))
    C = CFG.n_embd
    expected = {"qkv.weight": (3 * C, C), "qkv.bias": (3 * C,), "proj.weight": (C, C), "proj.bias": (C,)}
    if not module.is_module or any(module.params.get(n) != s for n, s in expected.items()):
        raise CheckFailed(msg("needs_linear", params=sorted(module.params)))
    extra = sorted(set(module.params) - set(expected))
    if extra:
        raise CheckFailed(msg("extra_params", extra=extra))
    state = _random_state(expected, gen)
    module.load(state)
    return module, state


def check_causal(sub) -> str:
    gen = fresh()
    module, _ = _attention(sub, gen)
    T = int(torch.randint(6, 14, (1,), generator=gen))
    p = int(torch.randint(1, T - 1, (1,), generator=gen))  # with a later position to reach
    x = torch.randn(1, T, CFG.n_embd, generator=gen)
    x2 = x.clone()
    x2[0, p] += 1.0
    y, y2 = (
        finite(
            expect_tensor(module.run(t), "RoPECausalSelfAttention.forward"), "RoPECausalSelfAttention.forward"
        )
        for t in (x, x2)
    )
    for got in (y, y2):
        if got.shape != x.shape:
            raise fail(msg("output_shape", shape=tuple(x.shape)), shape(got), "attention(x)")
    leak = float((y2[0, :p] - y[0, :p]).abs().max())
    if leak > 1e-6:
        raise fail(msg("unchanged", last=p - 1, p=p), msg("moved", leak=f"{leak:.3g}"))
    # returning x, zeros or proj(x) sees no future either: causal counts once later positions attend to p
    reach = float((y2[0, p + 1 :] - y[0, p + 1 :]).abs().max())
    if reach <= 1e-6:
        raise fail(msg("reaches", p=p, first=p + 1, last=T - 1), msg("not_reached", reach=f"{reach:.3g}"))
    return msg("causal_ok", p=p, last=p - 1, first=p + 1, end=T - 1)


def check_attention_output(sub) -> str:
    gen = fresh()
    module, state = _attention(sub, gen)
    T = int(torch.randint(5, 12, (1,), generator=gen))
    start = int(torch.randint(3, 60, (1,), generator=gen))
    x = torch.randn(2, T, CFG.n_embd, generator=gen)
    for at in (0, start):
        got = finite(
            expect_tensor(module.run(x, start=at), "RoPECausalSelfAttention.forward"), "attention(x)"
        )
        if got.shape != x.shape:
            raise fail(msg("output_shape", shape=tuple(x.shape)), shape(got), "attention(x)")
        errors = {}
        for layout in LAYOUTS:
            ref = _ReferenceAttention(CFG, layout)
            ref.load_state_dict(state)
            with torch.no_grad():
                errors[layout] = max_diff(got, ref(x, at))
        if min(errors.values()) > 1e-4:
            raise fail(msg("attention_formula"), msg("output_away", err=f"{min(errors.values()):.3g}", at=at))
    return msg("attention_ok", start=start)


def _model(sub, cfg: GPTConfig):
    need(sub, "build_model")
    model = sub.new("build_model", asdict(cfg))
    if not model.is_module:
        raise fail(msg("returns_module"), model.class_name, mismatch())
    return model


def check_no_pos_emb(sub) -> str:
    cfg = GPTConfig(**{**asdict(CFG), "pos": "learned"})
    model = _model(sub, cfg)
    names = [n for n in model.params if "pos_emb" in n]
    if names:
        raise fail(msg("no_pos_emb"), msg("parameters", names=names))
    attns = [
        (n, cls, own) for n, cls, own in model.modules if n.startswith("blocks.") and n.endswith(".attn")
    ]
    if len(attns) != cfg.n_layer or not all(
        cls == "RoPECausalSelfAttention" and own for _, cls, own in attns
    ):
        kinds = ", ".join(f"`{n}`: `{cls}`" for n, cls, _ in attns) or msg("no_blocks")
        raise fail(msg("every_block"), kinds)
    gen = fresh()
    T = cfg.block_size + int(torch.randint(2, 10, (1,), generator=gen))
    logits = model.run(torch.randint(0, cfg.vocab_size, (1, T), generator=gen))
    logits = logits[0] if isinstance(logits, list) else logits
    logits = expect_tensor(logits, msg("the_model"))
    if tuple(logits.shape) != (1, T, cfg.vocab_size):
        raise fail(msg("logits_shape", shape=(1, T, cfg.vocab_size)), shape(logits))
    gap = _sees_order(sub, gen)
    return msg("no_pos_emb_ok", gap=gap)


def _course_params(model, wanted: dict) -> None:
    if model.params != wanted:
        missing, extra = sorted(set(wanted) - set(model.params)), sorted(set(model.params) - set(wanted))
        raise fail(msg("course_params"), msg("missing_extra", missing=missing[:4], extra=extra[:4]))


def _last_logits(model, idx: torch.Tensor) -> torch.Tensor:
    logits = model.run(idx)
    logits = logits[0] if isinstance(logits, list) else logits
    logits = finite(expect_tensor(logits, msg("the_model")), msg("the_model"))
    if tuple(logits.shape) != (1, idx.size(1), CFG.vocab_size):
        raise fail(msg("logits_shape", shape=(1, idx.size(1), CFG.vocab_size)), shape(logits))
    return logits[0, -1].double()


def _sees_order(sub, gen: torch.Generator) -> str:
    """A one-layer model without pos_emb sees the order only through the rotation: with the same weights,
    five characters and the same five with the first four reversed must give different last logits
    (without RoPE the two differ by float rounding, ~1e-6). Returns the gap, formatted."""
    cfg = GPTConfig(**{**asdict(CFG), "n_layer": 1})
    model = _model(sub, GPTConfig(**{**asdict(cfg), "pos": "learned"}))
    reference = _reference_model(cfg, "half").eval()
    wanted = {n: tuple(p.shape) for n, p in reference.named_parameters()}
    _course_params(model, wanted)
    for _ in range(10):  # weights on which the reference clearly sees the order (almost always the first)
        state = _random_state(wanted, gen)
        reference.load_state_dict(state, strict=False)
        ids = torch.randperm(cfg.vocab_size, generator=gen)[:5]
        a, b = ids[None], torch.cat([ids[:4].flip(0), ids[4:]])[None]
        with torch.no_grad():
            want = float((reference(a)[0][0, -1] - reference(b)[0][0, -1]).abs().max())
        if want > 100 * ORDER:
            break
    model.load(state)
    gap = float((_last_logits(model, a) - _last_logits(model, b)).abs().max())
    if not gap > ORDER:
        raise fail(
            msg("sees_order"),
            msg("order_gap", gap=f"{gap:.3g}", want=f"{want:.3g}"),
            msg("tokens", a=a[0].tolist(), b=b[0].tolist()),
        )
    return f"{gap:.3g}"


def check_trains(sub) -> str:
    model = _model(sub, CFG)
    gen = fresh()
    reference = {lay: _reference_model(CFG, lay) for lay in LAYOUTS}
    wanted = {n: tuple(p.shape) for n, p in reference["half"].named_parameters()}
    _course_params(model, wanted)
    state = _random_state(wanted, gen)
    model.load(state)
    T = CFG.block_size
    idx = torch.randint(0, CFG.vocab_size, (4, T), generator=gen)
    targets = torch.randint(0, CFG.vocab_size, (4, T), generator=gen)
    got = model.grads(idx, targets)
    loss = got.get("loss") if isinstance(got, dict) else None
    grads = got.get("grads", {}) if isinstance(got, dict) else {}
    if not isinstance(loss, torch.Tensor) or not math.isfinite(float(loss)):
        raise fail(msg("finite_loss"), repr(loss)[:60])
    report = {}
    for layout, ref in reference.items():
        ref.load_state_dict(state, strict=False)
        _, ref_loss = ref(idx, targets)
        ref.zero_grad()
        ref_loss.backward()
        worst = 0.0
        for name, p in ref.named_parameters():
            g = grads.get(name)
            if not isinstance(g, torch.Tensor) or g.shape != p.grad.shape:
                worst = math.inf
                break
            worst = max(worst, max_diff(g, p.grad) / (float(p.grad.abs().max()) + 1e-8))
        report[layout] = (abs(float(loss) - float(ref_loss)), worst, float(ref_loss))
    layout = min(report, key=lambda k: report[k][0] + report[k][1])
    loss_gap, grad_gap, ref_loss = report[layout]
    if loss_gap > 1e-4 or grad_gap > 1e-3:
        no_grad = [n for n in wanted if not isinstance(grads.get(n), torch.Tensor)]
        if no_grad:
            raise fail(msg("every_grad"), msg("no_grad", names=no_grad[:3]))
        raise fail(
            msg("ref_loss", loss=f"{ref_loss:.4f}"),
            msg("loss_off", loss=f"{float(loss):.4f}", gap=f"{grad_gap:.2g}"),
        )
    return msg("trains_ok", loss=f"{float(loss):.3f}")
