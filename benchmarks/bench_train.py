"""Training throughput of the course GPT: our step against a plain reference loop and the machine's own
matmul rate, side by side in one run.

The reference ("plain") is the same model written the obvious way: attention as an explicit
softmax(QKᵀ/√d + mask)·V with a stored lower-triangular mask, the full table of logits and
F.cross_entropy, float32, AdamW with its defaults. Ours is tutor.model.train.train_step: where the CPU has
bf16 (AVX512-BF16 or AMX), bf16 autocast with the output layer and loss computed a slice at a time
(tutor/model/step.py), the model's explicit attention, and fused AdamW. The loops between them show what each
part gives: "autocast" is the step as it was before tutor/model/step.py (the whole model's forward under bf16
autocast, fused attention kernel, full logits), "ours-sdpa" ours with PyTorch's fused attention kernel,
"ours-fp32" ours without bf16. All train the same config from the same weights on the same batches;
rounds alternate between them so machine noise hits all alike. Prints per loop the median ms per step,
tokens/s, MFU (model FLOP/s over a 1024² matmul's rate in the loop's precision, the best of repeated
timings) and the ratio to the plain loop; then the same from the process's CPU time a step (per thread),
which on a machine others share leaves out their turns on the cores, and the load average.

    python benchmarks/bench_train.py [--batch 32] [--context 128] [--steps 10] [--rounds 5] [--threads 2]
    python benchmarks/bench_train.py --compile     # adds torch.compile of ours, and its compile time
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from tutor.model.gpt import GPT, GPTConfig  # noqa: E402
from tutor.model.step import features, head_loss  # noqa: E402
from tutor.model.train import TrainConfig, make_optimizer, optimizer_step, train_step, use_bf16  # noqa: E402


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


def matmul_flops(dtype=torch.float32, n: int = 1024, reps: int = 30) -> tuple[float, float]:
    """The machine's matmul rate in `dtype`, by the wall clock and by this process's CPU time per thread: the
    best of `reps` timings each (the least disturbed by other work)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    for _ in range(3):
        a @ b
    wall = cpu = float("inf")
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        a @ b
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, (time.process_time() - c) / torch.get_num_threads())
    return 2 * n**3 / wall, 2 * n**3 / cpu


def step_flops(model: GPT, batch: int, context: int) -> float:
    """PaLM-style estimate: 6·N per token (forward + backward) plus 12·L·C·T for attention scores."""
    cfg = model.cfg
    n = model.num_params() - (model.pos_emb.weight.numel() if cfg.pos == "learned" else 0)
    per_token = 6 * n + 12 * cfg.n_layer * cfg.n_embd * context
    return per_token * batch * context


def _step(model, opt, cfg: TrainConfig, loss_of) -> None:
    loss = loss_of()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    optimizer_step(model, opt, cfg, cfg.lr)


def loops(cfg: GPTConfig, compile_ours: bool) -> dict[str, tuple]:
    """name -> (a step on (x, y), uses bf16): each loop with its own copy of the same initial weights."""
    torch.manual_seed(0)
    ours = GPT(cfg)
    tcfg = TrainConfig()
    bf16 = use_bf16("auto", "cpu")

    def copy() -> tuple[GPT, torch.optim.Optimizer]:
        model = GPT(cfg)
        model.load_state_dict(ours.state_dict())
        return model, make_optimizer(model, tcfg)

    out: dict[str, tuple] = {}
    m, o = copy()
    out["ours"] = (lambda x, y, m=m, o=o: train_step(m, o, x, y, tcfg, tcfg.lr, "cpu", bf16), bf16)
    if bf16:
        m, o = copy()

        def sdpa(x, y, m=m, o=o):
            def loss():
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    h = features(m, x)
                return head_loss(
                    h.reshape(-1, h.size(-1)).float(), m.head.weight, y.reshape(-1), torch.bfloat16
                )

            _step(m, o, tcfg, loss)

        out["ours-sdpa"] = (sdpa, True)
        m, o = copy()

        def autocast(x, y, m=m, o=o):
            def loss():
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return m(x, y)[1]

            _step(m, o, tcfg, loss)

        out["autocast"] = (autocast, True)
    m, o = copy()
    out["ours-fp32"] = (lambda x, y, m=m, o=o: train_step(m, o, x, y, tcfg, tcfg.lr, "cpu", False), False)
    if compile_ours:
        m, o = copy()
        compiled_features = torch.compile(features)

        def compiled(x, y, m=m, o=o):
            def loss():
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    h = compiled_features(m, x, bf16)
                dtype = torch.bfloat16 if bf16 else torch.float32
                return head_loss(h.reshape(-1, h.size(-1)).float(), m.head.weight, y.reshape(-1), dtype)

            _step(m, o, tcfg, loss)

        out["compiled"] = (compiled, bf16)
    plain = plain_model(cfg)
    plain.load_state_dict(ours.state_dict(), strict=False)
    opt_plain = torch.optim.AdamW(plain.parameters(), lr=2e-3)
    out["plain"] = (lambda x, y: _step(plain, opt_plain, tcfg, lambda: plain(x, y)[1]), False)
    return out


