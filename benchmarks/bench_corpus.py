"""One-off cost of the shipped Tang corpus: what a training run pays before its first step.

    python benchmarks/bench_corpus.py [--repeats 7]

Each stage is timed on its own, `--repeats` times, and the median printed: reading the shipped
tang.json.gz into poems (load_tang), the deterministic split, the training and validation text, the
vocabulary (CharTokenizer.for_training) and encoding both texts to ids. Nothing is cached between
repeats, so every repeat pays the full cost; the file itself sits in the OS page cache after the first.
The app's first screen pays none of this: the corpus is loaded only by training and the experiments
that need it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.model.corpus import TANG_CORPUS, corpus_text, load_tang, split_poems
from tutor.model.tokenizer import CharTokenizer


def median_ms(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    shipped = Path(__file__).resolve().parents[1] / "tutor" / "model" / "data" / TANG_CORPUS
    poems = load_tang()
    train, val = split_poems(poems)
    train_text, val_text = corpus_text(train), corpus_text(val)
    tokenizer = CharTokenizer.for_training(train_text)
    print(
        f"{shipped.name}: {shipped.stat().st_size / 1e6:.2f} MB, {len(poems):,} poems "
        f"(train {len(train):,}, val {len(val):,}), vocabulary {tokenizer.vocab_size:,}; "
        f"median of {repeats}, load average {os.getloadavg()[0]:.2f}"
    )
    stages = {
        "load_tang()": load_tang,
        "split_poems()": lambda: split_poems(poems),
        "corpus_text() train + val": lambda: (corpus_text(train), corpus_text(val)),
        "CharTokenizer.for_training()": lambda: CharTokenizer.for_training(train_text),
        "encode train + val": lambda: (
            tokenizer.encode(train_text, unknown="unk"),
            tokenizer.encode(val_text, unknown="unk"),
        ),
    }
    total = 0.0
    for name, run in stages.items():
        ms = median_ms(run, repeats)
        total += ms
        print(f"  {name:<30}{ms:>8.0f} ms")
    print(f"  {'total':<30}{total:>8.0f} ms")


if __name__ == "__main__":
    main()
