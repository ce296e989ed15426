"""Helpers for an exercise's checks.py: probing the learner's code, failing with "expected … got …".

A check is a function `check_<id>(sub)` in the exercise's checks.py. It runs in the judge process
(tutor/grading/judge.py), which never imports the learner's file: `sub` is a
`tutor.grading.remote.Submission`, and `need(sub, "name")(...)` asks the sandboxed worker to call
the learner's function with the given inputs and send back plain values. A check returns a short
message on success, or raises `CheckFailed` saying what was expected and what came back; an exception
the learner's code raised arrives as `LearnerError` and counts as an error of that check.

`course_tokenizer` is the one helper meant for learners' files (three-layers' order_gap uses it).
Torch is imported only inside functions.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from tutor.errors import CheckFailure
from tutor.grading.remote import LearnerError, Submission

__all__ = ["CheckFailed", "LearnerError", "need", "fail", "shape", "as_tensor", "expect_tensor", "finite",
           "max_diff", "fresh", "delegation", "course_tokenizer"]  # fmt: skip


class CheckFailed(CheckFailure, AssertionError):
    """The learner's code ran but gave a wrong answer; the message says expected vs got."""


def need(sub: Submission, name: str) -> Callable[..., Any]:
    """A callable that runs the learner's function or class `name` in the worker, or a failure
    naming what is missing."""
    kind = sub.names.get(name)
    if kind is None:
        raise CheckFailed(f"your file defines no `{name}` (expected a function or class of that name)")
    if kind == "value":
        raise CheckFailed(f"`{name}` in your file is a value, not a function or class")
    return lambda *args, **kwargs: sub.call(name, *args, **kwargs)


def fail(expected: str, got: str, why: str = "") -> CheckFailed:
    text = f"expected {expected}, got {got}"
    return CheckFailed(f"{why}: {text}" if why else text)


def describe(value: Any) -> str:
    """What came back, for a message: a tensor's shape and dtype, or the value's type and text."""
    import torch

    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    return f"{type(value).__name__} {value!r:.60}"


def shape(t: Any) -> str:
    s = getattr(t, "shape", None)
    return str(tuple(s)) if s is not None else f"a {type(t).__name__}"


def as_tensor(value: Any, what: str):
    """`value` (a float tensor, or a list of numbers) as a float64 tensor; a type mismatch is named."""
    import torch

    if isinstance(value, torch.Tensor):
        if not (value.is_floating_point() or value.dtype in (torch.int64, torch.int32)):
            raise fail(f"{what} as float numbers", describe(value), "type mismatch")
        return value.to(torch.float64)
    if isinstance(value, list | tuple) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        return torch.tensor(value, dtype=torch.float64)
    raise fail(f"{what} as a tensor or a list of numbers", describe(value), "type mismatch")


def expect_tensor(got: Any, what: str):
    import torch

    if not isinstance(got, torch.Tensor):
        raise fail(f"{what} to return a torch.Tensor", describe(got), "type mismatch")
    return got


def finite(t, what: str):
    """`t` if every value is a number; NaN or inf is named with where it first occurs."""
    import torch

    bad = ~torch.isfinite(t.to(torch.float64)) if t.is_floating_point() else None
    if bad is not None and bool(bad.any()):
        where = tuple(int(i) for i in bad.nonzero()[0])
        value = float(t[where]) if where else float(t)
        kind = "NaN" if math.isnan(value) else "inf"
        raise CheckFailed(f"{what} returned {kind} at index {where}: every value must be a finite number")
    return t


def max_diff(a, b) -> float:
    return float((a.to(b.dtype) - b).abs().max()) if a.numel() else 0.0


def fresh():
    """A torch.Generator with a seed drawn now: probe inputs nobody can know in advance."""
    import torch

    return torch.Generator().manual_seed(secrets.randbits(63))


def delegation(sub: Submission, forbidden: dict[str, str]) -> None:
    """Fail when the file imports one of `forbidden` ({"module.name": why}), statically or by name."""
    imported = sub.imports()
    named = sub.strings()
    for target, why in forbidden.items():
        module = target.rsplit(".", 1)[0]
        if target in imported or module in imported and target.rsplit(".", 1)[1] in named or target in named:
            raise CheckFailed(f"your file uses the course's own `{target}`: {why}")


def course_tokenizer(path: Path | None = None):
    """The character tokenizer of the shipped course checkpoint (`tutor.settings.default_checkpoint()`).

    The learner's order_gap uses it to turn the two poem lines into ids and to size the model's
    vocabulary, so their model has the same shape as the course model. Read once per process.
    """
    from tutor.settings import default_checkpoint

    return _tokenizer_from(Path(path) if path else default_checkpoint())


@lru_cache(maxsize=4)
def _tokenizer_from(path: Path):
    import torch

    from models.tokenizer import CharTokenizer

    if not path.is_file():
        raise FileNotFoundError(f"the course checkpoint is missing: {path} (train it: python -m tutor train)")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    return CharTokenizer.from_dict(payload["tokenizer"])
