"""没有位置信息，模型看得出「白日依山尽」里字的顺序吗？

评分命令：  python -m tutor grade three-layers
"""

import torch  # noqa: F401

from tutor.model import GPT, GPTConfig  # noqa: F401
from tutor.model.tokenizer import course_tokenizer  # noqa: F401 - 随课程附带的检查点所用的分词器


def order_gap(n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """白日依山尽与山依日白尽在最后一个位置上的 logits 的最大绝对差。

    先调用 `torch.manual_seed(seed)`，再构建课程 GPT（`vocab_size = course_tokenizer().vocab_size`，
    n_layer 层，`pos="learned" if use_pos else "none"`），切换到 eval 模式，
    把两行诗分别送进模型，比较最后一个位置上的 logits。
    """
    raise NotImplementedError("order_gap：在这里写你的代码")
