"""Sieht das Modell die Reihenfolge von „白日依山尽“ ohne Positionsinformation?

Bewerten mit:  python -m tutor grade three-layers
"""

import torch  # noqa: F401

from tutor.model import GPT, GPTConfig  # noqa: F401
from tutor.model.tokenizer import course_tokenizer  # noqa: F401 - der Tokenizer des mitgelieferten Checkpoints


def order_gap(n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """Größte absolute Differenz der Logits an der letzten Position für 白日依山尽 und 山依日白尽.

    Bau das Kurs-GPT (`vocab_size = course_tokenizer().vocab_size`, n_layer Schichten,
    `pos="learned" if use_pos else "none"`) nach `torch.manual_seed(seed)`, schalte es in den
    Eval-Modus, schick beide Zeilen durch das Modell und vergleiche die Logits an der letzten Position.
    """
    raise NotImplementedError("order_gap: hier kommt dein Code hin")
