"""Teile die Kanäle von q, k oder v in Attention-Köpfe auf und setze die Köpfe wieder zusammen.

Bewerten mit:  python -m tutor grade split-heads
"""

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head).

    Kopf 0 erhält die Kanäle 0 … d−1 jedes Zeichens, Kopf 1 die nächsten d und so weiter
    (d = C // n_head), genau wie `x.view(B, T, n_head, d).transpose(1, 2)` in tutor/model/gpt.py.
    Wirf einen ValueError, wenn C nicht durch n_head teilbar ist.
    """
    raise NotImplementedError("split_heads: hier kommt dein Code hin")


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_head, T, d) -> (B, T, n_head * d), die Umkehrung von split_heads."""
    raise NotImplementedError("merge_heads: hier kommt dein Code hin")
