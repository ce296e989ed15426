"""Experiments on the structure of attention itself: heads, parameter counts, shuffling, the
permutation test. Each is `(params, ctx) -> Result`; torch is imported inside the functions."""

from __future__ import annotations

from tutor.experiments import cache
from tutor.experiments.errors import ExperimentError
from tutor.experiments.params import HeadsParams, ParamCountParams, PermutationParams, ShuffleParams
from tutor.experiments.result import (
    HeatmapPanel,
    Msg,
    Num,
    Result,
    TablePanel,
    TextPanel,
    columns,
    reading,
    result,
)
from tutor.experiments.run_context import RunContext

COL = "exp.col."


def _encode(tokenizer, text: str, field: str) -> list[int]:
    from tutor.model.tokenizer import UnknownCharacterError

    try:
        return tokenizer.encode(text)
    except UnknownCharacterError as err:
        # the tokenizer's own message suggests unknown='unk', an API option a learner here cannot pass
        shown = [Msg("err.experiment.char_at", char=repr(ch), at=i) for i, ch in err.unknown[:8]]
        if len(err.unknown) > 8:
            shown.append(Msg("err.experiment.more", n=len(err.unknown) - 8))
        raise ExperimentError("err.experiment.unseen", field=field, chars=shown) from None


def _shape(t) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def run_heads(p: HeadsParams, ctx: RunContext) -> Result:
    """The shapes of one attention layer of the learner's width, step by step, then the trained model's
    heads reading the learner's text."""
    import torch

    ck = cache.checkpoint()
    T = len(_encode(ck.tokenizer, p.text, "text"))
    # the trained model reads the text as it read every poem in training: after the line break that
    # opens it, at position 0 (tutor.model.train.poem_starts); its heatmaps show that line break too
    read = p.text if p.text.startswith("\n") else "\n" + p.text
    trained = ck.model.cfg
    if len(read) > trained.block_size:
        raise ExperimentError("err.experiment.too_long", n=len(read), positions=trained.block_size)
    if p.layer is not None and p.layer > trained.n_layer:
        raise ExperimentError("err.experiment.no_layer", n=trained.n_layer, got=p.layer)
    steps, qkv_params, proj_params = _walk_through(p, T)
    maps = ck.model.attention_maps(torch.tensor(_encode(ck.tokenizer, read, "text")))  # (L, H, T, T)
    chars = ["↵" if c == "\n" else c for c in read]  # a line break shown as a mark, one cell wide
    layers = [p.layer - 1] if p.layer is not None else list(range(trained.n_layer))
    panels = [
        *_layer_panels(p, T, steps, qkv_params, proj_params, trained, chars),
        *_map_panels(maps, layers, chars),
    ]
    profile = ck.meta.get("head_profile")
    if profile is not None and _has_columns(profile):  # stored by python -m tutor.model.heads
        panels.append(_profile_panel(profile, layers))
    C, h = p.n_embd, p.n_head
    metrics = {
        "qkv_params": qkv_params,
        "proj_params": proj_params,
        "head_dim": C // h,
        "scores_per_head": T * T,
    }
    return result("heads", p, metrics, panels)


