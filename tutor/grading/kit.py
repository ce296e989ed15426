"""Helpers for an exercise's checks.py: probing the learner's code, failing with "expected … got …".

A check is a function `check_<id>(sub)` in the exercise's checks.py. It runs in the judge process
(tutor/grading/judge.py), which never imports the learner's file: `sub` is a
`tutor.grading.remote.Submission`, and `need(sub, "name")(...)` asks the sandboxed worker to call
the learner's function with the given inputs and send back plain values. A check returns a short
message on success, or raises `CheckFailed` saying what was expected and what came back; an exception
the learner's code raised arrives as `LearnerError` and counts as an error of that check.

Messages are in the learner's language. A check writes its words as `msg(key, **values)`: the text
of `key` in the `[messages]` table of the exercise's exercise.toml, in the language the grade is for,
with the values filled in by `str.format` (numbers, shapes and code as the check formats them: they
are not translated). The judge sets that language and table once per job (`speaking`); the helpers
here say their own words ("expected … got …", "type mismatch") from the tutor's catalogue.

Torch is imported only inside functions.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tutor.errors import CheckFailure, TutorError
from tutor.grading.remote import LearnerError, Submission
from tutor.texts import say

__all__ = ["CheckFailed", "LearnerError", "msg", "need", "fail", "shape", "as_tensor", "expect_tensor",
           "finite", "max_diff", "fresh", "below"]  # fmt: skip

# (language, the exercise's messages in it): set by the judge for its job, by runs.py for its grade
_VOICE: ContextVar[tuple[str, dict[str, str]]] = ContextVar("tutor_grading_voice", default=("en", {}))
# (the running check's seed, how many generators it has drawn): set by the judge per check
_SEED: ContextVar[tuple[str, list[int]]] = ContextVar("tutor_grading_seed", default=("", [0]))


class CheckFailed(CheckFailure, AssertionError):
    """The learner's code ran but gave a wrong answer; the message says expected vs got."""


class MessageMissing(TutorError, LookupError):
    """A check asked for a message its exercise.toml does not have: the exercise's fault, not the
    learner's (`python -m tutor check` finds these before a learner does)."""


@contextmanager
def speaking(lang: str, messages: dict[str, str]) -> Iterator[None]:
    """Checks run inside this write their messages in `lang`; `messages` is the exercise's
    `[messages]` table in that language ({key: text}, English where a translation is missing)."""
    token = _VOICE.set((lang, dict(messages)))
    try:
        yield
    finally:
        _VOICE.reset(token)


def submission_seed(source: str) -> str:
    """A submission's seed: the first 16 hex digits of the sha256 of its text. The same file always
    gets the same probe inputs and messages; a changed file gets fresh ones."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@contextmanager
def seeded(seed: str, check: str) -> Iterator[None]:
    """Run one check with the inputs of `seed` and its name: every `fresh()` and `below()` inside
    draws from them, and so does torch's global generator (the judge's own models)."""
    import torch

    check_seed = hashlib.sha256(f"{seed}:{check}".encode()).hexdigest()
    token = _SEED.set((check_seed, [0]))
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(check_seed[:15], 16))
            yield
    finally:
        _SEED.reset(token)


def lang() -> str:
    """The language the checks are writing in."""
    return _VOICE.get()[0]


def msg(key: str, /, **values: Any) -> str:
    """The exercise's message `key` in the learner's language, with `values` filled in as given."""
    messages = _VOICE.get()[1]
    if key not in messages:
        raise MessageMissing(f"the exercise's exercise.toml has no [messages] entry {key!r}")
    return messages[key].format(**values)


def tell(key: str, **values: Any) -> str:
    """A text of the tutor's own catalogue in the learner's language; values are used as given."""
    return say(key, lang(), **{k: v if isinstance(v, str) else str(v) for k, v in values.items()})


def need(sub: Submission, name: str) -> Callable[..., Any]:
    """A callable that runs the learner's function or class `name` in the worker, or a failure
    naming what is missing."""
    kind = sub.names.get(name)
    if kind is None:
        raise CheckFailed(tell("grade.check.no_name", name=name))
    if kind == "value":
        raise CheckFailed(tell("grade.check.a_value", name=name))
    return lambda *args, **kwargs: sub.call(name, *args, **kwargs)


def fail(expected: str, got: str, why: str = "") -> CheckFailed:
    """The failure "expected …, got …", after `why` when given. `expected` and `got` are code, values
    or a `msg(...)`; `why` is a `msg(...)` or code (the call that gave the wrong answer)."""
    if why:
        return CheckFailed(tell("grade.check.expected_why", why=why, expected=expected, got=got))
    return CheckFailed(tell("grade.check.expected", expected=expected, got=got))


def mismatch(call: str = "") -> str:
    """The `why` of a result of the wrong type: "type mismatch", and the call when given."""
    return tell("grade.check.type_mismatch_in", call=call) if call else tell("grade.check.type_mismatch")


def describe(value: Any) -> str:
    """What came back, for a message: a tensor's shape and dtype, or the value's type and text."""
    import torch

    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return tell("grade.check.tensor", dtype=dtype, shape=tuple(value.shape))
    return tell("grade.check.value", type=type(value).__name__, value=f"{value!r:.60}")


def shape(t: Any) -> str:
    s = getattr(t, "shape", None)
    return str(tuple(s)) if s is not None else tell("grade.check.a_type", type=type(t).__name__)


def as_tensor(value: Any, what: str):
    """`value` (a float tensor, or a list of numbers) as a float64 tensor; a type mismatch is named."""
    import torch

    if isinstance(value, torch.Tensor):
        if not (value.is_floating_point() or value.dtype in (torch.int64, torch.int32)):
            raise fail(tell("grade.check.as_floats", what=what), describe(value), mismatch())
        return value.to(torch.float64)
    if isinstance(value, list | tuple) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        return torch.tensor(value, dtype=torch.float64)
    raise fail(tell("grade.check.as_numbers", what=what), describe(value), mismatch())


def expect_tensor(got: Any, what: str):
    import torch

    if not isinstance(got, torch.Tensor):
        raise fail(tell("grade.check.returns_tensor", what=what), describe(got), mismatch())
    return got


def finite(t, what: str):
    """`t` if every value is a number; NaN or inf is named with where it first occurs."""
    import torch

    bad = ~torch.isfinite(t.to(torch.float64)) if t.is_floating_point() else None
    if bad is not None and bool(bad.any()):
        where = tuple(int(i) for i in bad.nonzero()[0])
        value = float(t[where]) if where else float(t)
        kind = "NaN" if math.isnan(value) else "inf"
        raise CheckFailed(tell("grade.check.not_finite", what=what, kind=kind, where=where))
    return t


def max_diff(a, b) -> float:
    return float((a.to(b.dtype) - b).abs().max()) if a.numel() else 0.0


def fresh():
    """A torch.Generator for probe inputs: the n-th one a check asks for is seeded from the check's
    seed and n (`seeded`), so a file cannot know its inputs in advance without being graded, and a
    grade can be replayed."""
    import torch

    check_seed, drawn = _SEED.get()
    drawn[0] += 1
    n = int(hashlib.sha256(f"{check_seed}:{drawn[0]}".encode()).hexdigest()[:15], 16)
    return torch.Generator().manual_seed(n)


def below(n: int) -> int:
    """A whole number in [0, n), drawn like `fresh()`'s inputs."""
    import torch

    return int(torch.randint(n, (1,), generator=fresh()))
