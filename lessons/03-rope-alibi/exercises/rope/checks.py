"""Checks for rope: apply_rope's geometry, agreement with the reference (either pairing), the
attention module (causal, same output as a reference built from its own weights), the model
(no pos_emb) and a short training run on the shipped corpus."""

import math
from dataclasses import replace

import torch
import torch.nn.functional as F

from models.gpt import GPTConfig
from models.positions import apply_rope as half_rope
from models.positions import rope_cos_sin, rope_inv_freq
from tutor.grading.kit import CheckFailed, expect_tensor, fail, max_diff, need, shape


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _rope(sub, x, pos, base=10000.0):
    return expect_tensor(need(sub, "apply_rope")(x, pos, base), "apply_rope")


def _reference(x: torch.Tensor, pos: torch.Tensor, base: float, layout: str) -> torch.Tensor:
    """RoPE in float64 with half-split pairs (xᵢ, xᵢ₊d/₂) or interleaved pairs (x₂ᵢ, x₂ᵢ₊₁)."""
    d = x.size(-1)
    inv_freq, _ = rope_inv_freq(d, base)
    x64 = x.to(torch.float64)
    if layout == "half":
        cos, sin = rope_cos_sin(pos, inv_freq, dtype=torch.float64)
        return half_rope(x64, cos, sin)
    angles = pos.to(torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos(), angles.sin()
    even, odd = x64[..., 0::2], x64[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def _which_layout(
    got: torch.Tensor, x: torch.Tensor, pos: torch.Tensor, base: float
) -> tuple[str | None, float]:
    errors = {lay: max_diff(got, _reference(x, pos, base, lay)) for lay in ("half", "interleaved")}
    best = min(errors, key=errors.get)
    return (best if errors[best] < 1e-4 else None), errors[best]


def check_shape_kept(sub) -> str:
    for size in ((2, 3, 7, 16), (5, 8)):
        x = torch.randn(*size, generator=_gen())
        got = _rope(sub, x, torch.arange(size[-2]))
        if got.shape != x.shape:
            raise fail(f"the input's shape {tuple(x.shape)}", shape(got), "apply_rope(x, pos)")
    return "apply_rope keeps (2, 3, 7, 16) and (5, 8)"


def check_norms_kept(sub) -> str:
    x = torch.randn(2, 3, 9, 16, generator=_gen(1))
    got = _rope(sub, x, torch.arange(9))
    rel = float(((got.norm(dim=-1) - x.norm(dim=-1)).abs() / x.norm(dim=-1)).max())
    if rel > 1e-4:
        raise fail("every vector's length unchanged (a rotation)", f"a relative change of up to {rel:.3g}")
    return f"lengths kept (largest relative change {rel:.1e})"


def check_relative_only(sub) -> str:
    T, d = 48, 32
    q = torch.randn(d, generator=_gen(2)).expand(T, d).contiguous()
    k = torch.randn(d, generator=_gen(3)).expand(T, d).contiguous()
    pos = torch.arange(T)
    rq, rk = _rope(sub, q, pos).double(), _rope(sub, k, pos).double()
    scores = rq @ rk.T  # scores[m, n] = <R_m q, R_n k>
    worst, at = 0.0, 0
    for offset in range(-(T - 1), T):
        diag = torch.diagonal(scores, offset)
        spread = float(diag.max() - diag.min())
        if spread > worst:
            worst, at = spread, offset
    if worst > 1e-3:
        raise fail(
            "the same score for every pair of positions at the same distance",
            f"scores at distance {at} spread by {worst:.3g}",
            "q·k after rotation",
        )
    return f"q·k depends only on n − m (largest spread {worst:.1e})"


def check_matches_reference(sub) -> str:
    x = torch.randn(2, 4, 6, 16, generator=_gen(4))
    seen = []
    for pos, base in ((torch.arange(6), 10000.0), (torch.arange(10, 16), 500.0)):
        got = _rope(sub, x, pos, base)
        layout, err = _which_layout(got, x, pos, base)
        if layout is None:
            raise fail(
                "RoPE with θᵢ = base^(−2i/d) (half-split or interleaved pairs)",
                f"a result {err:.3g} away from both at positions {pos[0]}…{pos[-1]}, base {base:g}",
            )
        seen.append(layout)
    return f"agrees with the reference ({seen[0]} pairing)"


def _attention(sub, cfg: GPTConfig):
    cls = need(sub, "RoPECausalSelfAttention")
    torch.manual_seed(0)
    module = cls(cfg).eval()
    for name in ("qkv", "proj"):
        if not isinstance(getattr(module, name, None), torch.nn.Linear):
            raise CheckFailed(
                f"RoPECausalSelfAttention needs `self.{name} = nn.Linear(...)` as in models/gpt.py"
            )
    return module


CFG = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=4, n_embd=32, pos="none")


def check_causal(sub) -> str:
    module = _attention(sub, CFG)
    x = torch.randn(1, 10, 32, generator=_gen(5))
    with torch.no_grad():
        y = expect_tensor(module(x), "RoPECausalSelfAttention.forward")
        if y.shape != x.shape:
            raise fail(f"output shape {tuple(x.shape)}", shape(y), "attention(x)")
        x2 = x.clone()
        x2[0, 6] += 1.0
        y2 = module(x2)
    leak = float((y2[0, :6] - y[0, :6]).abs().max())
    if leak > 1e-6:
        raise fail(
            "outputs at positions 0…5 unchanged when the character at 6 changes",
            f"they moved by {leak:.3g}: a position sees the future (causal mask missing?)",
        )
    return "changing position 6 leaves positions 0…5 untouched"


def check_attention_output(sub) -> str:
    module = _attention(sub, CFG)
    x = torch.randn(2, 9, 32, generator=_gen(6))
    with torch.no_grad():
        got = module(x)
        B, T, C = x.shape
        q, k, v = module.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, 4, 8).transpose(1, 2) for t in (q, k, v))
        errors = {}
        for layout in ("half", "interleaved"):
            pos = torch.arange(T)
            rq, rk = (_reference(t, pos, CFG.rope_base, layout).float() for t in (q, k))
            y = F.scaled_dot_product_attention(rq, rk, v, is_causal=True)
            want = module.proj(y.transpose(1, 2).reshape(B, T, C))
            errors[layout] = max_diff(got, want)
    best = min(errors.values())
    if best > 1e-4:
        raise fail(
            "softmax(R q · R k / √d_k, causal) v through proj, with the module's own weights",
            f"an output {best:.3g} away (rotate q and k only, not v; scale by 1/√d_k)",
        )
    return "same output as a reference attention with the same weights"


