"""Plain data between the judge and the sandboxed worker: JSON lines, tensors as dtype + shape + bytes.

Nothing else crosses: no pickle, no objects. A value is None, a bool, an int, a float (NaN and the
infinities as {"__float__": "nan"}), a string, a list, a dict with string keys, or a tensor:
{"__tensor__": [dtype, shape, base64 bytes]}, with "permute" when it is a permutation of those (a
transposed view crosses as a transposed view, so the learner's code meets the layout the check chose).
Anything the worker cannot express this way arrives as {"__object__": type name, "repr": short text},
so a check can say what came back. `decode` on the judge's side rebuilds tensors with its own torch
from the raw bytes, checks every shape against the byte count and refuses deep or oversized structures.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

MAX_DEPTH = 32
MAX_ITEMS = 100_000
MAX_DIM = 2**31 - 1  # one axis of a tensor; a reply's total size is bounded by REPLY_LIMIT
REPLY_LIMIT = (
    16 * 2**20
)  # bytes of one answer the judge reads: far above any probe's (the largest is under 1 MB)
# the dtypes a probe may use; a learner's exotic dtype is reported as what it is
DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


class WireError(ValueError):
    """A message that is not well-formed plain data."""


def _tensor_to_wire(t: Any) -> dict:
    import torch

    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        return {"__object__": f"tensor of dtype {dtype}", "repr": f"shape {tuple(t.shape)}"}
    base, undo = _layout(t)
    raw = base.contiguous().reshape(-1)
    if dtype == "bfloat16":
        data = raw.view(torch.int16).numpy().tobytes()
    else:
        data = raw.numpy().tobytes()
    wired = {"__tensor__": [dtype, list(base.shape), base64.b64encode(data).decode("ascii")]}
    return {**wired, "permute": undo} if undo else wired


def _layout(t: Any) -> tuple[Any, list[int] | None]:
    """(a tensor whose memory is in row-major order, the permutation that turns it back into `t`), or
    (t, None) when t is contiguous or not a permutation of a contiguous tensor. A transposed view
    (the heads of attention) crosses as one, so the other side meets the same memory layout."""
    if t.is_contiguous() or t.dim() < 2:
        return t, None
    order = sorted(range(t.dim()), key=lambda i: (-t.stride(i), -t.size(i)))
    base = t.permute(*order)
    if not base.is_contiguous():
        return t, None
    return base, [order.index(i) for i in range(t.dim())]


def _array_like(value: Any) -> dict | None:
    """A tensor, a Tensor subclass (its data only, through the base class) or a numpy value, as a
    wire tensor; None for anything else. Never calls a method the learner could have overridden."""
    module = type(value).__module__ or ""
    if not (module.startswith(("torch", "numpy")) or hasattr(value, "__torch_function__")):
        return None
    import torch

    if isinstance(value, torch.Tensor):
        return _tensor_to_wire(torch.Tensor.as_subclass(value, torch.Tensor))
    if module == "numpy" and hasattr(value, "dtype"):
        import numpy

        try:  # a view with negative strides (`a[::-1]`) is a legitimate array torch cannot share: copied
            if isinstance(value, numpy.ndarray) and any(step < 0 for step in value.strides):
                value = numpy.ascontiguousarray(value)  # (ndim ≥ 1 here: a 0-d array has no strides)
            return _tensor_to_wire(torch.as_tensor(value))
        except (TypeError, RuntimeError, ValueError):
            return None
    return None


def encode(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-ready plain data (used by both sides)."""
    if depth > MAX_DEPTH:
        return {"__object__": "structure", "repr": "nested too deeply"}
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else {"__object__": "int", "repr": f"{value:.6g}"}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, list | tuple):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: encode(v, depth + 1) for k, v in value.items()}
    if (tensor := _array_like(value)) is not None:
        return tensor
    text = object.__repr__(value)
    return {"__object__": type(value).__name__, "repr": text[:80]}


def dumps(value: Any) -> bytes:
    return (json.dumps(encode(value), allow_nan=False) + "\n").encode("utf-8")


class Opaque:
    """Something the worker could not send as plain data; only its type name and a short text."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


def _tensor_from_wire(spec: Any, permute: Any):
    import torch

    if not (isinstance(spec, list) and len(spec) == 3):
        raise WireError("a tensor needs [dtype, shape, data]")
    dtype, shape, data = spec
    if dtype not in DTYPES or not isinstance(shape, list) or not isinstance(data, str):
        raise WireError(f"not a tensor description: dtype {dtype!r}")
    if len(shape) > 8 or not all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_DIM for n in shape
    ):
        raise WireError(f"bad tensor shape {shape!r:.60}")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    kind = torch.int16 if dtype == "bfloat16" else getattr(torch, dtype)
    count = math.prod(shape)
    if count * torch.empty((), dtype=kind).element_size() != len(raw):
        raise WireError(f"a tensor of shape {tuple(shape)} does not fit its {len(raw)} bytes")
    t = torch.frombuffer(bytearray(raw), dtype=kind) if raw else torch.empty(0, dtype=kind)
    if dtype == "bfloat16":
        t = t.view(torch.bfloat16)
    t = t.reshape(shape)
    if permute is not None:
        if sorted(permute) != list(range(len(shape))):
            raise WireError(f"bad permutation {permute!r:.40}")
        t = t.permute(*permute)
    return t


def decode(value: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """Plain data back into Python values and (own) tensors; WireError for anything else."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        raise WireError("the message is nested too deeply or holds too many items")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [decode(v, depth + 1, budget) for v in value]
    if not isinstance(value, dict):
        raise WireError(f"unexpected {type(value).__name__}")
    if "__tensor__" in value:
        return _tensor_from_wire(value["__tensor__"], value.get("permute"))
    if "__float__" in value:
        text = value["__float__"]
        if text not in ("nan", "inf", "-inf"):
            raise WireError(f"bad float {text!r:.20}")
        return float(text)
    if "__object__" in value:
        return Opaque(str(value["__object__"])[:80], str(value.get("repr", ""))[:200])
    return {str(k): decode(v, depth + 1, budget) for k, v in value.items()}


def loads(line: bytes) -> Any:
    try:
        return decode(json.loads(line))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as err:
        if isinstance(err, WireError):
            raise
        raise WireError(f"unreadable message: {err}") from None
