"""Checks for three-layers: order_gap(n_layer, use_pos, seed) measured on the course GPT.

The learner's order_gap runs in the worker; the judge computes the same gap itself (`_real_gap`,
the reference's computation with the judge's own models.gpt) and compares, with seeds drawn per run.
A constant (0.0 included) earns nothing: each gap counts next to the one it contrasts with, the
near-zero one-layer gap once a deeper or positioned model gives a clear one, and the clear gaps once
they differ from it. What the checks say is in exercise.toml's [messages].
"""

import math
from functools import lru_cache

import torch

from models.tokenizer import course_tokenizer
from tutor.grading.kit import CheckFailed, below, describe, fail, mismatch, msg, need

NOISE = 1e-5  # float32 rounding of a permutation-invariant sum stays near 1e-7
CLEAR = 1e-3  # a real difference: at least 100 times the rounding noise
LINES = ("白日依山尽", "山依日白尽")  # the same five characters; both end in 尽


def _call(n_layer: int, use_pos: bool, seed: int) -> str:
    return f"order_gap({n_layer}, {use_pos}, seed={seed})"


def _gap(sub, n_layer: int, use_pos: bool, seed: int = 0) -> float:
    """The learner's value as a float ≥ 0, or a failure saying what came back instead."""
    call = _call(n_layer, use_pos, seed)
    value = need(sub, "order_gap")(n_layer, use_pos, seed)
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() == 1:
        value = float(value.reshape(()))  # a one-number float tensor is a float too
    if not isinstance(value, float):
        raise fail(msg("a_float"), describe(value), mismatch(call))
    if math.isnan(value):
        raise CheckFailed(msg("nan", call=call))
    if math.isinf(value):
        raise CheckFailed(msg("inf", call=call, value=value))
    if value < 0:
        raise fail(msg("non_negative"), f"{value:.6g}", call)
    return value


@lru_cache(maxsize=16)
def _real_gap(n_layer: int, use_pos: bool, seed: int) -> float:
    """The reference's computation, in the judge: the max abs difference of the last logits."""
    from models.gpt import GPT, GPTConfig

    tok = course_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=n_layer, pos="learned" if use_pos else "none")
        model = GPT(cfg).eval()
    a, b = (torch.tensor([tok.encode(line)]) for line in LINES)
    with torch.no_grad():
        return float((model(a)[0][0, -1] - model(b)[0][0, -1]).abs().max())


def _agrees(got: float, want: float) -> bool:
    return abs(got - want) <= NOISE + 1e-3 * want  # another summation order moves the last digits only


def check_one_layer_no_pos(sub) -> str:
    gap = _gap(sub, 1, False)
    if gap > NOISE:
        raise fail(msg("near_zero", noise=f"{NOISE:g}"), f"{gap:.3g}", "order_gap(1, use_pos=False)")
    # 0.0 whatever the arguments is ≈ 0 too: the near-zero gap counts next to a clear one
    deeper, positioned = _gap(sub, 3, False), _gap(sub, 1, True)
    if max(deeper, positioned) < CLEAR:
        raise fail(
            msg("a_clear_one", clear=f"{CLEAR:g}"),
            f"order_gap(3, False) = {deeper:.3g}, order_gap(1, True) = {positioned:.3g}",
            msg("next_to", gap=f"{gap:.3g}"),
        )
    return msg("one_layer_ok", gap=f"{gap:.2e}")


def _differs_from_one_layer(sub, gap: float, call: str) -> None:
    """A clear gap counts once it differs from order_gap(1, False): a constant is clear everywhere."""
    plain = _gap(sub, 1, False)
    if abs(gap - plain) <= NOISE:
        raise fail(msg("differs_from_plain", plain=f"{plain:.3g}"), f"{gap:.3g}", call)


def check_three_layers_no_pos(sub) -> str:
    gap = _gap(sub, 3, False)
    if gap < CLEAR:
        raise fail(msg("clearly_above", clear=f"{CLEAR:g}"), f"{gap:.3g}", "order_gap(3, use_pos=False)")
    _differs_from_one_layer(sub, gap, "order_gap(3, use_pos=False)")
    return msg("three_layers_ok", gap=f"{gap:.3g}")


def check_with_positions(sub) -> str:
    gap = _gap(sub, 1, True)
    if gap < CLEAR:
        raise fail(msg("clearly_above_pos", clear=f"{CLEAR:g}"), f"{gap:.3g}", "order_gap(1, use_pos=True)")
    _differs_from_one_layer(sub, gap, "order_gap(1, use_pos=True)")
    return f"order_gap(1, True) = {gap:.3g}"


def check_from_model(sub) -> str:
    first = 1 + below(10**6)
    second = 1 + (first + below(10**6 - 1)) % 10**6  # never equal to `first`
    seeds = (0, first, second)
    values = [_gap(sub, 3, False, seed) for seed in seeds]
    again = _gap(sub, 3, False, 0)
    if again != values[0]:
        raise fail(
            msg("same_seed"),
            msg("then", first=f"{values[0]:.6g}", again=f"{again:.6g}"),
            msg("twice", call="order_gap(3, False, seed=0)"),
        )
    listed = ", ".join(f"{s} → {v:.6g}" for s, v in zip(seeds, values, strict=True))
    if len(set(values)) < 3:
        raise CheckFailed(msg("constant", listed=listed))
    for seed, got in zip(seeds, values, strict=True):
        want = _real_gap(3, False, seed)
        if not _agrees(got, want):
            raise fail(
                msg("real_gap", want=f"{want:.6g}"),
                f"{got:.6g}",
                msg("differs", call=_call(3, False, seed)),
            )
    return msg("from_model_ok", listed=listed)
