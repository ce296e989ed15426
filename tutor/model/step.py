"""The training step's fast path: the course GPT's loss computed without its full table of logits.

A step of the course model at batch 32 × context 128 spends as much time in the output layer as in the four
blocks: the logits are 4,096 × 6,010 numbers (98 MB in float32) that the loss reads once, its backward pass
writes once more and the two matmuls of the tied output layer read again. `head_loss` computes the same
cross-entropy a slice of rows at a time (CHUNK): each slice's logits, their log-sum-exp, the loss, and at once
the gradient (softmax − one-hot) and what it gives the hidden states and the tied matrix, while the slice is
still in the cache. Nothing of size tokens × vocabulary outlives the slice, and backward only scales the two
gradients it kept.

`step_loss` is what tutor.model.train's step calls: the model's own blocks (tutor/model/gpt.py, unchanged: the lesson's
model) up to the last LayerNorm, then `head_loss` on the tied matrix. Any other module (a learner's, or the
course GPT with another attention) gets its own forward pass. In bf16 the output layer's matmuls run in
bfloat16 as autocast would run them, its softmax and loss in float32, and the blocks' attention is the
model's explicit form (`features`): measured in benchmarks/bench_train.py.
"""

from __future__ import annotations

from typing import TypeGuard

import torch
from torch import nn

from tutor.model.gpt import GPT, Block, CausalSelfAttention

CHUNK = (
    256  # rows of logits a thread works on at a time: 256 × 6,010 float32 is 6 MB (benchmarks/bench_train.py)
)


def features(model: GPT, idx: torch.Tensor, explicit: bool = False) -> torch.Tensor:
    """What GPT.forward computes before its output layer (B, T, C): token (+ position) vectors through
    the blocks and the last LayerNorm, with the model's own modules in the same order. With `explicit`, the
    blocks' attention is the explicit softmax(QKᵀ/√d)·V instead of PyTorch's fused kernel (in bfloat16 on a
    CPU the fused kernel is the slower one): `attention` where the model adds nothing to the scores but the
    causal mask, else the model's own explicit form (its need_weights path, whose weights are dropped)."""
    x = model.tok_emb(idx)
    if model.cfg.pos == "learned":
        x = x + model.pos_emb(torch.arange(idx.size(1), device=idx.device))
    x = model.drop(x)
    mine = explicit and model.cfg.pos in ("learned", "none")
    mask = causal_mask(idx.size(1), idx.device) if mine else None
    for block in model.blocks:
        attn = block.attn
        if mask is not None and type(attn) is CausalSelfAttention and isinstance(block, Block):
            x = x + attention(attn, block.ln1(x), mask)
            x = x + block.mlp(block.ln2(x))
        else:
            x = block(x, 0, need_weights=True)[0] if explicit else block(x)
    return model.ln_f(x)


