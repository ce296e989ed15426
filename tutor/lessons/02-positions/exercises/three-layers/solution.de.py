"""Sieht das Modell die Reihenfolge von „白日依山尽“ ohne Positionsinformation?"""

import torch

from tutor.model import GPT, GPTConfig
from tutor.model.tokenizer import course_tokenizer


def order_gap(n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """Größte absolute Differenz der Logits an der letzten Position für 白日依山尽 und 山依日白尽."""
    tok = course_tokenizer()
    torch.manual_seed(seed)  # die Gewichte sind zufällig: der Seed macht sie wiederholbar
    cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=n_layer, pos="learned" if use_pos else "none")
    model = GPT(cfg).eval()
    a = torch.tensor([tok.encode("白日依山尽")])
    b = torch.tensor([tok.encode("山依日白尽")])
    with torch.no_grad():
        logits_a, _ = model(a)
        logits_b, _ = model(b)
    # beide Zeilen enden auf 尽 und enthalten dieselben fünf Zeichen: nur ihre Reihenfolge unterscheidet sich
    return float((logits_a[0, -1] - logits_b[0, -1]).abs().max())
