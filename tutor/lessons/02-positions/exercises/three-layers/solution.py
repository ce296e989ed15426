"""Does the model see the order of "白日依山尽" without position information?"""

import torch

from tutor.model import GPT, GPTConfig
from tutor.model.tokenizer import course_tokenizer


def order_gap(n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """Max abs difference of the last position's logits for 白日依山尽 vs 山依日白尽."""
    tok = course_tokenizer()
    torch.manual_seed(seed)  # the weights are random: the seed makes them repeatable
    cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=n_layer, pos="learned" if use_pos else "none")
    model = GPT(cfg).eval()
    a = torch.tensor([tok.encode("白日依山尽")])
    b = torch.tensor([tok.encode("山依日白尽")])
    with torch.no_grad():
        logits_a, _ = model(a)
        logits_b, _ = model(b)
    # both lines end in 尽 and hold the same five characters: only their order differs
    return float((logits_a[0, -1] - logits_b[0, -1]).abs().max())
