"""Does the model see the order of "白日依山尽" without position information?

Grade with:  python -m tutor grade three-layers
"""

import torch  # noqa: F401

from tutor.model import GPT, GPTConfig  # noqa: F401
from tutor.model.tokenizer import course_tokenizer  # noqa: F401 - the shipped checkpoint's tokenizer


def order_gap(n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """Max abs difference of the last position's logits for 白日依山尽 vs 山依日白尽.

    Build the course GPT (vocab_size = course_tokenizer().vocab_size, n_layer layers,
    pos="learned" if use_pos else "none") after torch.manual_seed(seed), put it in eval mode,
    run both lines through it and compare the logits at the last position.
    """
    raise NotImplementedError("order_gap: your code here")
