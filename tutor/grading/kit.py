"""The check API: an exercise's checks.py is a list of plain functions over the learner's module.

    import torch

    from tutor.grading.kit import expect

    def check_shape(learner):
        x = torch.randn(2, 5, 12)
        expect(learner.split_heads(x, 3).shape, (2, 3, 5, 4))

Each check declared in exercise.toml's [[checks]] is a function `check_<id>(learner)`. It runs in the
judge (tutor/grading/judging/judge.py), a trusted process that never imports the learner's file: `learner`
stands for that file. `learner.split_heads(x, 3)` sends x as bytes to the sandboxed worker, which
calls the learner's function, and gives back what it returned as plain data, rebuilt with the judge's
own torch (a tensor keeps its memory layout: a transposed view arrives as a transposed view, in both
directions). A name the file does not define, or defines as a value, fails the check with the
grader's message; an exception the learner's code raises ends the check as an error that names the
call. Calling a class or function with a `GPTConfig` builds the module in the worker and gives a handle
(tutor.grading.judging.remote.RemoteModule): `.params` {name: shape}, `.modules`, `.is_module`, `.load(state)`,
`.run(*args, method="__call__", **kwargs)` (without gradients), `.logits(*args)`, `.grads(idx, targets)`.
A check that computes an expensive value of its own does it while the worker runs the learner's code:
`answer = learner.order_gap.later(3, False, seed)` sends the call and returns at once; `answer()`
waits for the value (a grade's two processes then keep two cores busy).

Expectations fail the check with the grader's own words ("expected …, got …"), in the learner's
language (tutor/texts/*.toml, `grade.check.*`):

    expect(got, want, where=None)            got == want; tensors: the same shape and values, exactly;
                                             a torch.Size equals a tuple
    expect_close(got, want, where=None, rtol=1e-5, atol=1e-8)
                                             a number, a list of numbers or a tensor, within
                                             |got − want| ≤ atol + rtol·|want|, element by element
    expect_above(got, limit, where=None)     got ≥ limit (and expect_below: got ≤ limit)
    expect_number(got, where=None) -> float  a finite number (a one-number tensor too), as a float
    with expect_raises(ValueError, where=None) as raised:
        learner.split_heads(x, 4)            the call must raise that exception; raised.message is
                                             its text, as the learner's code wrote it

`where` says what was checked; by default it is the last call to the learner, as code
(`split_heads(Tensor[2, 5, 12], 3)`). Pass code (f"sorted(split_heads(x, {h}))") or `msg(key)`.

Words of the exercise's own: `msg(key, **values)` is the text of `key` in the [messages] table of
exercise.toml, in the learner's language (a str.format template; values are code and stay as given:
format a float in the check, f"{gap:.3g}"). Fail with them by `assert condition, msg("key", ...)`. A
check returns nothing (the grade then says "as expected" and names the last call) or its own message.

Inputs: draw them with torch (`torch.randn`, `torch.randint`) and `random`, without a generator: the
judge seeds both from the grade's seed and the check's name (`seeded`). The seed is a secret of the
grading process, never the file's: an HMAC of the file's text under a key the tutor's process draws at
random when it starts (`grade_seed`), which the judge never holds; the judge gets the seed itself only
after its worker is forked, so no copy of it is in the worker's memory. Secrecy over reproducibility:
a file cannot know, by replaying the generators, which sizes and values it will be asked about, so a
table of answers prepared for them earns nothing; within one process (the app, `grade --watch`, a
batch) the same file still meets the same inputs and messages, and any grade replays exactly with the
seed its report shows (`grade EX FILE --seed S`). The worker's own generators are seeded from the
file's SHA-256, which is no secret: what the file draws itself repeats on every grade. A check judges
what the code returns, never its source. A property that doing nothing also has (a shape kept, a gap of 0) counts only next to one that
takes real work (the values): a file returning its input, zeros of the right shape or a constant
must fail.

Torch is imported only inside functions.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tutor.grading.judging.remote import LearnerError, Submission
from tutor.grading.judging.voice import CheckFailed, lang, msg, tell

__all__ = [
    "Learner",
    "expect",
    "expect_close",
    "expect_above",
    "expect_below",
    "expect_number",
    "expect_raises",
    "msg",
    "fail",
    "CheckFailed",
    "LearnerError",
]

# the running check's last call to the learner: [its text as code, what it returned]
_LAST: ContextVar[list | None] = ContextVar("tutor_grading_last_call", default=None)


SEED = re.compile(r"[0-9a-f]{16}")  # a grade's seed, as its report shows it


def grade_seed(source: str, key: bytes) -> str:
    """The seed a file is graded with: the first 16 hex digits of the HMAC-SHA256 of its text under
    `key`, the grading process's secret. Without the key the seed is 64 bits no file can guess; with
    it, the same file gets the same inputs."""
    return hmac.new(key, source.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]


@contextmanager
def seeded(seed: str, check: str) -> Iterator[None]:
    """Run one check with the inputs of `seed` and its name: torch's global generator and Python's
    `random` are seeded from them."""
    import torch

    check_seed = hashlib.sha256(f"{seed}:{check}".encode()).hexdigest()
    last = _LAST.set(["", None])
    state = random.getstate()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(check_seed[:15], 16))
            random.seed(int(check_seed[15:30], 16))
            yield
    finally:
        random.setstate(state)
        _LAST.reset(last)


# --- the learner's module, through probes ------------------------------------------------------------


def _arg(value: Any) -> str:
    """One argument of a call, as code: a tensor by its shape (`Tensor[2, 5, 12]`), a config by its
    class name, a long list by its length."""
    shape_ = getattr(value, "shape", None)
    if shape_ is not None and type(value).__name__ in ("Tensor", "Parameter"):
        return f"Tensor[{', '.join(str(n) for n in shape_)}]"
    if hasattr(value, "__dataclass_fields__"):
        return f"{type(value).__name__}(…)"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple) and len(value) > 6:
        return f"{type(value).__name__}[{len(value)}]"
    return f"{value!r:.40}"


def _call_text(name: str, args: tuple, kwargs: dict) -> str:
    """`name(args…)` as code, the way a message names a call."""
    return f"{name}({', '.join([*map(_arg, args), *(f'{k}={_arg(v)}' for k, v in kwargs.items())])})"


class _Remote:
    """A function or class of the learner's file: calling it is a probe into the worker."""

    def __init__(self, sub: Submission, name: str):
        self._sub, self._name = sub, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        configs = [a for a in args if hasattr(a, "__dataclass_fields__")]
        if configs:  # a module, built from a GPTConfig in the worker: a handle to it
            from dataclasses import asdict

            return self._answered(args, kwargs, lambda: self._sub.new(self._name, asdict(configs[0])))
        return self._answered(args, kwargs, lambda: self._sub.call(self._name, *args, **kwargs))

    def later(self, *args: Any, **kwargs: Any) -> Callable[[], Any]:
        """Call the function without waiting for it: the worker runs it while the check computes its
        own value (a model of its own, say); what this returns waits for the answer and gives it, as
        the call would have.

            answer = learner.order_gap.later(3, False, seed)
            want = reference_gap(3, False, seed)  # meanwhile, in the judge
            gap = answer()
        """
        waiting = self._sub.call_later(self._name, *args, **kwargs)
        return lambda: self._answered(args, kwargs, waiting)

    def _answered(self, args: tuple, kwargs: dict, answer: Callable[[], Any]) -> Any:
        """What `answer` gives, kept as the check's last call (its messages name it)."""
        call = _call_text(self._name, args, kwargs)
        last = _last()
        last[:] = [call, None]
        try:
            value = answer()
        except LearnerError as err:
            raised = LearnerError(err.type_name, tell("grade.check.in_call", call=call, error=err.text))
            raised.message = err.text
            raise raised from None
        last[1] = value
        return value


