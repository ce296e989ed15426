"""Reading past the trained length: a RoPE model's loss and attention entropy at several lengths.

`measure` scores one fixed stretch of text cut into windows of each length, so every length is scored on
the same characters. Besides the loss it records, per query position, the entropy of every head's attention
row: −Σ w log w in nats, 0 when a head looks at one key, ln(n) when it spreads evenly over n keys. The
entropy at a length is the mean over layers, heads and the queries in the window's last `trained_length`
positions (at 1× the whole window; at 4× positions 3·L0 … 4·L0−1), beside ln(keys) over the same queries,
which is what evenly spread attention would give.

`scaling_table` runs `measure` for every context-scaling method (the experiment uses it too, on cached models); `python -m tutor.model.context CHECKPOINT`
stores those tables in the checkpoint's metadata (meta["context_scaling"]), so the context-scaling
experiment can show the shipped model's figures without scoring the validation text again.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from tutor.model.gpt import GPT

METHODS = ("none", "pi", "ntk", "yarn")
MULTIPLES = (1, 2, 4)
TABLE_VERSION = 1
STORED_SCALES = (2.0, 4.0, 8.0)
STORED_WINDOWS = 2048  # windows of the longest length, from the start of the validation split (not all of it)
BATCH = 32  # windows scored at once


@dataclass
class LengthScore:
    length: int
    windows: int
    loss: float
    entropy: (
        float  # mean attention entropy (nats) over the queries in the window's last trained_length positions
    )
    uniform: float  # mean ln(keys) over the same queries: evenly spread attention
    loss_by_position: list[float]  # mean over windows, one value per query position
    entropy_by_position: list[float]  # mean over windows, layers and heads

    def to_dict(self) -> dict:
        return asdict(self)


def batches_of(
    ids_count: int, lengths: Sequence[int], windows: int, batch: int = BATCH
) -> list[tuple[int, int]]:
    """(length, windows in the batch) of every batch `measure` scores, in its order, for a text of `ids_count`
    ids: what a measurement costs can be told before it starts."""
    span = min(windows * max(lengths), ids_count - 1)
    out = []
    for length in lengths:
        count = span // length
        out += [(length, min(batch, count - lo)) for lo in range(0, count, batch)]
    return out


def windows_of(
    ids: Sequence[int] | torch.Tensor, length: int, span: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first `span` characters of `ids` cut into consecutive windows of `length` inputs (+1 target)."""
    data = torch.as_tensor(ids, dtype=torch.long)
    count = min(span, len(data) - 1) // length
    if count < 1:
        raise ValueError(f"the text ({len(data)} characters) is shorter than one window of {length + 1}")
    starts = torch.arange(count) * length
    w = data[starts[:, None] + torch.arange(length + 1)[None, :]]
    return w[:, :-1], w[:, 1:]


