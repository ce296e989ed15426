"""Split the channels of q, k or v into attention heads, and put the heads side by side again."""

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head): each head gets its own slice of the channels."""
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"C = {C} channels cannot be split evenly into {n_head} heads")
    # view cuts C into n_head slices; transpose moves the head axis before T so matmul runs per head
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_head, T, d) -> (B, T, n_head * d): the heads' outputs side by side again."""
    B, n_head, T, d = x.shape
    # after transpose the memory is not in (B, T, C) order any more: contiguous() before view
    return x.transpose(1, 2).contiguous().view(B, T, n_head * d)