class Learner:
    """The learner's module as a check sees it: `learner.name(...)` calls the file's `name` in the
    worker. A name the file lacks, or holds a value under, fails the check."""

    def __init__(self, sub: Submission):
        self._sub = sub

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        kind = self._sub.names.get(name)
        if kind is None:
            raise CheckFailed(tell("grade.check.no_name", name=name))
        if kind == "value":
            raise CheckFailed(tell("grade.check.a_value", name=name))
        return _Remote(self._sub, name)


def _last() -> list:
    last = _LAST.get()
    if last is None:
        last = ["", None]
        _LAST.set(last)
    return last


def last_call() -> tuple[str, Any]:
    """The running check's last call to the learner (as code, "" before the first) and its result."""
    call, value = _last()
    return call, value


# --- expectations ------------------------------------------------------------------------------------


def _where(where: str | None) -> str:
    return where if where is not None else _last()[0]


def _failed(expected: str, got: str, where: str | None) -> CheckFailed:
    why = _where(where)
    if why:
        return CheckFailed(tell("grade.check.expected_why", why=why, expected=expected, got=got))
    return CheckFailed(tell("grade.check.expected", expected=expected, got=got))


def describe(value: Any) -> str:
    """What came back, for a message: a tensor's shape and dtype, or the value's type and text."""
    import torch

    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return tell("grade.check.tensor", dtype=dtype, shape=tuple(value.shape))
    return tell("grade.check.value", type=type(value).__name__, value=f"{value!r:.60}")


def _shown(value: Any) -> str:
    """A value for a message, as code: a shape as a tuple, a float to 6 digits, a tensor by its shape."""
    import torch

    if isinstance(value, torch.Size):
        return str(tuple(value))
    if isinstance(value, torch.Tensor):
        return _number(value.item()) if value.numel() == 1 and value.dim() == 0 else describe(value)
    if isinstance(value, float):
        return _number(value)
    return f"{value!r:.80}"


def _number(value: float, digits: int = 6) -> str:
    """A number in a sentence, written the learner's way (German `-0,25`); in code (calls, lists,
    tuples) numbers stay as Python writes them."""
    from tutor.texts import marked

    return marked(f"{value:.{digits}g}", lang())


