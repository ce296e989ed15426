"""Helpers for an exercise's checks.py: failing with "expected … got …", finding the learner's names.

A check is a function `check_<id>(sub)` in the exercise's checks.py; `sub` is the learner's module.
It returns a short message on success, or raises `CheckFailed` (or AssertionError) saying what was
expected and what came back. Any other exception raised inside the learner's code counts as an error
of that check. This module runs inside the grading child process; it imports torch only in functions.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any


class CheckFailed(AssertionError):
    """The learner's code ran but gave a wrong answer; the message says expected vs got."""


def need(sub: ModuleType, name: str) -> Any:
    """The learner's function or class `name`, or a failure naming what is missing."""
    value = getattr(sub, name, None)
    if value is None:
        raise CheckFailed(f"your file defines no `{name}` (expected a function or class of that name)")
    return value


def fail(expected: str, got: str, why: str = "") -> CheckFailed:
    text = f"expected {expected}, got {got}"
    return CheckFailed(f"{why}: {text}" if why else text)


def shape(t: Any) -> str:
    s = getattr(t, "shape", None)
    return str(tuple(s)) if s is not None else f"a {type(t).__name__}"


def as_tensor(value: Any, what: str):
    """`value` as a float64 tensor, or a failure saying what came back instead."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().to(torch.float64)
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise fail(f"{what} as a tensor or a list of numbers", repr(value)[:80]) from None


def expect_tensor(got: Any, what: str):
    import torch

    if not isinstance(got, torch.Tensor):
        raise fail(f"{what} to return a torch.Tensor", f"{type(got).__name__} {repr(got)[:60]}")
    return got


def max_diff(a, b) -> float:
    return float((a.to(b.dtype) - b).abs().max())


def course_tokenizer(path: Path | None = None):
    """The character tokenizer of the shipped course checkpoint (`tutor.paths.default_checkpoint()`).

    The learner's order_gap uses it to turn the two poem lines into ids and to size the model's
    vocabulary, so their model has the same shape as the course model. Read once per process.
    """
    from tutor.paths import default_checkpoint

    return _tokenizer_from(Path(path) if path else default_checkpoint())


@lru_cache(maxsize=4)
def _tokenizer_from(path: Path):
    import torch

    from models.tokenizer import CharTokenizer

    if not path.is_file():
        raise FileNotFoundError(f"the course checkpoint is missing: {path} (train it: python -m tutor train)")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    return CharTokenizer.from_dict(payload["tokenizer"])
