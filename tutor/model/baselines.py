"""Count-based baselines for the course GPT's validation loss, in nats per character.

A model that does not beat these has learned less than counting does:
- uniform: ln V, guessing evenly over the vocabulary;
- unigram: P(b) = (count(b) + 1) / (N + V) over the training ids (add-one, so no character has probability 0);
- interpolated bigram: P(b | a) = λ · count(a, b) / count(a) + (1 − λ) · P_unigram(b), and P_unigram(b) alone
  when a never occurs in training. λ is the value that minimises the loss on the scored pairs themselves, the
  most favourable choice for the baseline, so beating it is a fair bar.

Counts come from the training ids; scoring takes (previous, next) id pairs, so the baselines can be scored on
exactly the targets the model's validation loss averages over.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

_GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass(frozen=True)
class Baselines:
    uniform: float
    unigram: float
    bigram: float
    bigram_lambda: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def ngram_baselines(
    train_ids: torch.Tensor, prev: torch.Tensor, nxt: torch.Tensor, vocab_size: int
) -> Baselines:
    """Uniform, add-one unigram and interpolated bigram cross-entropy of predicting `nxt` after `prev`."""
    train_ids, prev, nxt = (t.reshape(-1).long() for t in (train_ids, prev, nxt))
    counts = torch.bincount(train_ids, minlength=vocab_size).double()
    p_unigram = ((counts + 1) / (counts.sum() + vocab_size))[nxt]
    p_bigram, seen = _bigram_ml(train_ids, prev, nxt, vocab_size)

    def bigram_loss(lam: float) -> float:
        p = torch.where(seen, lam * p_bigram + (1 - lam) * p_unigram, p_unigram)
        return float(-p.log().mean())

    lam = _minimise(bigram_loss, 0.0, 1.0 - 1e-6)
    return Baselines(
        uniform=math.log(vocab_size),
        unigram=float(-p_unigram.log().mean()),
        bigram=bigram_loss(lam),
        bigram_lambda=lam,
    )


def _bigram_ml(
    train_ids: torch.Tensor, prev: torch.Tensor, nxt: torch.Tensor, vocab_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """count(a, b) / count(a) for each scored pair, and whether a occurs in training at all.

    Pairs are counted sparsely (sorted pair keys), not in a V×V table: at V = 6,000 that table would take 288 MB.
    """
    keys, pair_counts = torch.unique(train_ids[:-1] * vocab_size + train_ids[1:], return_counts=True)
    wanted = prev * vocab_size + nxt
    at = torch.searchsorted(keys, wanted).clamp(max=len(keys) - 1)
    pair = torch.where(keys[at] == wanted, pair_counts[at], 0).double()
    history = torch.bincount(train_ids[:-1], minlength=vocab_size).double()[prev]
    return pair / history.clamp(min=1), history > 0


def _minimise(f, lo: float, hi: float, tol: float = 1e-4) -> float:
    """Golden-section search: the loss is convex in λ (minus the log of a function linear in λ, averaged)."""
    a, b = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fa, fb = f(a), f(b)
    while hi - lo > tol:
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - _GOLDEN * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + _GOLDEN * (hi - lo)
            fb = f(b)
    return (lo + hi) / 2