def _tensor(value: Any, like, where: str | None):
    """`value` as a tensor to compare with the tensor `like`: a tensor, a number or a list of numbers
    (nested as `like` is); anything else fails as a type mismatch."""
    import torch

    if isinstance(value, torch.Tensor):
        return value
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | list | tuple):
            raise TypeError
        return torch.tensor(value, dtype=torch.float64 if like.is_floating_point() else like.dtype)
    except (TypeError, ValueError, RuntimeError):
        raise _failed(
            tell("grade.check.tensor_of_shape", shape=tuple(like.shape)), describe(value), where
        ) from None


def _compare(got: Any, want: Any, where: str | None, rtol: float, atol: float) -> None:
    """Fail unless `got` has `want`'s shape and every value within atol + rtol·|want| of it (NaN never
    is); the message names the first index that is off."""
    import torch

    got = _tensor(got, want, where)
    if got.shape != want.shape:
        shown = tell("grade.check.shape", shape=tuple(got.shape))
        raise _failed(tell("grade.check.shape", shape=tuple(want.shape)), shown, where)
    if want.is_floating_point() or got.is_floating_point():
        a, b = got.to(torch.float64), want.to(torch.float64)
        bad = ~((a - b).abs() <= atol + rtol * b.abs())
    else:
        a, b = got, want
        bad = a.to(want.dtype) != b
    if bool(bad.any()):
        index = tuple(int(i) for i in bad.nonzero()[0])
        expected = tell("grade.check.at_index", value=_shown(b[index]), index=index) if index else _shown(b)
        raise _failed(expected, _shown(a[index]), where)


def expect(got: Any, want: Any, where: str | None = None) -> None:
    """`got == want`, or the check fails saying what was expected and what came back. Tensors must
    have the same shape and the same values, exactly; a torch.Size equals a tuple."""
    import torch

    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            raise _failed(tell("grade.check.tensor_of_shape", shape=tuple(want.shape)), describe(got), where)
        return _compare(got, want, where, 0.0, 0.0)
    got_, want_ = (tuple(v) if isinstance(v, torch.Size) else v for v in (got, want))
    if (
        isinstance(got_, torch.Tensor)
        or type(got_) is not type(want_)
        and not (isinstance(got_, int | float) and isinstance(want_, int | float))
    ):
        raise _failed(_shown(want_), describe(got_), where)
    if got_ != want_:
        raise _failed(_shown(want_), _shown(got_), where)
    return None


def expect_close(
    got: Any, want: Any, where: str | None = None, rtol: float = 1e-5, atol: float = 1e-8
) -> None:
    """`got` within atol + rtol·|want| of `want`, element by element: numbers, lists of numbers or
    tensors (compared in float64)."""
    import torch

    if not isinstance(want, torch.Tensor):
        if isinstance(want, int | float) and not isinstance(want, bool):
            got = expect_number(got, where)
        want = torch.tensor(want, dtype=torch.float64)
    _compare(got, want, where, rtol, atol)


def expect_number(got: Any, where: str | None = None) -> float:
    """`got` as a float: a finite int or float, or a float tensor holding one number."""
    import torch

    value = got
    if isinstance(got, torch.Tensor) and got.numel() == 1 and got.is_floating_point():
        value = float(got.reshape(()))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _failed(tell("grade.check.a_finite_number"), describe(got), where)
    if not math.isfinite(value):
        raise _failed(tell("grade.check.a_finite_number"), str(value), where)
    return float(value)


def expect_above(got: Any, limit: float, where: str | None = None) -> float:
    """`got` a number ≥ limit; returns it as a float."""
    value = expect_number(got, where)
    if not value >= limit:
        raise _failed(tell("grade.check.at_least", limit=_number(limit)), _shown(value), where)
    return value


def expect_below(got: Any, limit: float, where: str | None = None) -> float:
    """`got` a number ≤ limit; returns it as a float."""
    value = expect_number(got, where)
    if not value <= limit:
        raise _failed(tell("grade.check.at_most", limit=_number(limit)), _shown(value), where)
    return value


class expect_raises:  # noqa: N801 - used as `with expect_raises(ValueError):`, like pytest.raises
    """The learner's call inside must raise `error` (an exception class or its name); afterwards
    `.message` is the exception's text as the learner's code wrote it (with where it was raised)."""

    def __init__(self, error: type[BaseException] | str, where: str | None = None):
        self.name = error if isinstance(error, str) else error.__name__
        self.where, self.message = where, ""

    def __enter__(self) -> expect_raises:
        return self

    def __exit__(self, kind, err, tb) -> bool:
        if kind is None:
            raise _failed(self.name, tell("grade.check.no_error"), self.where)
        if not isinstance(err, LearnerError):
            return False
        own = getattr(err, "message", err.text)
        if err.type_name != self.name:
            raise _failed(self.name, own, self.where) from None
        self.message = own
        return True


def fail(expected: str, got: str, why: str = "") -> CheckFailed:
    """The failure "expected …, got …" to raise, after `why` when given: for checks that judge
    something other than a call to the learner (head-count's, on stored runs)."""
    return _failed(expected, got, why)
