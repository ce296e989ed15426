"""Die Kanäle von q, k oder v auf Attention-Köpfe aufteilen und die Köpfe wieder aneinanderfügen."""

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head): jeder Kopf erhält seinen eigenen Ausschnitt der Kanäle."""
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"C = {C} Kanäle lassen sich nicht gleichmäßig auf {n_head} Köpfe aufteilen")
    # view schneidet C in n_head Stücke; transpose stellt die Kopf-Achse vor T, damit matmul je Kopf rechnet
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_head, T, d) -> (B, T, n_head * d): die Ausgaben der Köpfe wieder nebeneinander."""
    B, n_head, T, d = x.shape
    # nach transpose liegt der Speicher nicht mehr in der Reihenfolge (B, T, C): contiguous() vor view
    return x.transpose(1, 2).contiguous().view(B, T, n_head * d)
