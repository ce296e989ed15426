"""没有位置信息，模型看得出「白日依山尽」里字的顺序吗？"""

import torch

from tutor.model import GPT, GPTConfig
from tutor.model.tokenizer import course_tokenizer


def order_gap(n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """白日依山尽与山依日白尽在最后一个位置上的 logits 的最大绝对差。"""
    tok = course_tokenizer()
    torch.manual_seed(seed)  # 权重是随机的：固定种子才能复现
    cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=n_layer, pos="learned" if use_pos else "none")
    model = GPT(cfg).eval()
    a = torch.tensor([tok.encode("白日依山尽")])
    b = torch.tensor([tok.encode("山依日白尽")])
    with torch.no_grad():
        logits_a, _ = model(a)
        logits_b, _ = model(b)
    # 两句都以「尽」结尾，用的也是同样五个字：不同的只有顺序
    return float((logits_a[0, -1] - logits_b[0, -1]).abs().max())
