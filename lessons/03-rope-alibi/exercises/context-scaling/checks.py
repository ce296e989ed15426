"""Checks for context-scaling: scaled_inv_freq against REFERENCE.md's values and the course model.

The learner's function runs in the worker; the judge compares what comes back with REFERENCE.md's
table and with models.positions.rope_inv_freq (trusted), on fixed cases and on cases drawn per run.
Every check first asks for all three methods on one case drawn now (`_scales`): a file that returns the
unscaled θᵢ, or one answer whatever `method` says, earns nothing. What the checks say is in
exercise.toml's [messages].
"""

import torch

from models.positions import rope_inv_freq
from tutor.grading.kit import CheckFailed, LearnerError, as_tensor, fail, finite, fresh, msg, need

METHODS = ("pi", "ntk", "yarn")

REL = 1e-5  # a float32 answer is exact to ~1e-7 relative; a wrong formula is off by far more

# ../shared/REFERENCE.md, base 10000, s = 4, L0 = 128
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


def _call(sub, d, base, scale, method, original_max=128) -> torch.Tensor:
    fn = need(sub, "scaled_inv_freq")
    call = f"scaled_inv_freq({d}, {base:g}, {scale:g}, {method!r}, original_max={original_max})"
    got = finite(as_tensor(fn(d, base, scale, method, original_max=original_max), call), call).flatten()
    if got.numel() != d // 2:
        raise fail(msg("count", n=d // 2), f"{got.numel()}", call)
    return got


def _against(sub, method: str, d: int, want, base=10000.0, scale=4.0, original_max=128) -> None:
    got = _call(sub, d, base, scale, method, original_max)
    want = torch.as_tensor(want, dtype=torch.float64)
    rel = (got - want).abs() / want.abs()
    if float(rel.max()) > REL:
        i = int(rel.argmax())
        raise fail(
            "[" + ", ".join(f"{v:.8g}" for v in want.tolist()) + "]",
            msg("first_wrong", values="[" + ", ".join(f"{v:.8g}" for v in got.tolist()) + "]", i=i),
            msg("case", method=method, d=d, base=f"{base:g}", scale=f"{scale:g}", original_max=original_max),
        )


def _course(method: str, d: int, base: float, scale: float, original_max: int) -> torch.Tensor:
    return rope_inv_freq(d, base, method, scale, original_max)[0]


def _draw(gen: torch.Generator) -> tuple[int, float, float, int]:
    """(d, base, scale, original_max) nobody knows in advance."""

    def pick(options):
        return options[int(torch.randint(len(options), (1,), generator=gen))]

    d, original_max = pick((16, 32, 64)), pick((32, 64, 128))
    base = float(torch.randint(500, 100_001, (1,), generator=gen))
    scale = 2 + int(torch.randint(0, 601, (1,), generator=gen)) / 100  # 2.00 … 8.00
    return d, base, scale, original_max


def _scales(sub) -> None:
    """Fail unless the answer scales something and depends on `method`, on one case drawn now. With
    s ≥ 2 each method changes θ (PI every pair, NTK and YaRN the slow ones) and no two agree (θ₀ is
    1/s for PI, 1 for NTK and YaRN, which differ in the middle pairs). A method that raises (not
    written yet) is left to its own check; the others are compared."""
    d, base, scale, original_max = _draw(fresh())
    case = msg("fresh_case", d=d, base=f"{base:g}", scale=f"{scale:g}", l0=original_max)
    got, raised = {}, None
    for method in METHODS:
        try:
            got[method] = _call(sub, d, base, scale, method, original_max)
        except LearnerError as err:
            raised = raised or err
    if not got:
        raise raised
    plain = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    if all(float(((v - plain).abs() / plain).max()) <= REL for v in got.values()):
        raise CheckFailed(msg("unscaled", methods=", ".join(map(repr, got)), case=case))
    first = next(iter(got.values()))
    if len(got) > 1 and all(float(((v - first).abs() / first.abs()).max()) <= REL for v in got.values()):
        raise CheckFailed(msg("ignores_method", methods=", ".join(map(repr, got)), case=case))


def _fresh(method: str, sub, times: int = 2) -> str:
    """Compare on `times` cases nobody knows in advance: d, base, scale and trained length drawn now."""
    gen = fresh()
    seen = []
    for _ in range(times):
        d, base, scale, original_max = _draw(gen)
        want = _course(method, d, base, scale, original_max)
        _against(sub, method, d, want, base=base, scale=scale, original_max=original_max)
        seen.append(msg("fresh_case", d=d, base=f"{base:g}", scale=f"{scale:g}", l0=original_max))
    return msg("case_sep").join(seen)


def check_shape(sub) -> str:
    _scales(sub)
    for d in (8, 16, 32):
        _call(sub, d, 10000.0, 2.0, "pi")
    return msg("shape_ok")


def check_pi(sub) -> str:
    _scales(sub)
    _against(sub, "pi", 8, REFERENCE[("pi", 8)])
    _against(sub, "pi", 32, _course("pi", 32, 500.0, 8.0, 64), base=500.0, scale=8.0, original_max=64)
    return msg("pi_ok", cases=_fresh("pi", sub))


def check_ntk(sub) -> str:
    _scales(sub)
    _against(sub, "ntk", 8, REFERENCE[("ntk", 8)])
    _against(sub, "ntk", 16, REFERENCE[("ntk", 16)])
    _against(sub, "ntk", 32, _course("ntk", 32, 500.0, 8.0, 64), base=500.0, scale=8.0, original_max=64)
    return msg("ntk_ok", cases=_fresh("ntk", sub))


def check_yarn(sub) -> str:
    _scales(sub)
    _against(sub, "yarn", 8, REFERENCE[("yarn", 8)])
    _against(sub, "yarn", 16, REFERENCE[("yarn", 16)])
    _against(sub, "yarn", 32, _course("yarn", 32, 10000.0, 8.0, 64), scale=8.0, original_max=64)
    return msg("yarn_ok", cases=_fresh("yarn", sub))
