"""ALiBi: eine feste Strafe für Abstand, zu den Attention-Scores addiert, eine Steigung pro Kopf."""

import math

import torch


def alibi_slopes(n_head: int) -> list[float]:
    """Die Steigungen von Press et al. (2022): eine geometrische Folge; ist n keine Zweierpotenz,
    kommen Zwischenwerte dazu."""

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)  # die erste Steigung ist zugleich der Faktor zwischen Nachbarn
        return [start ** (k + 1) for k in range(n)]

    if math.log2(n_head).is_integer():
        return power_of_two(n_head)
    p = 2 ** math.floor(math.log2(n_head))
    # die nächstkleinere Zweierpotenz, dann jede zweite Steigung der nächstgrößeren Zweierpotenz
    return power_of_two(p) + alibi_slopes(2 * p)[0::2][: n_head - p]


def alibi_bias(n_head: int, T: int) -> torch.Tensor:
    """(n_head, T, T): −slope·(i − j) für Keys j ≤ i (0 auf der Diagonale), −inf für Keys j > i in der
    Zukunft."""
    slopes = torch.tensor(alibi_slopes(n_head))
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf"))
