"""Split the channels of q, k or v into attention heads, and put the heads side by side again.

Grade with:  python -m tutor grade split-heads
"""

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head).

    Head 0 gets channels 0 … d−1 of every token, head 1 the next d, and so on (d = C // n_head),
    exactly as `x.view(B, T, n_head, d).transpose(1, 2)` in tutor/model/gpt.py.
    Raise ValueError when C is not divisible by n_head.
    """
    raise NotImplementedError("split_heads: your code here")


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_head, T, d) -> (B, T, n_head * d), the inverse of split_heads."""
    raise NotImplementedError("merge_heads: your code here")
