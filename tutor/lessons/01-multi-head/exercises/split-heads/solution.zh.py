"""把 q、k 或 v 的通道拆成多个注意力头，再把各个头拼回去。"""

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head)：每个头拿到属于自己的一段通道。"""
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"C = {C} 个通道无法平均分给 {n_head} 个头")
    # view 把 C 切成 n_head 段；transpose 把头这一维移到 T 前面，matmul 就按头分别计算
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_head, T, d) -> (B, T, n_head * d)：各个头的输出重新并排放在一起。"""
    B, n_head, T, d = x.shape
    # transpose 之后，内存里的数据不再按 (B, T, C) 的顺序排列：view 之前先 contiguous()
    return x.transpose(1, 2).contiguous().view(B, T, n_head * d)
