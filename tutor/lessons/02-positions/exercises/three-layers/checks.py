"""Checks for three-layers: order_gap(n_layer, use_pos, seed) measured on the course GPT.

The judge computes the same gap itself (`_real_gap`, the reference's computation with its own
tutor.model.gpt) and every check compares the learner's numbers with it, on seeds drawn per run from a
million (and 2 to 4 layers where the check says "a real gap"): no table of numbers, constant or noise
earns anything. from_model comes first: the numbers must come from the seeded model at all; the other
checks then ask whether n_layer and use_pos reach it.
"""

import random
from functools import lru_cache

import torch

from tutor.grading.kit import CheckFailed, expect, expect_above, expect_below, msg
from tutor.model.tokenizer import course_tokenizer

NOISE = 1e-5  # float32 rounding of a permutation-invariant sum stays near 1e-7
REL = 1e-3  # another summation order moves the last digits only
SEEDS = range(10**6)
LINES = ("白日依山尽", "山依日白尽")  # the same five characters; both end in 尽


def _gap(learner, n_layer: int, use_pos: bool, seed: int) -> float:
    return expect_above(learner.order_gap(n_layer, use_pos, seed), 0.0)  # a number, never negative


def _gaps(learner, calls: list[tuple[int, bool, int]]) -> list[tuple[float, float]]:
    """(the learner's gap, the course GPT's) for each (n_layer, use_pos, seed): the judge builds its
    model while the worker builds the learner's."""
    both = []
    for n_layer, use_pos, seed in calls:
        answer = learner.order_gap.later(n_layer, use_pos, seed)
        want = _real_gap(n_layer, use_pos, seed)
        both.append((expect_above(answer(), 0.0), want))
    return both


@lru_cache(maxsize=16)
def _real_gap(n_layer: int, use_pos: bool, seed: int) -> float:
    """The reference's computation, in the judge: the max abs difference of the last logits."""
    from tutor.model import GPT, GPTConfig

    tok = course_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=n_layer, pos="learned" if use_pos else "none")
        model = GPT(cfg).eval()
    a, b = (torch.tensor([tok.encode(line)]) for line in LINES)
    with torch.no_grad():
        return float((model(a)[0][0, -1] - model(b)[0][0, -1]).abs().max())


def _agrees(gap: float, want: float, where: str) -> None:
    """Fail unless `gap` is the course GPT's gap `want` (to summation order); the message names the
    learner's value and what it is not, never `want` (the answer to the learner's own call)."""
    if abs(gap - want) > REL * abs(want) + NOISE:
        raise CheckFailed(msg("not_the_gap", where=where, got=f"{gap:.6g}"))


def _measured(learner, n_layer: int, use_pos: bool, seed: int, where: str | None = None) -> float:
    """order_gap(n_layer, use_pos, seed), which must be the course GPT's own gap for those arguments."""
    where = where or f"order_gap({n_layer}, {use_pos}, seed={seed})"
    [(gap, want)] = _gaps(learner, [(n_layer, use_pos, seed)])
    _agrees(gap, want, where)
    return gap


def check_from_model(learner):
    seeds = random.sample(SEEDS, 2)
    both = _gaps(learner, [(3, False, seed) for seed in seeds])
    listed = ", ".join(f"{s} → {gap:.6g}" for s, (gap, _) in zip(seeds, both, strict=True))
    assert both[0][0] != both[1][0], msg("constant", listed=listed)
    for seed, (gap, want) in zip(seeds, both, strict=True):
        # the model built after manual_seed(seed); whether use_pos reaches it is the other checks' question
        if abs(gap - want) > REL * want + NOISE:
            # not the gap: a model left unseeded gives another value each call, which is what to say then
            expect(_gap(learner, 3, False, seed), gap, msg("same_seed", seed=seed))
            want = min(want, _real_gap(3, True, seed), key=lambda w: abs(w - gap))
        _agrees(gap, want, f"order_gap(3, False, seed={seed})")
    return msg("from_model_ok", listed=listed)


def check_one_layer_no_pos(learner):
    seed = random.choice(SEEDS)
    gap = expect_below(_gap(learner, 1, False, seed), NOISE, f"order_gap(1, False, seed={seed})")
    # 0.0 whatever the arguments is ≈ 0 too: the near-zero gap counts next to a real one, measured now
    n = random.randint(2, 4)
    _measured(learner, n, False, seed, msg("a_real_one", n=n, seed=seed))
    return msg("one_layer_ok", gap=f"{gap:.2e}")


def check_three_layers_no_pos(learner):
    gap = _measured(learner, 3, False, random.choice(SEEDS))
    return msg("three_layers_ok", gap=f"{gap:.3g}")


def check_with_positions(learner):
    seed = random.choice(SEEDS)
    return f"order_gap(1, True, seed={seed}) = {_measured(learner, 1, True, seed):.3g}"
