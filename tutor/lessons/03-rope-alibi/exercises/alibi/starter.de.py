"""ALiBi: ein fester Abschlag nach Abstand, zu den Attention-Scores addiert, eine Steigung pro Kopf.

Bewerten mit:  python -m tutor grade alibi
"""

import math  # noqa: F401

import torch


def alibi_slopes(n_head: int) -> list[float]:
    """Eine Steigung pro Kopf, wie im ALiBi-Paper.

    Für eine Zweierpotenz n: bei 2^(−8/n) beginnen und jedes Mal mit 2^(−8/n) malnehmen
    (8 Köpfe: 1/2 … 1/256). Sonst die Steigungen der nächstkleineren Zweierpotenz p nehmen, dann
    jede zweite Steigung der Folge für 2p, bis es n_head Steigungen sind.
    """
    raise NotImplementedError("alibi_slopes: hier kommt dein Code hin")


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """Bias der Form (n_head, T, T) für die Scores: −slope·(i − j) für Query i und Key j ≤ i,
    −inf für Keys nach i."""
    raise NotImplementedError("alibi_bias: hier kommt dein Code hin")
