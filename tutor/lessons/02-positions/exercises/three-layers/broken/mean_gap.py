# fails: from_model — returns the mean abs difference instead of the largest one
import torch

from tutor.model import GPT, GPTConfig
from tutor.model.tokenizer import course_tokenizer


def order_gap(n_layer, use_pos, seed=0):
    tok = course_tokenizer()
    torch.manual_seed(seed)
    cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=n_layer, pos="learned" if use_pos else "none")
    model = GPT(cfg).eval()
    with torch.no_grad():
        a = model(torch.tensor([tok.encode("白日依山尽")]))[0][0, -1]
        b = model(torch.tensor([tok.encode("山依日白尽")]))[0][0, -1]
    return float((a - b).abs().mean())