@torch.no_grad()
def measure(
    model: GPT,
    ids: Sequence[int] | torch.Tensor,
    lengths: Sequence[int],
    windows: int,
    trained_length: int,
    batch: int = BATCH,
    should_stop: Callable[[], bool] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> list[LengthScore]:
    """Loss and attention entropy at each length, on the first `windows × max(lengths)` characters of `ids`.

    `should_stop()` is polled between batches; when it returns True, InterruptedError is raised. `on_batch(n)`
    is called after each batch with the windows it scored."""
    span = windows * max(lengths)
    scores = []
    was_training = model.training
    model.eval()
    try:
        for length in lengths:
            x, y = windows_of(ids, length, span)
            loss_sum = torch.zeros(length, dtype=torch.float64)
            ent_sum = torch.zeros(length, dtype=torch.float64)
            for lo in range(0, len(x), batch):
                if should_stop is not None and should_stop():
                    raise InterruptedError("stopped")
                logits, entropy = _forward(model, x[lo : lo + batch])
                token_loss = F.cross_entropy(logits.transpose(1, 2), y[lo : lo + batch], reduction="none")
                loss_sum += token_loss.double().sum(0)
                ent_sum += entropy.double().sum(0)
                if on_batch is not None:
                    on_batch(len(token_loss))
            loss_by_pos = (loss_sum / len(x)).tolist()
            ent_by_pos = (ent_sum / len(x)).tolist()
            tail = range(max(0, length - trained_length), length)
            scores.append(
                LengthScore(
                    length=length,
                    windows=len(x),
                    loss=sum(loss_by_pos) / length,
                    entropy=sum(ent_by_pos[i] for i in tail) / len(tail),
                    uniform=sum(math.log(i + 1) for i in tail) / len(tail),
                    loss_by_position=loss_by_pos,
                    entropy_by_position=ent_by_pos,
                )
            )
    finally:
        model.train(was_training)
    return scores


def _forward(model: GPT, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (B, T, V) and the attention entropy per query, averaged over layers and heads (B, T)."""
    logits, _, w = model(x, need_weights=True)  # w: (B, layer, head, T, T), zeros above the diagonal
    entropy = -(w * w.clamp_min(1e-30).log()).sum(-1)  # (B, layer, head, T)
    per_layer = [entropy[:, layer].mean(1) for layer in range(entropy.size(1))]  # heads, then layers
    return logits, torch.stack(per_layer).mean(0)


def scaling_table(
    model_for: Callable[[str], GPT],
    trained_length: int,
    val_ids: Sequence[int],
    scale: float,
    windows: int,
    methods: Sequence[str] = METHODS,
    should_stop: Callable[[], bool] | None = None,
    on_method: Callable[[str], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> dict:
    """`measure` at 1×, 2×, 4× `trained_length` for each method; `model_for(method)` is the RoPE model with
    that method's frequency table stretched by `scale` (for "none", the model as trained). `on_method(method)`
    is called before each method is measured, `on_batch` after each batch (measure's)."""
    L0 = trained_length
    out: dict[str, Any] = {"scale": scale, "windows": windows, "trained_length": L0, "methods": {}}
    for method in methods:
        if on_method is not None:
            on_method(method)
        lengths = [k * L0 for k in MULTIPLES]
        scores = measure(
            model_for(method), val_ids, lengths, windows, L0, should_stop=should_stop, on_batch=on_batch
        )
        out["methods"][method] = [s.to_dict() for s in scores]
    return out


def stored_table(meta: dict, scale: float, windows: int) -> dict | None:
    """The table `store` kept in a checkpoint's metadata for this scale and window count, if there is one."""
    kept = meta.get("context_scaling") or {}
    if kept.get("version") != TABLE_VERSION:
        return None
    for table in kept.get("tables", []):
        if table["scale"] == scale and table["windows"] == windows:
            return table
    return None


def store(checkpoint: Path, scales: Sequence[float] = STORED_SCALES, windows: int = STORED_WINDOWS) -> dict:
    """Measure the tables on the Tang validation split and keep them in the checkpoint's metadata."""
    from tutor.model.checkpoint import keep_in_meta, load_checkpoint
    from tutor.model.corpus import tang_texts

    ck = load_checkpoint(checkpoint)
    if ck.model.cfg.pos != "rope":
        raise ValueError(
            f"{checkpoint} uses {ck.model.cfg.pos!r} positions; context scaling needs a RoPE model"
        )
    L0 = ck.model.cfg.block_size
    val_ids = ck.tokenizer.encode(tang_texts()[1], unknown="unk")
    t0 = time.perf_counter()
    tables = []
    for scale in scales:

        def model_for(method: str, scale: float = scale) -> GPT:
            if method == "none":
                return ck.model
            return load_checkpoint(
                checkpoint, rope_scaling=method, rope_scale=scale, rope_original_max=L0
            ).model

        def announce(method: str, scale: float = scale) -> None:  # a def: mypy types no lambda with a default
            print(f"scale {scale:g}: {method}", flush=True)

        tables.append(
            scaling_table(
                model_for,
                L0,
                val_ids,
                scale,
                windows,
                on_method=announce,
            )
        )
    kept = {
        "version": TABLE_VERSION,
        "corpus": "tang validation split",
        "seconds": time.perf_counter() - t0,
        "tables": tables,
    }
    keep_in_meta(checkpoint, ck, "context_scaling", kept)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tutor.model.context",
        description="measure a RoPE checkpoint at 1x, 2x and 4x its trained length under none/PI/NTK/YaRN and "
        "keep the tables in its metadata",
    )
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--scales", type=float, nargs="+", default=list(STORED_SCALES))
    parser.add_argument("--windows", type=int, default=STORED_WINDOWS)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    kept = store(args.checkpoint, args.scales, args.windows)
    for table in kept["tables"]:
        for method, scores in table["methods"].items():
            cells = "  ".join(
                f"{s['length']}: loss {s['loss']:.4f} entropy {s['entropy']:.3f}/{s['uniform']:.3f}"
                for s in scores
            )
            print(f"scale {table['scale']:g} {method:>4}  {cells}")
    print(f"{kept['seconds']:.0f} s; stored in {args.checkpoint}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
