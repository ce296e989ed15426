"""Experiments on the structure of attention itself: heads, parameter counts, shuffling, the
permutation test. Each is `(params, ctx) -> Result`; torch is imported inside the functions."""

from __future__ import annotations

import threading

from tutor.experiments import cache
from tutor.experiments.base import RunContext, fmt
from tutor.experiments.errors import ExperimentError
from tutor.experiments.params import HeadsParams, ParamCountParams, PermutationParams, ShuffleParams
from tutor.experiments.result import HeatmapPanel, Result, TablePanel, TextPanel

_maps_lock = threading.Lock()


def _encode(tokenizer, text: str, field: str) -> list[int]:
    from models.tokenizer import UnknownCharacterError

    try:
        return tokenizer.encode(text)
    except UnknownCharacterError as err:
        # the tokenizer's own message suggests unknown='unk', an API option a learner here cannot pass
        shown = ", ".join(f"{ch!r} at {i}" for i, ch in err.unknown[:8])
        shown += f" and {len(err.unknown) - 8} more" if len(err.unknown) > 8 else ""
        raise ExperimentError(
            f"{field}: the shipped model has never seen {shown}; use characters from its poems"
        ) from None


def _shape(t) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def run_heads(p: HeadsParams, ctx: RunContext) -> Result:
    import torch
    from torch import nn

    ck = cache.checkpoint()
    ids = _encode(ck.tokenizer, p.text, "text")
    T, C, h = len(ids), p.n_embd, p.n_head
    if T > ck.model.cfg.block_size:
        raise ExperimentError(
            f"text: {T} characters do not fit the model's {ck.model.cfg.block_size} positions"
        )
    n_layer = ck.model.cfg.n_layer
    if p.layer is not None and p.layer > n_layer:
        raise ExperimentError(f"layer: the shipped model has layers 1..{n_layer}, got {p.layer}")

    # the walk-through runs on a fresh layer of the chosen width, so every shape is the learner's choice
    gen = torch.Generator().manual_seed(p.seed)  # own generator: no other thread's RNG use can change it
    qkv, proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
    with torch.no_grad():
        for layer in (qkv, proj):
            layer.weight.normal_(0.0, 0.02, generator=gen)
            layer.bias.zero_()
    x = torch.randn(1, T, C, generator=gen)
    steps: list[list] = []
    with torch.no_grad():
        B = 1
        steps.append(["x", "input: one vector per character", _shape(x)])
        fused = qkv(x)
        steps.append(["qkv(x)", "q, k and v for every head in one matmul", _shape(fused)])
        q, k, v = fused.split(C, dim=2)
        steps.append(["q, k, v = ….split(C, dim=2)", "three tensors of width C", _shape(q)])
        q4 = q.view(B, T, h, C // h)
        steps.append([f"q.view(B, T, {h}, {C // h})", "cut each vector into h pieces", _shape(q4)])
        q, k, v = (t.view(B, T, h, C // h).transpose(1, 2) for t in (q, k, v))
        steps.append([".transpose(1, 2)", "heads in front: (B, h, T, d_k)", _shape(q)])
        scores = q @ k.transpose(-2, -1) / (C // h) ** 0.5
        steps.append(["q @ k.transpose(-2, -1) / √d_k", "one T×T score table per head", _shape(scores)])
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        att = scores.masked_fill(future, float("-inf")).softmax(-1)
        steps.append(["mask + softmax", "each row sums to 1", _shape(att)])
        y = att @ v
        steps.append(["att @ v", "weighted sum per head", _shape(y)])
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        steps.append(["y.transpose(1, 2).contiguous().view(B, T, C)", "heads side by side again", _shape(y)])
        out = proj(y)
        steps.append(["proj(y)", "mix what the heads found", _shape(out)])
    qkv_params = sum(t.numel() for t in qkv.parameters())
    proj_params = sum(t.numel() for t in proj.parameters())

    with _maps_lock:  # attention_maps parks weights on the shared model's modules while it runs
        maps = ck.model.attention_maps(torch.tensor(ids))  # (n_layer, n_head, T, T), trained model
    chars = list(p.text)
    layers = [p.layer - 1] if p.layer is not None else list(range(n_layer))
    panels: list = [
        TablePanel(
            title=f"Shapes: n_embd {C}, {h} heads, {T} characters",
            columns=["step", "what", "shape"],
            rows=steps,
        ),
        TablePanel(
            title="Parameters of one attention layer",
            columns=["module", "shape", "params"],
            rows=[
                ["qkv", f"Linear({C}, {3 * C})", qkv_params],
                ["proj", f"Linear({C}, {C})", proj_params],
                ["total", f"4·{C}² + 4·{C}", qkv_params + proj_params],
            ],
        ),
    ]
    looks: list[list] = []
    for li in layers:
        for hi in range(maps.shape[1]):
            w = maps[li, hi]
            # one tolist() per map: reading the tensor cell by cell cost ~4 ms per 64×64 map (16 maps: 65 ms)
            grid = w.tolist()
            values = [[v if j <= i else None for j, v in enumerate(row)] for i, row in enumerate(grid)]
            panels.append(
                HeatmapPanel(
                    title=f"layer {li + 1} · head {hi + 1}",
                    row_labels=chars,
                    col_labels=chars,
                    values=values,
                    vmin=0.0,
                    vmax=1.0,
                )
            )
            top = int(w[-1].argmax())
            looks.append([li + 1, hi + 1, chars[top], top + 1, fmt(float(w[-1, top]), 3)])
    panels.append(
        TablePanel(
            title=f"Where the last character {chars[-1]!s} looks (trained model, {maps.shape[1]} heads)",
            columns=["layer", "head", "strongest key", "position", "weight"],
            rows=looks,
        )
    )
    return Result(
        experiment="heads",
        params=p.model_dump(mode="json"),
        metrics={
            "qkv_params": qkv_params,
            "proj_params": proj_params,
            "head_dim": C // h,
            "scores_per_head": T * T,
        },
        panels=panels,
    )


def run_params(p: ParamCountParams, ctx: RunContext) -> Result:
    import torch
    from torch import nn

    from models.gpt import CausalSelfAttention, GPTConfig

    d = p.d_model

    def count(module: nn.Module) -> int:
        return sum(t.numel() for t in module.parameters())

    # meta tensors have shapes but no storage: counting a 1M-parameter layer costs nothing
    with torch.device("meta"):
        single = count(nn.Linear(d, d))
        four = sum(count(nn.Linear(d, d)) for _ in range(4))
        per_h = {
            h: count(CausalSelfAttention(GPTConfig(vocab_size=1, n_embd=d, n_head=h, pos="none")))
            for h in p.heads
        }
        mha_heads = p.heads[-1]
        mha = count(nn.MultiheadAttention(d, mha_heads))
    rows = [
        [f"one Linear({d}, {d})", "—", "—", single],
        [f"four Linear({d}, {d}): W_Q, W_K, W_V, W_O", "—", "—", four],
        [f"nn.MultiheadAttention({d}, {mha_heads})", mha_heads, d // mha_heads, mha],
    ]
    rows += [[f"course attention, {h} head(s): qkv + proj", h, d // h, n] for h, n in per_h.items()]
    same = len(set(per_h.values())) == 1
    text = (
        f"Every head count gives {next(iter(per_h.values())):,} parameters = 4·d² + 4·d = {4 * d * d + 4 * d:,}: "
        "splitting into heads regroups the same matrices; it adds no weights."
        if same
        else "The head counts give different parameter totals."
    )
    metrics = {
        "single_linear": single,
        "four_linears": four,
        "attention_params": per_h[p.heads[0]],
        "torch_mha_params": mha,
    }
    metrics |= {f"attention_params_h{h}": n for h, n in per_h.items()}
    return Result(
        experiment="params",
        params=p.model_dump(mode="json"),
        metrics=metrics,
        panels=[
            TablePanel(
                title=f"Parameters at d_model {d}", columns=["module", "heads", "d_k", "params"], rows=rows
            ),
            TextPanel(title="Reading the table", text=text),
        ],
    )


def _plain_attention(x, wq, wk, wv, causal: bool):
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = q @ k.T / q.shape[-1] ** 0.5
    if causal:
        import torch

        T = x.shape[0]
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return scores.softmax(-1) @ v


def run_shuffle(p: ShuffleParams, ctx: RunContext) -> Result:
    import torch

    gen = torch.Generator().manual_seed(p.seed)
    x = torch.randn(p.seq, p.d, generator=gen)
    wq, wk, wv = (torch.randn(p.d, p.d, generator=gen) / p.d**0.5 for _ in range(3))
    perm = torch.randperm(p.seq, generator=gen)
    if torch.equal(perm, torch.arange(p.seq)):  # a shuffle that changes nothing proves nothing
        perm = perm.roll(1)
    diffs = {}
    for causal in (False, True):
        out = _plain_attention(x, wq, wk, wv, causal)
        out_shuffled = _plain_attention(x[perm], wq, wk, wv, causal)
        tag = "_causal" if causal else ""
        diffs[f"max_diff_aligned{tag}"] = float((out_shuffled - out[perm]).abs().max())
        diffs[f"max_diff_unaligned{tag}"] = float((out_shuffled - out).abs().max())
    rows = [
        ["attention, no mask", fmt(diffs["max_diff_aligned"]), fmt(diffs["max_diff_unaligned"])],
        [
            "attention, causal mask",
            fmt(diffs["max_diff_aligned_causal"]),
            fmt(diffs["max_diff_unaligned_causal"]),
        ],
    ]
    return Result(
        experiment="shuffle",
        params=p.model_dump(mode="json"),
        metrics=diffs,
        panels=[
            TablePanel(
                title="Shuffled input",
                columns=["new position", "takes old position"],
                rows=[[i, int(j)] for i, j in enumerate(perm)],
            ),
            TablePanel(
                title="Largest difference from the unshuffled output",
                columns=["", "outputs un-shuffled", "outputs as they come"],
                rows=rows,
            ),
            TextPanel(
                title="Reading the table",
                text=(
                    "Without a mask, the un-shuffled outputs match to rounding error: attention moves each output "
                    "along with its input and never sees the order. The causal mask breaks this symmetry, because "
                    "which keys a query may see depends on where it stands."
                ),
            ),
        ],
    )


def run_permutation(p: PermutationParams, ctx: RunContext) -> Result:
    import torch

    ck = cache.checkpoint()
    a = _encode(ck.tokenizer, p.text, "text")
    b = _encode(ck.tokenizer, p.other, "other")
    pair = torch.tensor([a, b])
    metrics: dict[str, float] = {}
    rows = []
    for n_layer in p.layers:
        row: list = [n_layer]
        for mode in p.modes:
            ctx.check()
            model = cache.fresh_model(p.seed, vocab_size=ck.tokenizer.vocab_size, n_layer=n_layer, pos=mode)
            with torch.no_grad():
                logits, _ = model(pair)
            gap = float((logits[0, -1] - logits[1, -1]).abs().max())
            metrics[f"gap_L{n_layer}_{'nopos' if mode == 'none' else mode}"] = gap
            row.append(fmt(gap, 2))
        rows.append(row)
    with torch.no_grad():
        trained, _ = ck.model(pair)
    metrics["gap_trained"] = float((trained[0, -1] - trained[1, -1]).abs().max())
    cfg = ck.model.cfg
    return Result(
        experiment="permutation",
        params=p.model_dump(mode="json"),
        metrics=metrics,
        panels=[
            TablePanel(
                title=f"Last-position logit gap, {p.text} vs {p.other}, fresh models",
                columns=["layers", *p.modes],
                rows=rows,
            ),
            TextPanel(
                title="Reading the table",
                text=(
                    "Both lines end in the same character and hold the same characters. With one layer and no "
                    "position signal the last position sees the same set of keys, so its output differs only by "
                    "rounding. From two layers on the causal mask leaks order: earlier positions saw different "
                    "prefixes in layer 1, and layer 2 reads their outputs. "
                    f"The trained shipped model ({cfg.n_layer} layers, {cfg.pos} positions) differs by "
                    f"{fmt(metrics['gap_trained'], 3)}."
                ),
            ),
        ],
    )
