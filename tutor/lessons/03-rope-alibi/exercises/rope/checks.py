"""Checks for rope: apply_rope's geometry, agreement with the reference (either pairing), the
attention module (causal with RoPE's weights, same output as a reference with the weights the judge
gives it), the model (no pos_emb, the learner's attention in every block, the reference's logits with
one layer) and its loss and gradients, which must match a reference model's on random weights and inputs.

Inputs, positions and weights are drawn per run. Returning x unchanged keeps the shape, the lengths and
the relative scores too, and so do zeros, noise, one turn for every position or x plus a table of its
positions in part: those checks count only once apply_rope turns x by its positions (`_turned`).
`start` is graded through apply_rope(x, pos) with pos = start … start + T − 1: within one call, RoPE
attention gives the same output at any start (scores depend on n − m only), so the module's output
cannot show whether forward honours it. apply_rope meets positions up to MAX_POS, the attention and the
model up to 2 · block_size − 1 (a Llama-style cache of 2 · block_size positions is enough); the task says so.
"""

import random
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from tutor.grading.kit import LearnerError, expect, expect_above, expect_close, expect_number, msg
from tutor.model import GPT, GPTConfig
from tutor.model.positions import apply_rope as half_rope
from tutor.model.positions import rope_cos_sin, rope_inv_freq

LAYOUTS = ("half", "interleaved")
ORDER = 1e-3  # a one-layer RoPE model tells two orders apart by ~0.1–3 on random weights; without, ~1e-6
CFG = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=4, n_embd=32, pos="none")
C, HEAD = CFG.n_embd, CFG.n_embd // CFG.n_head
MAX_POS = 255  # the largest position apply_rope meets
MODULE_POS = 2 * CFG.block_size  # the attention and the model meet positions 0 … MODULE_POS − 1
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
    """apply_rope(x, 0 … T − 1), failing unless it turns x by its positions: x itself at position 0 (a
    turn by 0), moved at a position after 0 drawn now, and linear in x (one call on x, y and x + 2y).
    Returning x, zeros, noise, one turn for every position or x plus a table of its positions fails."""
    pos = torch.arange(x.size(-2))
    got = _rope(learner, x, pos)
    expect_close(got[..., 0, :], x[..., 0, :].double(), msg("at_zero"), rtol=1e-5, atol=1e-6)
    p = random.randint(1, x.size(-2) - 1)
    before = x[..., p, :].double()
    moved = float((got[..., p, :] - before).abs().max())
    # NaN counts as moved here: the comparisons after it fail on it
    assert not moved <= 1e-5 * float(before.abs().max()), msg("unrotated", p=p)
    y = torch.randn_like(x)
    three = _rope(learner, torch.stack([x, y, x + 2 * y]), pos)
    expect_close(three[2], three[0] + 2 * three[1], msg("linear"), rtol=0.0, atol=1e-4)
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
    start, base = random.randint(1, MAX_POS - 5), float(random.randint(100, 19999))
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


def _raised(err: LearnerError, call: str, first: int, last: int) -> LearnerError:
    """The learner's error in a run of the attention or the model, naming the call and its positions (a
    cos/sin cache too short for them fails inside torch, in words that name neither)."""
    text = msg("raised_at", call=call, first=first, last=last, most=MODULE_POS - 1, error=err.text)
    raised = LearnerError(err.type_name, text)
    raised.message = getattr(err, "message", err.text)
    return raised


def _output(module, x: torch.Tensor, start: int = 0) -> torch.Tensor:
    where = f"attn(Tensor{list(x.shape)}, start={start})"
    try:
        got = torch.as_tensor(module.run(x, start=start), dtype=torch.float64)
    except LearnerError as err:
        raise _raised(err, where, start, start + x.size(1) - 1) from None
    expect(got.shape, x.shape, where)
    return got


def _reading_state() -> dict[str, torch.Tensor]:
    """Weights under which the attention's output is its weights: q and k come from the biases alone
    (drawn now, the same at every position), v is x and proj the identity."""
    eye = torch.eye(C)
    q_and_k = torch.randn(2 * C) * 0.6  # scores within a few units: no weight far below 0.05 (unscaled, 1e-3)
    return {
        "qkv.weight": torch.cat([torch.zeros(2 * C, C), eye]),
        "qkv.bias": torch.cat([q_and_k, torch.zeros(C)]),
        "proj.weight": eye.clone(),
        "proj.bias": torch.zeros(C),
    }


def _weights(module, T: int, start: int) -> torch.Tensor:
    """(n_head, T, T): the weight each query gives each key, read off the output of the reading state
    for one-hot characters (in every head's channels, character n is the n-th unit vector)."""
    x = torch.zeros(1, T, C)
    for h in range(CFG.n_head):
        x[0, torch.arange(T), h * HEAD + torch.arange(T)] = 1.0
    y = _output(module, x, start)[0]
    return torch.stack([y[:, h * HEAD : h * HEAD + T] for h in range(CFG.n_head)])