def _walk_through(p: HeadsParams, T: int) -> tuple[list[list], int, int]:
    """A fresh attention layer of the chosen width on T random vectors, so every shape is the learner's
    choice: (a row per step: code, what it does, shape), and the parameters of qkv and of proj."""
    import torch
    from torch import nn

    C, h, B = p.n_embd, p.n_head, 1
    gen = torch.Generator().manual_seed(p.seed)  # own generator: no other thread's RNG use can change it
    qkv, proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
    with torch.no_grad():
        for layer in (qkv, proj):
            layer.weight.normal_(0.0, 0.02, generator=gen)
            layer.bias.zero_()
    x = torch.randn(1, T, C, generator=gen)
    steps: list[list] = []

    def step(code: str | Msg, what: str, t) -> None:
        steps.append([code, Msg(f"exp.heads.step.{what}"), _shape(t)])

    with torch.no_grad():
        step("x", "x", x)
        fused = qkv(x)
        step("qkv(x)", "qkv", fused)
        q, k, v = fused.split(C, dim=2)
        step("q, k, v = ….split(C, dim=2)", "split", q)
        step(f"q.view(B, T, {h}, {C // h})", "view", q.view(B, T, h, C // h))
        q, k, v = (t.view(B, T, h, C // h).transpose(1, 2) for t in (q, k, v))
        step(".transpose(1, 2)", "transpose", q)
        scores = q @ k.transpose(-2, -1) / (C // h) ** 0.5
        step("q @ k.transpose(-2, -1) / √d_k", "scores", scores)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        att = scores.masked_fill(future, float("-inf")).softmax(-1)
        step(Msg("exp.heads.step.mask"), "softmax", att)
        y = att @ v
        step("att @ v", "weighted", y)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        step("y.transpose(1, 2).contiguous().view(B, T, C)", "merge", y)
        step("proj(y)", "proj", proj(y))
    return steps, sum(t.numel() for t in qkv.parameters()), sum(t.numel() for t in proj.parameters())


def _layer_panels(
    p: HeadsParams, T: int, steps: list[list], qkv_params: int, proj_params: int, trained, chars: list[str]
) -> list:
    """The walk-through's shapes and parameter counts, and what the heatmaps after them come from."""
    C, h = p.n_embd, p.n_head
    return [
        TablePanel(
            title=Msg("exp.heads.shapes", n_embd=C, n_head=h, chars=T),
            columns=columns(COL, "step", "what", "shape"),
            rows=steps,
        ),
        TablePanel(
            title=Msg("exp.heads.params"),
            columns=columns(COL, "module", "shape", "params"),
            rows=[
                ["qkv", f"Linear({C}, {3 * C})", qkv_params],
                ["proj", f"Linear({C}, {C})", proj_params],
                [Msg("exp.heads.total"), f"4·{C}² + 4·{C}", qkv_params + proj_params],
            ],
        ),
        TextPanel(
            title=Msg("exp.heads.trained"),
            text=Msg(
                "exp.heads.two_models",
                n_embd=C,
                n_head=h,
                layers=trained.n_layer,
                heads=trained.n_head,
                width=trained.n_embd,
                text="".join(chars),
            ),
        ),
    ]


def _map_panels(maps, layers: list[int], chars: list[str]) -> list:
    """A heatmap per head of the chosen layers, then where each head's last query looks hardest."""
    panels: list = []
    looks: list[list] = []
    for li in layers:
        for hi in range(maps.shape[1]):
            w = maps[li, hi]
            # one tolist() per map: reading the tensor cell by cell cost ~4 ms per 64×64 map (16 maps: 65 ms)
            grid = w.tolist()
            values = [[v if j <= i else None for j, v in enumerate(row)] for i, row in enumerate(grid)]
            panels.append(
                HeatmapPanel(
                    title=Msg("exp.heads.map", layer=li + 1, head=hi + 1),
                    row_labels=chars,
                    col_labels=chars,
                    values=values,
                    vmin=0.0,
                    vmax=1.0,
                )
            )
            top = int(w[-1].argmax())
            looks.append([li + 1, hi + 1, chars[top], top + 1, Num(float(w[-1, top]), 3)])
    panels.append(
        TablePanel(
            title=Msg("exp.heads.looks", char=chars[-1], heads=maps.shape[1]),
            columns=columns(COL, "layer", "head", "key", "position", "weight"),
            rows=looks,
        )
    )
    return panels


PROFILE = ("previous", "punctuation", "line_break", "line_above", "rhyme", "half_slot")


def _has_columns(profile: dict) -> bool:
    """Whether a stored profile measured every column shown (an older checkpoint's may not have)."""
    heads = profile.get("heads") or [[{}]]
    return all(f in heads[0][0] for f in (*PROFILE, "entropy"))


def _profile_panel(profile: dict, layers: list[int]) -> TablePanel:
    """What each head looks at on average over the validation poems (tutor/model/heads.py), from the checkpoint."""
    rows = [
        [li + 1, hi + 1, *(Num(figures[f], decimals=2) for f in PROFILE), Num(figures["entropy"], decimals=2)]
        for li, heads in enumerate(profile["heads"])
        if li in layers
        for hi, figures in enumerate(heads)
    ]
    return TablePanel(
        title=Msg("exp.heads.profile", windows=profile["windows"], length=profile["length"]),
        columns=[
            *columns(COL, "layer", "head"),
            *columns(
                "exp.heads.profile_col.",
                "previous",
                "punctuation",
                "line_break",
                "line_above",
                "rhyme",
                "half_slot",
                "entropy",
            ),
        ],
        rows=rows,
    )


def run_params(p: ParamCountParams, ctx: RunContext) -> Result:
    import torch
    from torch import nn

    from tutor.model.gpt import CausalSelfAttention, GPTConfig

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
        [Msg("exp.params.one", d=str(d)), None, None, single],
        [Msg("exp.params.four", d=str(d)), None, None, four],
        [f"nn.MultiheadAttention({d}, {mha_heads})", mha_heads, d // mha_heads, mha],
    ]
    rows += [[Msg("exp.params.course", h=h), h, d // h, n] for h, n in per_h.items()]
    same = len(set(per_h.values())) == 1
    text = (
        Msg("exp.params.same", n=next(iter(per_h.values())), total=4 * d * d + 4 * d)
        if same
        else Msg("exp.params.differ")
    )
    metrics = {
        "single_linear": single,
        "four_linears": four,
        "attention_params": per_h[p.heads[0]],
        "torch_mha_params": mha,
    }
    metrics |= {f"attention_params_h{h}": n for h, n in per_h.items()}
    table = TablePanel(
        title=Msg("exp.params.title_d", d=str(d)),
        columns=columns(COL, "module", "heads", "=d_k", "params"),
        rows=rows,
    )
    return result("params", p, metrics, [table, reading(text)])


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
        [
            Msg(f"exp.shuffle.{row}"),
            Num(diffs[f"max_diff_aligned{tag}"]),
            Num(diffs[f"max_diff_unaligned{tag}"]),
        ]
        for row, tag in (("no_mask", ""), ("causal", "_causal"))
    ]
    panels = [
        TablePanel(
            title=Msg("exp.shuffle.input"),
            columns=columns("exp.shuffle.col.", "new", "old"),
            rows=[[i, int(j)] for i, j in enumerate(perm)],
        ),
        TablePanel(
            title=Msg("exp.shuffle.diff"),
            columns=columns("exp.shuffle.col.", "=", "aligned", "unaligned"),
            rows=rows,
        ),
        reading(Msg("exp.shuffle.note")),
    ]
    return result("shuffle", p, diffs, panels)


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
            row.append(Num(gap, 2))
        rows.append(row)
    with torch.no_grad():
        trained, _ = ck.model(pair)
    metrics["gap_trained"] = float((trained[0, -1] - trained[1, -1]).abs().max())
    cfg = ck.model.cfg
    table = TablePanel(
        title=Msg("exp.permutation.table", text=p.text, other=p.other),
        columns=[Msg(f"{COL}layers"), *(Msg(f"term.pos.{mode}") for mode in p.modes)],
        rows=rows,
    )
    note = Msg(
        "exp.permutation.note",
        layers=cfg.n_layer,
        pos=Msg(f"term.pos.{cfg.pos}"),
        gap=Num(metrics["gap_trained"], 3),
    )
    return result("permutation", p, metrics, [table, reading(note)])
