"""What each attention head of a checkpoint looks at, averaged over windows of the validation poems.

A line of the corpus is a couplet: two half-lines of 5 or 7 characters, each closed by a mark
(白日依山尽，黄河入海流。), then a line break. For every query character of a window, each head's attention
row (weights summing to 1) is read for:
- previous: the weight on the character just before;
- self: the weight on the character itself;
- punctuation: the summed weight on the punctuation marks ，。？！； the query can see;
- line_break: the summed weight on the line breaks it can see;
- line_above: the weight on the character in the same place one line up (lines of equal length);
- rhyme: from the character just before a line's rhyme slot (the last character before its 。), where
  the model chooses the rhyme, the weight on the rhyme character of the line above (楼 is chosen at 层,
  which looks at 流); rhyme_elsewhere: the weight at the same distance back from every other query;
- half_slot: from each query that predicts a character of a second half-line (the ， and the second
  half's characters before its last), the weight on the same slot of the first half-line, the partner
  of the character it predicts (，→ 白 before 黄, 黄 → 日 before 河); half_slot_elsewhere: the same
  distance back from every other query;
- entropy: −Σ w ln w in nats (0: one key takes all; ln n: spread evenly over n keys).
Each figure is the mean over the queries where it is defined. Windows start at poem starts, as in training.

`python -m tutor.model.heads CHECKPOINT` stores the profile in the checkpoint's metadata (meta["head_profile"]), so
the heads experiment can show it without reading the validation text; the lessons quote it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from tutor.model.gpt import GPT
from tutor.model.tokenizer import CharTokenizer
from tutor.model.train import poem_starts

FEATURES = (
    "previous",
    "self",
    "punctuation",
    "line_break",
    "line_above",
    "rhyme",
    "rhyme_elsewhere",
    "half_slot",
    "half_slot_elsewhere",
    "entropy",
)
PUNCTUATION = "，。？！；"
PROFILE_VERSION = 2
WINDOWS = 256


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line of the window, its line break included."""
    lines, start = [], 0
    for i, c in enumerate(text):
        if c == "\n":
            lines.append((start, i + 1))
            start = i + 1
    lines.append((start, len(text)))
    return lines


def _elsewhere(pairs: torch.Tensor) -> torch.Tensor:
    """(T, T): for every query that is not one of `pairs`' queries, the key at any distance back that
    `pairs` uses in this window: the same offsets, read from everywhere else."""
    T = pairs.size(0)
    distances = {int(q - k) for q, k in pairs.nonzero().tolist()}
    queries = pairs.any(-1)
    out = torch.zeros(T, T, dtype=torch.bool)
    for d in distances:
        q = torch.arange(d, T)
        keep = ~queries[q]
        out[q[keep], q[keep] - d] = True
    return out


def _window_masks(text: str) -> dict[str, torch.Tensor]:
    """Per window: (T,) key masks for the summed features and (T, T) query-key masks for the single-key ones."""
    T = len(text)
    punct = torch.tensor([c in PUNCTUATION for c in text])
    breaks = torch.tensor([c == "\n" for c in text])
    above = torch.zeros(T, T, dtype=torch.bool)
    rhyme = torch.zeros(T, T, dtype=torch.bool)
    half = torch.zeros(T, T, dtype=torch.bool)
    lines = _lines(text)
    for a0, a1 in lines:  # the second half-line against the first, inside one line
        line = text[a0:a1]
        w = line.find("，")
        if (
            w >= 1
            and line[w + 1 : 2 * w + 1].find("，") < 0
            and a0 + 2 * w < T
            and text[a0 + 2 * w + 1 : a0 + 2 * w + 2] in ("。", "？", "！")
        ):
            for j in range(w):  # query a0+w+j predicts the second half's j-th character; its partner is a0+j
                half[a0 + w + j, a0 + j] = True
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
            if col >= 1 and b0 + col + 1 < T and text[b0 + col + 1] == "。" and text[a0 + col + 1] == "。":
                rhyme[b0 + col - 1, a0 + col] = (
                    True  # chosen one step early: from the character before the slot
                )
    return {
        "punctuation": punct,
        "line_break": breaks,
        "line_above": above,
        "rhyme": rhyme,
        "rhyme_elsewhere": _elsewhere(rhyme),
        "half_slot": half,
        "half_slot_elsewhere": _elsewhere(half),
    }


@torch.no_grad()
def profile(model: GPT, tokenizer: CharTokenizer, text: str, windows: int = WINDOWS, seed: int = 0) -> dict:
    """The per-head figures (module docstring) over `windows` windows of `text`, drawn with `seed`."""
    T = model.cfg.block_size
    starts = poem_starts(text)
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
        for name in ("line_above", "rhyme", "rhyme_elsewhere", "half_slot", "half_slot_elsewhere"):
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
    from tutor.model.checkpoint import keep_in_meta, load_checkpoint
    from tutor.model.corpus import tang_texts

    ck = load_checkpoint(checkpoint)
    found = profile(ck.model, ck.tokenizer, tang_texts()[1], windows)
    keep_in_meta(checkpoint, ck, "head_profile", found)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tutor.model.heads",
        description="measure what each attention head looks at on the Tang validation split and keep it in the "
        "checkpoint's metadata",
    )
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--windows", type=int, default=WINDOWS)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    found = store(args.checkpoint, args.windows)
    print("layer head " + " ".join(f"{f[:9]:>9}" for f in FEATURES))
    for layer, heads in enumerate(found["heads"]):
        for head, figures in enumerate(heads):
            print(f"{layer + 1:>5} {head + 1:>4} " + " ".join(f"{figures[f]:>9.3f}" for f in FEATURES))
    print(
        f"{found['windows']} windows of {found['length']}; {time.perf_counter() - t0:.0f} s; stored in {args.checkpoint}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