def check_causal(learner):
    module, _ = _attention(learner)
    module.load(_reading_state())
    T = random.randint(5, HEAD)
    start = random.randint(0, MODULE_POS - T)
    weights, call = _weights(module, T, start), f"attn(Tensor[1, {T}, {C}], start={start})"
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    zeros = torch.zeros_like(weights)
    expect_close(weights.where(future, 0.0), zeros, msg("future_keys", call=call), rtol=0.0, atol=1e-6)
    # returning x, zeros or noise sees no future either: each query must weigh all of its past, by distance
    expect_close(weights.sum(-1), zeros[..., 0] + 1.0, msg("weights_sum", call=call), rtol=0.0, atol=1e-4)
    expect_above(float(weights.where(~future, 1.0).min()), 1e-7, msg("every_key", call=call))
    spread = weights.amax(-1) - weights.where(~future, 2.0).amin(-1)  # per query, over its keys 0 … t
    assert float(spread.max()) > 1e-3, msg("uniform", call=call)
    logs = weights.where(~future, 1.0).log()
    shift = logs - logs.diagonal(dim1=-2, dim2=-1)[..., None]  # query t's log-weights, its own key at 0
    past = ~future[1:, 1:]
    later, now = shift[:, 1:, 1:].where(past, 0.0), shift[:, :-1, :-1].where(past, 0.0)
    expect_close(later, now, msg("relative_weights", call=call), rtol=0.0, atol=1e-3)


def check_attention_output(learner):
    module, state = _attention(learner)
    x = torch.randn(2, random.randint(5, 11), C)
    for start in (0, random.randint(3, MODULE_POS - x.size(1))):
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
    where = f"model(Tensor{list(idx.shape)})"
    try:
        logits = model.run(idx)
    except LearnerError as err:
        raise _raised(err, where, 0, idx.size(1) - 1) from None
    logits = torch.as_tensor(logits[0] if isinstance(logits, list) else logits, dtype=torch.float64)
    expect(logits.shape, (1, idx.size(1), CFG.vocab_size), f"{where}[0].shape")
    return logits[0, -1]


def check_no_pos_emb(learner):
    model = learner.build_model(replace(CFG, pos="learned"))
    expect([n for n in model.params if "pos_emb" in n], [], msg("pos_emb_params"))
    attns = [
        cls if own else f"tutor.model.gpt.{cls}"
        for n, cls, own in model.modules
        if n.startswith("blocks.") and n.endswith(".attn")
    ]
    expect(attns, ["RoPECausalSelfAttention"] * CFG.n_layer, msg("block_attention"))
    _last_logits(model, torch.randint(0, CFG.vocab_size, (1, CFG.block_size + random.randint(2, 9))))
    # a one-layer model without pos_emb sees the order only through the rotation: five characters and
    # the same five with the first four reversed give different last logits (without RoPE, ~1e-6)
    cfg = replace(CFG, n_layer=1)
    model = learner.build_model(replace(cfg, pos="learned"))
    references = {layout: _reference_model(cfg, layout).eval() for layout in LAYOUTS}
    for _ in range(10):  # weights on which the reference clearly sees the order (almost always the first)
        state = _random_state({n: tuple(p.shape) for n, p in references["half"].named_parameters()})
        for reference in references.values():
            reference.load_state_dict(state, strict=False)
        ids = torch.randperm(cfg.vocab_size)[:5]
        a, b = ids[None], torch.cat([ids[:4].flip(0), ids[4:]])[None]
        with torch.no_grad():
            want = {lay: [ref(t)[0][0, -1] for t in (a, b)] for lay, ref in references.items()}
        if float((want["half"][0] - want["half"][1]).abs().max()) > 100 * ORDER:
            break
    model.load(state)
    got = [_last_logits(model, t) for t in (a, b)]
    gap = float((got[0] - got[1]).abs().max())
    expect_above(gap, ORDER, msg("sees_order", a=a[0].tolist(), b=b[0].tolist()))
    # noise or positions added to x see the order as well: the logits must be the reference's
    layout = _closest(got[0], {lay: w[0] for lay, w in want.items()})
    for t, mine, theirs in zip((a, b), got, want[layout], strict=True):
        expect_close(mine, theirs, f"model(Tensor{list(t.shape)})[0][0, -1]", rtol=0.0, atol=1e-4)


def _trained(cfg: GPTConfig, layout: str, state: dict, idx, targets) -> tuple[float, dict]:
    """A reference model's loss and gradients for `state`'s weights on one batch."""
    ref = _reference_model(cfg, layout)
    ref.load_state_dict(state, strict=False)
    _, loss = ref(idx, targets)
    loss.backward()
    return float(loss), {n: p.grad for n, p in ref.named_parameters()}


def _gap(got: dict, want: dict) -> float:
    """The worst gradient's distance from `want`'s, relative to its size (inf for one missing)."""
    gaps = [
        float((got[n].double() - g).abs().max()) / (float(g.abs().max()) + 1e-8)
        if isinstance(got.get(n), torch.Tensor) and got[n].shape == g.shape
        else float("inf")
        for n, g in want.items()
    ]
    return max(gaps)


def check_trains(learner):
    model = learner.build_model(CFG)
    state = _random_state({n: tuple(p.shape) for n, p in _reference_model(CFG, "half").named_parameters()})
    model.load(state)
    idx, targets = (torch.randint(0, CFG.vocab_size, (4, CFG.block_size)) for _ in range(2))
    try:
        got = model.grads(idx, targets)
    except LearnerError as err:
        raise _raised(err, f"model(Tensor{list(idx.shape)}, targets)", 0, idx.size(1) - 1) from None
    loss = expect_number(got["loss"], "model(idx, targets)[1]")
    refs = [_trained(CFG, layout, state, idx, targets) for layout in LAYOUTS]
    want_loss, want_grads = min(refs, key=lambda ref: abs(loss - ref[0]) + _gap(got["grads"], ref[1]))
    expect_close(loss, want_loss, "model(idx, targets)[1]", rtol=0.0, atol=1e-4)
    for name, grad in want_grads.items():
        atol = 1e-3 * float(grad.abs().max()) + 1e-8
        expect_close(got["grads"].get(name), grad, f"`{name}.grad`", rtol=0.0, atol=atol)