def check_no_pos_emb(sub) -> str:
    model = need(sub, "build_model")(replace(CFG, pos="learned"))
    names = [n for n, _ in model.named_parameters() if "pos_emb" in n]
    if names or getattr(model, "pos_emb", None) is not None:
        raise fail("no pos_emb: RoPE replaces the position table", f"parameters {names or ['pos_emb']}")
    cls = need(sub, "RoPECausalSelfAttention")
    kinds = [type(b.attn).__name__ for b in model.blocks]
    if not all(isinstance(b.attn, cls) for b in model.blocks):
        raise fail("every block's attn to be a RoPECausalSelfAttention", ", ".join(kinds))
    with torch.no_grad():
        logits, _ = model(torch.randint(0, 64, (1, CFG.block_size + 8), generator=_gen(7)))
    if logits.shape != (1, CFG.block_size + 8, 64):
        raise fail(f"logits (1, {CFG.block_size + 8}, 64)", shape(logits))
    return "no pos_emb; every block uses your attention; runs past block_size"


def check_trains(sub) -> str:
    from models.corpus import corpus_text, load_poems, split_poems
    from models.tokenizer import CharTokenizer

    text = corpus_text(split_poems(load_poems())[0])
    tok = CharTokenizer.from_text(text)
    data = torch.tensor(tok.encode(text))
    cfg = GPTConfig(vocab_size=tok.vocab_size, block_size=32, n_layer=2, n_head=2, n_embd=64, pos="none")
    torch.manual_seed(0)
    model = need(sub, "build_model")(cfg)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    # Adam by hand: torch.optim's first step imports torch._dynamo, which costs seconds
    m1 = [torch.zeros_like(p) for p in params]
    m2 = [torch.zeros_like(p) for p in params]
    gen = _gen(8)
    losses = []
    for step in range(1, 31):
        starts = torch.randint(0, len(data) - 33, (8,), generator=gen)
        batch = torch.stack([data[s : s + 33] for s in starts])
        _, loss = model(batch[:, :-1], batch[:, 1:])
        if loss is None or not math.isfinite(loss.item()):
            raise fail("a finite loss", repr(loss))
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p, a, b in zip(params, m1, m2, strict=True):
                if p.grad is None:
                    continue
                a.mul_(0.9).add_(p.grad, alpha=0.1)
                b.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                p -= 3e-3 * (a / (1 - 0.9**step)) / ((b / (1 - 0.999**step)).sqrt() + 1e-8)
        losses.append(loss.item())
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    if last > first - 1.0:
        raise fail("the loss to fall by more than 1 in 30 steps", f"{first:.2f} → {last:.2f}")
    return f"30 steps on the poems: loss {first:.2f} → {last:.2f}"
