"""A checkpoint's cross-entropy on a whole validation text, beside the count-based baselines on the same targets.

Every character of the validation text after the first is predicted exactly once. The text is cut into
chunks that start where the checkpoint's training windows started (its meta's `windows`: before a poem,
at a line start) and are at most the model's block size long; a chunk predicts the characters up to the
next chunk's start, so each prediction sees the text before it back to its chunk's start. The baselines
(tutor.model.baselines) score the same (previous, next) pairs with counts from the training text, so the
comparison needs nothing but the checkpoint and the corpus:

    python -m tutor.model.score tutor/model/checkpoints/gpt-learned.pt
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from tutor.model.baselines import ngram_baselines
from tutor.model.gpt import GPT
from tutor.model.tokenizer import CharTokenizer
from tutor.model.train import WINDOWS, line_starts


def chunks(text: str, block: int, windows: str = "line") -> list[tuple[int, int]]:
    """(start, end) pairs: inputs text[start:end], targets text[start+1:end+1]; the chunks tile the text and
    start where training windows of the kind `windows` start ("poem", "line"; "any": at line starts too)."""
    starts = (WINDOWS[windows] or line_starts)(text).tolist() + [len(text) - 1]
    out, s, k = [], 0, 0
    while s < len(text) - 1:
        while k + 1 < len(starts) and starts[k + 1] <= s + block:
            k += 1
        end = starts[k] if starts[k] > s else min(s + block, len(text) - 1)
        out.append((s, end))
        s = end
    return out


@torch.no_grad()
def split_scores(
    model: GPT,
    tokenizer: CharTokenizer,
    train_text: str,
    val_text: str,
    batch: int = 64,
    windows: str = "line",
) -> dict[str, float]:
    """Mean cross-entropy (nats per character) of the model and of the baselines over the validation text,
    cut where the model's training windows started (`windows`)."""
    ids = torch.tensor(tokenizer.encode(val_text, unknown="unk"), dtype=torch.long)
    block = model.cfg.block_size
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        pieces = chunks(val_text, block, windows)
        for lo in range(0, len(pieces), batch):
            group = pieces[lo : lo + batch]
            width = max(e - s for s, e in group)
            x = torch.zeros(len(group), width, dtype=torch.long)
            y = torch.full((len(group), width), -100, dtype=torch.long)  # -100: padding, not scored
            for row, (s, e) in enumerate(group):
                x[row, : e - s] = ids[s:e]
                y[row, : e - s] = ids[s + 1 : e + 1]
            logits, _ = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum")
            total += float(loss)
            count += int((y != -100).sum())
    finally:
        model.train(was_training)
    train_ids = torch.tensor(tokenizer.encode(train_text, unknown="unk"), dtype=torch.long)
    base = ngram_baselines(train_ids, ids[:-1], ids[1:], tokenizer.vocab_size)
    return {"model": total / count, "targets": count, **base.to_dict()}


def trained_windows(meta: dict) -> str:
    """Where the checkpoint's training windows started (checkpoints from before the option: at lines)."""
    return (meta.get("train") or {}).get("windows", "line")


def main(argv: list[str] | None = None) -> int:
    from tutor.model.checkpoint import load_checkpoint
    from tutor.model.corpus import tang_texts

    parser = argparse.ArgumentParser(
        prog="python -m tutor.model.score",
        description="a checkpoint's loss on the whole Tang validation split, beside the count-based baselines",
    )
    parser.add_argument("checkpoint", type=Path)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    ck = load_checkpoint(args.checkpoint)
    s = split_scores(ck.model, ck.tokenizer, *tang_texts(), windows=trained_windows(ck.meta))
    print(
        f"{args.checkpoint}: {s['targets']:,} validation characters, nats per character: model {s['model']:.4f}  |  "
        f"bigram {s['bigram']:.4f} (λ {s['bigram_lambda']:.3f})  unigram {s['unigram']:.4f}  "
        f"uniform {s['uniform']:.4f}  |  model − bigram {s['model'] - s['bigram']:+.4f}  "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
