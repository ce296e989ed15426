"""The text the experiments train and score on: the shipped Tang corpus, split as `python -m tutor train`
splits it, loaded once per process (about 1 s; see README, "The Tang corpus")."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_texts: tuple[str, str] | None = None


def course_texts() -> tuple[str, str]:
    """(training text, validation text) of the Tang corpus."""
    global _texts
    with _lock:
        if _texts is None:
            from models.corpus import tang_texts

            _texts = tang_texts()
        return _texts