def causal_mask(T: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """(T, T): 0 where a query may look (itself and to its left), -inf above the diagonal."""
    return torch.full((T, T), float("-inf"), device=device).triu(1)


def attention(attn: CausalSelfAttention, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """CausalSelfAttention.forward's explicit path for a block without RoPE or ALiBi, with its own modules:
    the scores' scale and mask go into their matmul (one baddbmm: alpha·QKᵀ + mask) instead of two more
    passes over the (B·heads, T, T) scores, and the mask is made once a step (`causal_mask`)."""
    B, T, C = x.size()
    H = attn.n_head
    d = C // H
    q, k, v = attn.qkv(x).split(C, dim=2)
    q, k, v = (t.view(B, T, H, d).transpose(1, 2).reshape(B * H, T, d) for t in (q, k, v))
    att = torch.baddbmm(mask, q, k.transpose(1, 2), alpha=d**-0.5).softmax(dim=-1)
    y = torch.bmm(attn.attn_drop(att), v).view(B, H, T, d).transpose(1, 2).reshape(B, T, C)
    return attn.resid_drop(attn.proj(y))


class _HeadLoss(torch.autograd.Function):
    """Mean cross-entropy of softmax(h Wᵀ) against `targets`, gradients made slice by slice in forward."""

    @staticmethod
    def forward(
        ctx, h: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, dtype: torch.dtype, chunk: int
    ):
        n = h.size(0)
        hs, ws = h.detach().to(dtype), weight.detach().to(dtype)
        grad_h = torch.empty(h.shape, dtype=dtype, device=h.device)
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=h.device)
        total = torch.zeros((), dtype=torch.float64, device=h.device)
        for lo in range(0, n, chunk):
            rows, t = hs[lo : lo + chunk], targets[lo : lo + chunk]
            logits = rows @ ws.T
            # one pass makes the slice's probabilities in float32 (PyTorch's softmax kernel: its max, exp and
            # sum in one loop over the row); the loss is -log p of each target, the gradient p − one-hot
            probs = torch.softmax(logits, dim=1, dtype=torch.float32)
            picked = probs.gather(1, t[:, None])[:, 0]
            if bool((picked == 0).any()):  # a target so unlikely that p underflows: log Σ exp − logit exactly
                exact = logits.float()
                picked = exact.gather(1, t[:, None])[:, 0] - exact.logsumexp(dim=1)
                total -= picked.sum(dtype=torch.float64)
            else:
                total -= picked.log().sum(dtype=torch.float64)
            grad = probs.to(dtype)  # the same tensor in float32
            grad[torch.arange(len(t), device=h.device), t] -= 1.0
            torch.mm(grad, ws, out=grad_h[lo : lo + chunk])
            grad_w.add_(grad.T @ rows)
        # d(mean loss)/d(logits) = (softmax − one-hot) / n: the 1/n on the two small products, not the slices
        ctx.save_for_backward(grad_h, grad_w)
        ctx.h_dtype, ctx.n = h.dtype, n
        return (total / n).to(torch.float32)

    @staticmethod
    def backward(ctx, grad_loss: torch.Tensor):
        grad_h, grad_w = ctx.saved_tensors
        scale = grad_loss / ctx.n
        return grad_h.to(ctx.h_dtype) * scale, grad_w * scale, None, None, None


def head_loss(
    h: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    dtype: torch.dtype = torch.float32,
    chunk: int | None = None,
) -> torch.Tensor:
    """F.cross_entropy(h @ weight.T, targets) for h (N, C), weight (V, C), targets (N,), with the matmuls in
    `dtype`, computed `chunk` rows at a time (default CHUNK per torch thread)."""
    return _HeadLoss.apply(h, weight, targets, dtype, chunk or CHUNK * torch.get_num_threads())


def fused(model: nn.Module) -> TypeGuard[GPT]:
    """Whether `model` is the course GPT itself, with its own attention, whose loss `step_loss` may compute
    without its forward pass."""
    return (
        type(model) is GPT
        and model.head.bias is None
        and all(type(block.attn) is CausalSelfAttention for block in model.blocks)
    )


def step_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, bf16: bool = False) -> torch.Tensor:
    """The training loss of `model` on (x, y), to call inside the step's autocast region."""
    if not fused(model):
        return model(x, y)[1]
    h = features(model, x, explicit=bf16 and x.device.type == "cpu")
    with torch.autocast(device_type=x.device.type, enabled=False):
        dtype = torch.bfloat16 if bf16 else torch.float32
        return head_loss(h.reshape(-1, h.size(-1)).float(), model.head.weight, y.reshape(-1), dtype)


@torch.no_grad()
def eval_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, bf16: bool = False) -> torch.Tensor:
    """The validation loss of `model` on (x, y). With `bf16`, the course GPT's is computed as its step computes
    it: the blocks under bf16 autocast (`features`), the output layer's matmul in bfloat16, the log-sum-exp
    and the loss in float32, a slice at a time; at batch 10 × context 64 on one thread 23 ms against 37 ms for
    the float32 forward pass (the losses differ in the fourth or fifth decimal). Otherwise GPT.forward's."""
    if not (bf16 and fused(model)):
        return model(x, y)[1]
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        h = features(model, x, explicit=x.device.type == "cpu")
    hs = h.reshape(-1, h.size(-1)).to(torch.bfloat16)
    ws, targets = model.head.weight.to(torch.bfloat16), y.reshape(-1)
    n, chunk = hs.size(0), CHUNK * torch.get_num_threads()
    total = torch.zeros((), dtype=torch.float64, device=x.device)
    for lo in range(0, n, chunk):
        logits = (hs[lo : lo + chunk] @ ws.T).float()
        picked = logits.gather(1, targets[lo : lo + chunk, None])[:, 0]
        total += (logits.logsumexp(dim=1) - picked).sum(dtype=torch.float64)
    return (total / n).to(torch.float32)
