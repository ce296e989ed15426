"""What crosses between the judge and the sandboxed worker: plain data only, checked on arrival."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from tutor.grading.box import wire


def _round_trip(value):
    return wire.loads(wire.dumps(value))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool])
def test_tensors_keep_dtype_shape_and_every_value(dtype):
    t = (torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) - 7).to(dtype)
    back = _round_trip(t)
    assert back.dtype == dtype and back.shape == (2, 3, 4) and torch.equal(back, t)


def test_a_transposed_view_arrives_as_a_view_with_the_same_layout():
    x = torch.randn(2, 3, 4, 5)
    heads = x.transpose(1, 2)  # what split_heads returns, and what merge_heads must take
    arrived = _round_trip(heads)
    assert not arrived.is_contiguous() and arrived.stride() == heads.stride() and torch.equal(arrived, heads)
    gathered = x.permute(3, 0, 2, 1)
    assert _round_trip(gathered).stride() == gathered.stride()
    sliced = x[..., :2]  # not a permutation of a contiguous tensor: its values, contiguous
    arrived = _round_trip(sliced)
    assert arrived.is_contiguous() and torch.equal(arrived, sliced)


def test_a_tensor_subclass_arrives_as_a_plain_tensor_of_its_data():
    class Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (
                True if func is torch.equal else super().__torch_function__(func, types, args, kwargs or {})
            )

    x = torch.randn(3)
    back = _round_trip(x.as_subclass(Liar))
    assert type(back) is torch.Tensor and torch.equal(back, x)


def test_numbers_nan_and_numpy_values_survive_json():
    back = _round_trip(
        {"nan": float("nan"), "inf": -math.inf, "big": 2**70, "np": np.float32(0.5), "xs": (1, "a")}
    )
    assert math.isnan(back["nan"]) and back["inf"] == -math.inf
    assert isinstance(back["big"], wire.Opaque) and back["big"].type_name == "int"
    assert back["np"].dtype == torch.float32 and float(back["np"]) == 0.5
    assert back["xs"] == [1, "a"]


def test_objects_arrive_as_their_type_name_only():
    back = _round_trip(object())
    assert isinstance(back, wire.Opaque) and back.type_name == "object"


@pytest.mark.parametrize(
    "message",
    [
        {"__tensor__": ["float32", [2, 2], "AAAA"]},  # 3 bytes for 4 floats
        {"__tensor__": ["complex64", [1], "AAAAAAAAAAA="]},  # a dtype a probe never uses
        {"__tensor__": ["float32", [-1], ""]},
        {"__tensor__": ["float32", [0, 10**30], ""]},  # no bytes, and no tensor torch could make
        {"__tensor__": ["float32", [0] + [2**31] * 7, ""]},
        {"__tensor__": ["float32", [2], "AAAAAAAAAAA="], "permute": [0, 0]},
        {"__float__": "1e999"},
        "[" * 5000 + "]" * 5000,
    ],
)
def test_malformed_messages_are_refused(message):
    raw = message if isinstance(message, str) else json.dumps(message)
    with pytest.raises(wire.WireError):
        wire.loads(raw.encode())


def test_a_numpy_view_with_negative_strides_crosses_as_its_values():
    a = np.arange(24.0).reshape(2, 3, 4)
    for view in (a[::-1], a[:, ::-2], a.transpose(2, 0, 1)[::-1], a[::-1].astype(np.float32)):
        back = _round_trip(view)
        assert isinstance(back, torch.Tensor) and back.shape == view.shape
        assert np.array_equal(back.numpy(), view) and back.dtype == torch.from_numpy(view.copy()).dtype
    assert _round_trip(np.array(2.5)).shape == ()  # a 0-d array stays 0-d
