"""Training throughput of the course GPT: our step vs a plain reference loop, side by side.

The reference is the same model written the obvious way: attention as an explicit
softmax(QKᵀ/√d + mask)·V with a stored lower-triangular mask, and AdamW with its defaults.
Ours is models.gpt (fused scaled_dot_product_attention) with models.train's optimizer (fused
AdamW). Both train the same config on the same batches; rounds alternate between the two so
machine noise hits both alike. Prints tokens/s (medians), the ratio, and model-FLOPs
utilisation against the machine's measured fp32 matmul rate.

    python benchmarks/bench_train.py [--batch 32] [--context 128] [--steps 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from models.gpt import GPT, GPTConfig
from models.train import TrainConfig, make_optimizer, use_bf16


class PlainAttention(nn.Module):
    """The textbook version: explicit scores, mask, softmax, weighted sum."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(cfg.block_size, cfg.block_size)))

    def forward(self, x, start=0, need_weights=False):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (k.size(-1) ** 0.5)
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


def plain_model(cfg: GPTConfig) -> GPT:
    model = GPT(cfg)
    for block in model.blocks:
        block.attn = PlainAttention(cfg)
    return model


def matmul_flops(dtype=torch.float32, n: int = 1024, reps: int = 30) -> float:
    """The machine's matmul rate in `dtype`: the best of `reps` timings (the least disturbed by other work)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best


def step_flops(model: GPT, batch: int, context: int) -> float:
    """PaLM-style estimate: 6·N per token (forward + backward) plus 12·L·C·T for attention scores."""
    cfg = model.cfg
    n = model.num_params() - (model.pos_emb.weight.numel() if cfg.pos == "learned" else 0)
    per_token = 6 * n + 12 * cfg.n_layer * cfg.n_embd * context
    return per_token * batch * context


def time_steps(model, opt, batches, steps: int, bf16: bool = False) -> float:
    times = []
    for i in range(steps):
        x, y = batches[i % len(batches)]
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument(
        "--vocab", type=int, default=0, help="vocabulary size (default: the Tang corpus's, 6,010)"
    )
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    vocab = args.vocab
    if not vocab:
        from models.corpus import tang_texts
        from models.tokenizer import CharTokenizer

        # what `python -m tutor train` builds: the vocabulary policy on the Tang training split (6,010 ids)
        vocab = CharTokenizer.for_training(tang_texts()[0]).vocab_size
    cfg = GPTConfig(vocab_size=vocab)
    torch.manual_seed(0)
    ours = GPT(cfg)
    plain = plain_model(cfg)
    plain.load_state_dict(ours.state_dict(), strict=False)
    opt_ours = make_optimizer(ours, TrainConfig())
    opt_plain = torch.optim.AdamW(plain.parameters(), lr=2e-3)
    gen = torch.Generator().manual_seed(0)
    batches = [
        (
            torch.randint(vocab, (args.batch, args.context), generator=gen),
            torch.randint(vocab, (args.batch, args.context), generator=gen),
        )
        for _ in range(4)
    ]
    bf16 = use_bf16("auto", "cpu")
    loops = {  # name: (model, optimizer, bf16 autocast)
        "ours": (ours, opt_ours, bf16),
        "ours-fp32": (ours, opt_ours, False),
        "plain": (plain, opt_plain, False),
    }
    for m, o, b in loops.values():
        time_steps(m, o, batches, 3, b)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(args.rounds):
        for name, (m, o, b) in loops.items():
            times[name].append(time_steps(m, o, batches, args.steps, b))
    tokens = args.batch * args.context
    med = {name: statistics.median(t) for name, t in times.items()}
    peak = {
        b: max(matmul_flops(torch.bfloat16 if b else torch.float32) for _ in range(3)) for b in {False, bf16}
    }
    flops = step_flops(ours, args.batch, args.context)
    print(
        f"config: n_embd {cfg.n_embd}, n_head {cfg.n_head}, n_layer {cfg.n_layer}, vocab {vocab}, "
        f"batch {args.batch}, context {args.context}, threads {args.threads}; ours uses bf16 autocast: {bf16}"
    )
    print(f"{'loop':<11}{'ms/step':>10}{'tokens/s':>12}{'MFU':>8}{'vs plain':>10}")
    for name, sec in med.items():
        print(
            f"{name:<11}{sec * 1e3:>10.1f}{tokens / sec:>12,.0f}{flops / sec / peak[loops[name][2]]:>8.1%}"
            f"{med['plain'] / sec:>9.2f}x"
        )
    rates = ", ".join(f"{'bf16' if b else 'fp32'} {r / 1e9:.1f}" for b, r in sorted(peak.items()))
    print(f"MFU: model FLOP/s over a 1024² matmul's rate in the loop's precision ({rates} GFLOP/s);")
    print(f"{flops / 1e9:.2f} GFLOP per step (6·N per token + attention scores)")
    ms_ours = med["ours"]
    print(f"1000 steps of ours at this shape: {ms_ours * 1000 / 60:.1f} min")


if __name__ == "__main__":
    main()
