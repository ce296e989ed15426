"""Checks for three-layers: order_gap(n_layer, use_pos, seed) measured on the course GPT.

The judge computes the same gap itself (`_real_gap`, the reference's computation with its own
models.gpt) on seeds drawn per run. A constant (0.0 included) earns nothing: the near-zero one-layer
gap counts next to a clear one, and each clear gap once it differs from the one-layer gap.
"""

import random
from functools import lru_cache

import torch

from models.tokenizer import course_tokenizer
from tutor.grading.kit import expect, expect_above, expect_below, expect_close, msg

NOISE = 1e-5  # float32 rounding of a permutation-invariant sum stays near 1e-7
CLEAR = 1e-3  # a real difference: at least 100 times the rounding noise
LINES = ("白日依山尽", "山依日白尽")  # the same five characters; both end in 尽


def _gap(learner, n_layer: int, use_pos: bool, seed: int = 0) -> float:
    return expect_above(learner.order_gap(n_layer, use_pos, seed), 0.0)  # a number, never negative


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


def check_one_layer_no_pos(learner):
    gap = expect_below(_gap(learner, 1, False), NOISE, "order_gap(1, False)")
    # 0.0 whatever the arguments is ≈ 0 too: the near-zero gap counts next to a clear one
    expect_above(max(_gap(learner, 3, False), _gap(learner, 1, True)), CLEAR, msg("a_clear_one"))
    return msg("one_layer_ok", gap=f"{gap:.2e}")


def _clear_gap(learner, n_layer: int, use_pos: bool) -> float:
    """A clear gap counts once it differs from order_gap(1, False): a constant is clear everywhere."""
    gap = expect_above(_gap(learner, n_layer, use_pos), CLEAR, f"order_gap({n_layer}, {use_pos})")
    plain = _gap(learner, 1, False)
    expect_above(abs(gap - plain), NOISE, msg("differs_from_plain", plain=f"{plain:.3g}"))
    return gap


def check_three_layers_no_pos(learner):
    return msg("three_layers_ok", gap=f"{_clear_gap(learner, 3, False):.3g}")


def check_with_positions(learner):
    return f"order_gap(1, True) = {_clear_gap(learner, 1, True):.3g}"


def check_from_model(learner):
    seeds = (0, *random.sample(range(1, 10**6), 2))
    gaps = [_gap(learner, 3, False, seed) for seed in seeds]
    expect(_gap(learner, 3, False, 0), gaps[0], msg("same_seed"))
    listed = ", ".join(f"{s} → {v:.6g}" for s, v in zip(seeds, gaps, strict=True))
    assert len(set(gaps)) == 3, msg("constant", listed=listed)
    for seed, gap in zip(seeds, gaps, strict=True):  # another summation order moves the last digits only
        expect_close(gap, _real_gap(3, False, seed), f"order_gap(3, False, seed={seed})", 1e-3, NOISE)
    return msg("from_model_ok", listed=listed)
