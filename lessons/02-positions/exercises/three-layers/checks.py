"""Checks for three-layers: order_gap(n_layer, use_pos, seed) measured on the course GPT."""

import math

from tutor.grading.kit import CheckFailed, fail, need

NOISE = 1e-5  # float32 rounding of a permutation-invariant sum stays near 1e-7
CLEAR = 1e-3  # a real difference: at least 100 times the rounding noise


def _gap(sub, n_layer: int, use_pos: bool, seed: int = 0) -> float:
    value = need(sub, "order_gap")(n_layer, use_pos, seed)
    try:
        gap = float(value)
    except (TypeError, ValueError):
        raise fail(
            "a float", f"{type(value).__name__} {value!r:.60}", f"order_gap({n_layer}, {use_pos})"
        ) from None
    if not math.isfinite(gap) or gap < 0:
        raise fail("a finite max abs difference ≥ 0", repr(gap), f"order_gap({n_layer}, {use_pos})")
    return gap


def check_one_layer_no_pos(sub) -> str:
    gap = _gap(sub, 1, False)
    if gap > NOISE:
        raise fail(
            f"≈ 0 (below {NOISE:g}): one layer without positions sees the same set of characters",
            f"{gap:.3g}",
            "order_gap(1, use_pos=False)",
        )
    return f"order_gap(1, False) = {gap:.2e}: only rounding noise"


def check_three_layers_no_pos(sub) -> str:
    gap = _gap(sub, 3, False)
    if gap < CLEAR:
        raise fail(f"clearly above 0 (at least {CLEAR:g})", f"{gap:.3g}", "order_gap(3, use_pos=False)")
    return f"order_gap(3, False) = {gap:.3g}: the causal mask leaks the order from layer 2 on"


def check_with_positions(sub) -> str:
    gap = _gap(sub, 1, True)
    if gap < CLEAR:
        raise fail(
            f"clearly above 0 (at least {CLEAR:g}): with pos_emb even one layer sees the order",
            f"{gap:.3g}",
            "order_gap(1, use_pos=True)",
        )
    return f"order_gap(1, True) = {gap:.3g}"


def check_from_model(sub) -> str:
    values = [_gap(sub, 3, False, seed) for seed in (0, 1, 2)]
    again = _gap(sub, 3, False, 0)
    if again != values[0]:
        raise fail(
            "the same value for the same seed (seed torch before building the model)",
            f"{values[0]:.6g} then {again:.6g}",
        )
    if len(set(values)) < 3:
        raise CheckFailed(
            f"seeds 0, 1, 2 gave {', '.join(f'{v:.6g}' for v in values)}: a value computed from a freshly "
            "initialised model changes with the seed; a constant cannot"
        )
    return "seeds 0, 1, 2 give " + ", ".join(f"{v:.3g}" for v in values)
