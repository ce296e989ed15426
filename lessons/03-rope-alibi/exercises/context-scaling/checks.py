"""Checks for context-scaling: scaled_inv_freq against REFERENCE.md's values and the course model."""

import torch

from models.positions import rope_inv_freq
from tutor.grading.kit import as_tensor, fail, need

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
    got = as_tensor(fn(d, base, scale, method, original_max=original_max), call).flatten()
    if got.numel() != d // 2:
        raise fail(f"{d // 2} inverse frequencies (one per pair)", f"{got.numel()}", call)
    return got


def _against(sub, method: str, d: int, want, base=10000.0, scale=4.0, original_max=128) -> None:
    got = _call(sub, d, base, scale, method, original_max)
    want = torch.as_tensor(want, dtype=torch.float64)
    rel = ((got - want).abs() / want.abs()).max()
    if float(rel) > 1e-6:
        i = int(((got - want).abs() / want.abs()).argmax())
        raise fail(
            "[" + ", ".join(f"{v:.8g}" for v in want.tolist()) + "]",
            "[" + ", ".join(f"{v:.8g}" for v in got.tolist()) + f"] (first wrong at pair {i})",
            f"{method}, d = {d}, base {base:g}, scale {scale:g}, original_max {original_max}",
        )


def _course(method: str, d: int, base: float, scale: float, original_max: int) -> torch.Tensor:
    return rope_inv_freq(d, base, method, scale, original_max)[0]


def check_shape(sub) -> str:
    for d in (8, 16, 32):
        _call(sub, d, 10000.0, 2.0, "pi")
    return "d/2 inverse frequencies for d = 8, 16, 32"


def check_pi(sub) -> str:
    _against(sub, "pi", 8, REFERENCE[("pi", 8)])
    _against(sub, "pi", 32, _course("pi", 32, 500.0, 8.0, 64), base=500.0, scale=8.0, original_max=64)
    return "PI divides every θᵢ by s"


def check_ntk(sub) -> str:
    _against(sub, "ntk", 8, REFERENCE[("ntk", 8)])
    _against(sub, "ntk", 16, REFERENCE[("ntk", 16)])
    _against(sub, "ntk", 32, _course("ntk", 32, 500.0, 8.0, 64), base=500.0, scale=8.0, original_max=64)
    return "NTK-aware: base' = base·s^(d/(d−2)); θ₀ unchanged, the slowest pair as PI"


def check_yarn(sub) -> str:
    _against(sub, "yarn", 8, REFERENCE[("yarn", 8)])
    _against(sub, "yarn", 16, REFERENCE[("yarn", 16)])
    _against(sub, "yarn", 32, _course("yarn", 32, 10000.0, 8.0, 64), scale=8.0, original_max=64)
    return "YaRN: fast pairs kept, slow pairs interpolated, a linear ramp between"
