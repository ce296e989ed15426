"""把 q、k 或 v 的通道拆成多个注意力头，再把各个头拼回去。

评分命令：  python -m tutor grade split-heads
"""

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head)。

    第 0 个头拿到每个字的第 0 … d−1 个通道，第 1 个头拿到接下来的 d 个，依此类推
    （d = C // n_head），与 tutor/model/gpt.py 里的 `x.view(B, T, n_head, d).transpose(1, 2)` 完全相同。
    C 不能被 n_head 整除时抛出 ValueError。
    """
    raise NotImplementedError("split_heads：在这里写你的代码")


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_head, T, d) -> (B, T, n_head * d)，split_heads 的逆操作。"""
    raise NotImplementedError("merge_heads：在这里写你的代码")
