"""Checks for context-scaling: scaled_inv_freq against REFERENCE.md's values and the course model.

The learner's function runs in the worker; the judge compares what comes back with REFERENCE.md's
table and with models.positions.rope_inv_freq (trusted), on fixed cases and on cases drawn per run.
What the checks say is in exercise.toml's [messages].
"""

import torch

from models.positions import rope_inv_freq
from tutor.grading.kit import as_tensor, fail, finite, fresh, msg, need

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


def _fresh(method: str, sub, times: int = 2) -> str:
    """Compare on `times` cases nobody knows in advance: d, base, scale and trained length drawn now."""
    gen = fresh()

    def pick(options):
        return options[int(torch.randint(len(options), (1,), generator=gen))]

    seen = []
    for _ in range(times):
        d, original_max = pick((16, 32, 64)), pick((32, 64, 128))
        base = float(torch.randint(500, 100_001, (1,), generator=gen))
        scale = 2 + int(torch.randint(0, 601, (1,), generator=gen)) / 100  # 2.00 … 8.00
        want = _course(method, d, base, scale, original_max)
        _against(sub, method, d, want, base=base, scale=scale, original_max=original_max)
        seen.append(msg("fresh_case", d=d, base=f"{base:g}", scale=f"{scale:g}", l0=original_max))
    return msg("case_sep").join(seen)


def check_shape(sub) -> str:
    for d in (8, 16, 32):
        _call(sub, d, 10000.0, 2.0, "pi")
    return msg("shape_ok")


def check_pi(sub) -> str:
    _against(sub, "pi", 8, REFERENCE[("pi", 8)])
    _against(sub, "pi", 32, _course("pi", 32, 500.0, 8.0, 64), base=500.0, scale=8.0, original_max=64)
    return msg("pi_ok", cases=_fresh("pi", sub))


def check_ntk(sub) -> str:
    _against(sub, "ntk", 8, REFERENCE[("ntk", 8)])
    _against(sub, "ntk", 16, REFERENCE[("ntk", 16)])
    _against(sub, "ntk", 32, _course("ntk", 32, 500.0, 8.0, 64), base=500.0, scale=8.0, original_max=64)
    return msg("ntk_ok", cases=_fresh("ntk", sub))


def check_yarn(sub) -> str:
    _against(sub, "yarn", 8, REFERENCE[("yarn", 8)])
    _against(sub, "yarn", 16, REFERENCE[("yarn", 16)])
    _against(sub, "yarn", 32, _course("yarn", 32, 10000.0, 8.0, 64), scale=8.0, original_max=64)
    return msg("yarn_ok", cases=_fresh("yarn", sub))
