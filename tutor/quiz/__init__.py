"""Quizzes: reading answers, checking them, spaced-repetition scheduling, and a sitting's logic.

Exports are lazy (PEP 562): importing the package does not load fsrs or pydantic models until used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tutor.quiz.check import AnswerError, Check, check_answer
    from tutor.quiz.session import (
        Feedback,
        Item,
        QuizSession,
        Score,
        SectionPointer,
        due_items,
        predictions_answered,
        predictions_unlocked,
    )

_WHERE = {
    "AnswerError": "check",
    "Check": "check",
    "check_answer": "check",
    "Feedback": "session",
    "Item": "session",
    "QuizSession": "session",
    "Score": "session",
    "SectionPointer": "session",
    "due_items": "session",
    "predictions_answered": "session",
    "predictions_unlocked": "session",
}
__all__ = [
    "AnswerError",
    "Check",
    "Feedback",
    "Item",
    "QuizSession",
    "Score",
    "SectionPointer",
    "check_answer",
    "due_items",
    "predictions_answered",
    "predictions_unlocked",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"tutor.quiz.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'tutor.quiz' has no attribute {name!r}")
