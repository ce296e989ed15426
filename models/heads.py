"""What each attention head of a checkpoint looks at, averaged over windows of the validation poems.

For every query character of a window, each head's attention row (weights summing to 1) is read for:
- previous: the weight on the character just before;
- self: the weight on the character itself;
- punctuation: the summed weight on the punctuation marks ，。？！； the query can see;
- line_break: the summed weight on the line breaks it can see;
- line_above: the weight on the character in the same place one line up (lines of equal length);
- rhyme: the same, for the character before a line's 。 only: the rhyme position and the one above it;
- entropy: −Σ w ln w in nats (0: one key takes all; ln n: spread evenly over n keys).
Each figure is the mean over the queries where it is defined. Windows start at line starts, as in training.

`python -m models.heads CHECKPOINT` stores the profile in the checkpoint's metadata (meta["head_profile"]), so
the heads experiment can show it without reading the validation text; the lessons quote it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from models.gpt import GPT
from models.tokenizer import CharTokenizer
from models.train import line_starts

FEATURES = ("previous", "self", "punctuation", "line_break", "line_above", "rhyme", "entropy")
PUNCTUATION = "，。？！；"
PROFILE_VERSION = 1
WINDOWS = 256


def _window_masks(text: str) -> dict[str, torch.Tensor]:
    """Per window: (T, T) key masks for the summed features and (T, T) one-hot masks for the single-key ones."""
    T = len(text)
    punct = torch.tensor([c in PUNCTUATION for c in text])
    breaks = torch.tensor([c == "\n" for c in text])
    above = torch.zeros(T, T, dtype=torch.bool)
    rhyme = torch.zeros(T, T, dtype=torch.bool)
    lines, start = [], 0
    for i, c in enumerate(text):
        if c == "\n":
            lines.append((start, i + 1))  # the line with its break
            start = i + 1
    lines.append((start, T))
    for (a0, a1), (b0, b1) in zip(lines, lines[1:], strict=False):
        width = a1 - a0
        if b1 - b0 < width and b1 == T:
            width = b1 - b0  # the window cuts the last line: compare what it holds
        elif b1 - b0 != a1 - a0:
            continue
        for col in range(width):
            if text[b0 + col] in "\n":
                continue
            above[b0 + col, a0 + col] = True
            if b0 + col + 1 < T and text[b0 + col + 1] == "。" and text[a0 + col + 1] == "。":
                rhyme[b0 + col, a0 + col] = True
    return {"punctuation": punct, "line_break": breaks, "line_above": above, "rhyme": rhyme}


@torch.no_grad()
def profile(model: GPT, tokenizer: CharTokenizer, text: str, windows: int = WINDOWS, seed: int = 0) -> dict:
    """The per-head figures (module docstring) over `windows` windows of `text`, drawn with `seed`."""
    T = model.cfg.block_size
    starts = line_starts(text)
    starts = starts[starts + T <= len(text)]
    pick = starts[torch.randint(len(starts), (windows,), generator=torch.Generator().manual_seed(seed))]
    L, H = model.cfg.n_layer, model.cfg.n_head
    sums = {f: torch.zeros(L, H, dtype=torch.float64) for f in FEATURES}
    counts = dict.fromkeys(FEATURES, 0)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for s in pick.tolist():
        piece = text[s : s + T]
        A = model.attention_maps(torch.tensor(tokenizer.encode(piece, unknown="unk"))).double()  # L, H, T, T
        masks = _window_masks(piece)
        q = torch.arange(1, T)  # every query but the first, which has only itself to look at
        sums["previous"] += A[:, :, q, q - 1].sum(-1)
        sums["self"] += A[:, :, q, q].sum(-1)
        ent = -(A * A.clamp_min(1e-30).log()).sum(-1)  # L, H, T
        sums["entropy"] += ent[:, :, 1:].sum(-1)
        counts["previous"] += T - 1
        counts["self"] += T - 1
        counts["entropy"] += T - 1
        for name in ("punctuation", "line_break"):
            keys = masks[name][None, :] & causal  # (T queries, T keys)
            rows = keys.any(-1)
            sums[name] += (A * keys).sum(-1)[:, :, rows].sum(-1)
            counts[name] += int(rows.sum())
        for name in ("line_above", "rhyme"):
            pairs = masks[name]
            sums[name] += (A * pairs).sum((-1, -2))
            counts[name] += int(pairs.sum())
    heads = [
        [{f: float(sums[f][layer, head] / max(counts[f], 1)) for f in FEATURES} for head in range(H)]
        for layer in range(L)
    ]
    return {
        "version": PROFILE_VERSION,
        "windows": windows,
        "length": T,
        "seed": seed,
        "queries": counts,
        "heads": heads,
    }


def store(checkpoint: Path, windows: int = WINDOWS) -> dict:
    """Profile a checkpoint on the Tang validation split and keep it in its metadata."""
    from models.checkpoint import keep_in_meta, load_checkpoint
    from models.corpus import tang_texts

    ck = load_checkpoint(checkpoint)
    found = profile(ck.model, ck.tokenizer, tang_texts()[1], windows)
    keep_in_meta(checkpoint, ck, "head_profile", found)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m models.heads",
        description="measure what each attention head looks at on the Tang validation split and keep it in the "
        "checkpoint's metadata",
    )
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--windows", type=int, default=WINDOWS)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    found = store(args.checkpoint, args.windows)
    print("layer head  " + "  ".join(f"{f:>11}" for f in FEATURES))
    for layer, heads in enumerate(found["heads"]):
        for head, figures in enumerate(heads):
            print(f"{layer + 1:>5} {head + 1:>4}  " + "  ".join(f"{figures[f]:>11.3f}" for f in FEATURES))
    print(
        f"{found['windows']} windows of {found['length']}; {time.perf_counter() - t0:.0f} s; stored in {args.checkpoint}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
