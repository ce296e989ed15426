"""The text the experiments train and score on: the shipped Tang corpus, split as `python -m tutor train`
splits it, loaded once per process (about 1 s; docs/model.md, "The Tang corpus")."""

from __future__ import annotations

import threading
from functools import cache

_loading = threading.Lock()  # experiments on two threads wait for one load rather than doing two


def course_texts() -> tuple[str, str]:
    """(training text, validation text) of the Tang corpus."""
    with _loading:
        return _tang_texts()


@cache
def _tang_texts() -> tuple[str, str]:
    from tutor.model.corpus import tang_texts

    return tang_texts()