def time_steps(step, batches, steps: int) -> tuple[float, float]:
    """The median wall and CPU seconds of a step (CPU: this process's, all its threads)."""
    wall, cpu = [], []
    for i in range(steps):
        x, y = batches[i % len(batches)]
        t, c = time.perf_counter(), time.process_time()
        step(x, y)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument(
        "--vocab", type=int, default=0, help="vocabulary size (default: the Tang corpus's, 6,010)"
    )
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="also time torch.compile of ours")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    vocab = args.vocab
    if not vocab:
        from tutor.model.corpus import tang_texts
        from tutor.model.tokenizer import CharTokenizer

        # what `python -m tutor train` builds: the vocabulary policy on the Tang training split (6,010 ids)
        vocab = CharTokenizer.for_training(tang_texts()[0]).vocab_size
    cfg = GPTConfig(vocab_size=vocab, block_size=args.context, n_head=args.heads)
    gen = torch.Generator().manual_seed(0)
    batches = [
        (
            torch.randint(vocab, (args.batch, args.context), generator=gen),
            torch.randint(vocab, (args.batch, args.context), generator=gen),
        )
        for _ in range(4)
    ]
    steps = loops(cfg, args.compile)
    warm: dict[str, float] = {}
    for name, (step, _) in steps.items():  # warm-up; for the compiled loop, its compile time
        t = time.perf_counter()
        time_steps(step, batches, 3)
        warm[name] = time.perf_counter() - t
    times: dict[str, list[float]] = {name: [] for name in steps}
    cpu_times: dict[str, list[float]] = {name: [] for name in steps}
    load = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for name, (step, _) in steps.items():
            wall, cpu = time_steps(step, batches, args.steps)
            times[name].append(wall)
            cpu_times[name].append(cpu)
    load.append(os.getloadavg()[0])
    tokens = args.batch * args.context
    med = {name: statistics.median(t) for name, t in times.items()}
    cpu_med = {name: statistics.median(t) / args.threads for name, t in cpu_times.items()}
    precisions = {b for _, b in steps.values()}
    rates = {b: [matmul_flops(torch.bfloat16 if b else torch.float32) for _ in range(3)] for b in precisions}
    peak = {b: max(wall for wall, _ in r) for b, r in rates.items()}
    cpu_peak = {b: max(cpu for _, cpu in r) for b, r in rates.items()}
    flops = step_flops(GPT(cfg), args.batch, args.context)
    bf16 = use_bf16("auto", "cpu")
    print(
        f"config: n_embd {cfg.n_embd}, n_head {cfg.n_head}, n_layer {cfg.n_layer}, vocab {vocab}, "
        f"batch {args.batch}, context {args.context}, threads {args.threads}; bf16 on this CPU: {bf16}"
    )
    print(f"load average {load[0]:.1f} before the timed rounds, {load[1]:.1f} after")
    print(
        f"{'loop':<11}{'ms/step':>9}{'tokens/s':>10}{'MFU':>7}{'vs plain':>9}"
        f"{'CPU ms':>8}{'MFU CPU':>8}{'vs plain':>9}{'precision':>10}"
    )
    for name, sec in med.items():
        b, cpu = steps[name][1], cpu_med[name]
        print(
            f"{name:<11}{sec * 1e3:>9.1f}{tokens / sec:>10,.0f}{flops / sec / peak[b]:>7.1%}{med['plain'] / sec:>8.2f}x"
            f"{cpu * 1e3:>8.1f}{flops / cpu / cpu_peak[b]:>8.1%}{cpu_med['plain'] / cpu:>8.2f}x"
            f"{'bf16' if b else 'fp32':>10}"
        )
    said = ", ".join(
        f"{'bf16' if b else 'fp32'} {peak[b] / 1e9:.1f} ({cpu_peak[b] / 1e9:.1f} by CPU time)"
        for b in sorted(peak)
    )
    print(f"MFU: model FLOP/s over a 1024² matmul's rate in the loop's precision, {said} GFLOP/s;")
    print(
        "CPU ms: the process's CPU seconds a step over its threads, MFU CPU against the matmul's rate by CPU"
    )
    print(
        "time (what the step costs while it has the cores: on a busy machine the wall time also counts other"
    )
    print("programs' turns; threads that spin waiting for each other count as busy)")
    print(f"{flops / 1e9:.2f} GFLOP per step (6·N per token + attention scores)")
    if "autocast" in med:
        print(f"ours vs the step before tutor/model/step.py (autocast): {med['autocast'] / med['ours']:.2f}x")
    if "compiled" in med:
        print(
            f"compiled: {warm['compiled']:.1f} s to compile and warm up, then {med['ours'] / med['compiled']:.2f}x ours"
        )
    print(f"1000 steps of ours at this shape: {med['ours'] * 1000 / 60:.1f} min")


if __name__ == "__main__":
    main()
