"""The shared GPT of the course: model, tokenizer, corpus, trainer and checkpoint.

A learner's file reads like the lesson's: `from tutor.model import GPT, GPTConfig`. The two names are
looked up on first use (PEP 562), so importing a module of the package (the tokenizer, the corpus) does
not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.model.gpt import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from tutor.model import gpt

        return getattr(gpt, name)
    raise AttributeError(f"module 'tutor.model' has no attribute {name!r}")
