"""Checks for context-scaling: scaled_inv_freq against the published formulas' table and against the course's
own tutor.model.positions.rope_inv_freq, on fixed cases and on cases drawn per run (d, base, scale and the
trained length, from ranges no table covers). Every check first asks for all three methods on one case
drawn now (`_scales`): the unscaled θᵢ, or one answer whatever `method` says, earns nothing; the shape
counts once one method's values are right on a case drawn now."""

import random

import torch

from tutor.grading.kit import CheckFailed, LearnerError, expect, msg
from tutor.model.positions import rope_inv_freq

METHODS = ("pi", "ntk", "yarn")
REL = 1e-5  # a float32 answer is exact to ~1e-7 relative; a wrong formula is off by far more

# the formulas of Chen et al. 2023 (PI), bloc97 2023 (NTK-aware) and Peng et al. 2023 (YaRN): base 10000, s = 4, L0 = 128
REFERENCE = {
    ("pi", 8): [0.25, 0.025, 0.0025, 0.00025],
    ("ntk", 8): [1, 0.062996052, 0.0039685026, 0.00025],
    ("yarn", 8): [1, 0.0625, 0.0025, 0.00025],
    ("ntk", 16): [
        1,
        0.25941282,
        0.06729501,
        0.017457188,
        0.0045286183,
        0.0011747816,
        0.00030475341,
        7.9056942e-05,
    ],
    ("yarn", 16): [1, 0.23717082, 0.05, 0.0079056942, 0.0025, 0.00079056942, 0.00025, 7.9056942e-05],
}


def _freqs(learner, method: str, d: int, base=10000.0, scale=4.0, original_max=128) -> torch.Tensor:
    """The learner's θ' as float64: one per pair."""
    got = learner.scaled_inv_freq(d, base, scale, method, original_max=original_max)
    got = torch.as_tensor(got, dtype=torch.float64)
    expect(got.shape, (d // 2,))
    return got


def _against(learner, method: str, d: int, base=10000.0, scale=4.0, original_max=128, want=None) -> None:
    """The learner's θ' for one case against `want`, by default the course's own; a failure names the
    learner's value and the method's rule, never `want` (the answer to the learner's own call)."""
    if want is None:
        want = rope_inv_freq(d, base, method, scale, original_max)[0]
    got = _freqs(learner, method, d, base, scale, original_max)
    bad = ~((got - torch.as_tensor(want, dtype=torch.float64)).abs() <= REL * torch.as_tensor(want).abs())
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        call = f"scaled_inv_freq({d}, {base:g}, {scale:g}, {method!r}, original_max={original_max})"
        raise CheckFailed(
            msg("freq_off", call=call, i=i, got=f"{float(got[i]):.6g}", rule=msg(f"rule_{method}"))
        )


def _draw() -> tuple[int, float, float, int]:
    """(d, base, scale, original_max) nobody knows in advance."""
    d, base = random.choice((16, 32, 64)), float(random.randint(500, 100_000))
    return d, base, 2 + random.randint(0, 600) / 100, random.choice((32, 64, 128))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=REL, atol=0.0)


def _scales(learner) -> None:
    """Fail unless the answer scales something and depends on `method`, on one case drawn now. With
    s ≥ 2 each method changes θ (PI every pair, NTK and YaRN the slow ones) and no two agree (θ₀ is
    1/s for PI, 1 for NTK and YaRN, which differ in the middle pairs). A method that raises (not
    written yet) is left to its own check; the others are compared."""
    d, base, scale, original_max = case = _draw()
    got, raised = {}, None
    for method in METHODS:
        try:
            got[method] = _freqs(learner, method, *case)
        except LearnerError as err:
            raised = raised or err
    if not got:
        raise raised
    said = {
        "methods": ", ".join(map(repr, got)),
        "case": f"d={d}, base={base:g}, scale={scale:g}, original_max={original_max}",
    }
    plain = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    assert not all(_same(v, plain) for v in got.values()), msg("unscaled", **said)
    first = next(iter(got.values()))
    assert len(got) == 1 or not all(_same(v, first) for v in got.values()), msg("ignores_method", **said)


def _one_right(learner) -> None:
    """Fail unless at least one method gives the course's values on a case drawn now: d/2 numbers of
    any kind (noise, one per method) have the right shape too."""
    case = _draw()
    tried = []
    for method in METHODS:
        try:
            got = _freqs(learner, method, *case)
        except LearnerError:
            continue
        tried.append(method)
        if _same(got, rope_inv_freq(case[0], case[1], method, case[2], case[3])[0]):
            return
    d, base, scale, original_max = case
    said = f"d={d}, base={base:g}, scale={scale:g}, original_max={original_max}"
    raise CheckFailed(msg("none_right", methods=", ".join(map(repr, tried or METHODS)), case=said))


def check_shape(learner):
    _scales(learner)
    for d in (8, 16, 32):
        _freqs(learner, "pi", d, scale=2.0)
    _one_right(learner)


def _check(learner, method: str) -> None:
    """The published formulas' cases of `method`, one with another base and length, and two drawn now."""
    _scales(learner)
    for d in (8, 16):
        if (method, d) in REFERENCE:
            _against(learner, method, d, want=REFERENCE[method, d])
    _against(learner, method, 32, base=500.0 if method != "yarn" else 10000.0, scale=8.0, original_max=64)
    for _ in range(2):
        _against(learner, method, *_draw())


def check_pi(learner):
    _check(learner, "pi")


def check_ntk(learner):
    _check(learner, "ntk")


def check_yarn(learner):
    _check(learner, "yarn")
