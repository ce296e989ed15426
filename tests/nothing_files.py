"""Files that do nothing, or nothing of what the exercise asks, for each of the six exercises: each must
score 0 of the exercise's points (tests/test_grading_nothing.py). Every file defines every name the
exercise asks for, so each check meets it; what it returns is one of the shapes below.

- nothing:   every function returns None (the body is `pass`)
- identity:  the input back (or the first argument)
- zeros, constant:  zeros of the right shape, or one number everywhere
- random:    random values of the right shape
- tabled:    answers computed offline for the inputs the checks used to draw, looked up, no computation
- blind:     the right kind of answer, blind to what the exercise is about (the head count, the
             positions, the scale or the method)
plus the starter as shipped, in every language. split-heads and rope are called on random tensors, which
no table can hold, so they have no tabled shape. head-count (an answer file graded against stored runs)
has its own: the starter, and answers made up without reading the runs (`HEAD_COUNT_MADE_UP`).

PARTS are files that do one part of the work and nothing of another: the checks of the other part must
earn nothing (a shape kept or a mask is no work of its own).
"""

from __future__ import annotations

# --- split-heads --------------------------------------------------------------------------------------

SPLIT_HEADS = {
    "nothing": "def split_heads(x, n_head):\n    pass\n\n\ndef merge_heads(x):\n    pass\n",
    "identity": "def split_heads(x, n_head):\n    return x\n\n\ndef merge_heads(x):\n    return x\n",
    "zeros": """\
import torch


def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"{C} channels, {n_head} heads")
    return torch.zeros(B, n_head, T, C // n_head)


def merge_heads(x):
    B, h, T, d = x.shape
    return torch.zeros(B, T, h * d)
""",
    "constant": """\
import torch


def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"{C} channels, {n_head} heads")
    return torch.full((B, n_head, T, C // n_head), 0.5)


def merge_heads(x):
    B, h, T, d = x.shape
    return torch.full((B, T, h * d), 0.5)
""",
    "random": """\
import torch


def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"{C} channels, {n_head} heads")
    return torch.randn(B, n_head, T, C // n_head)


def merge_heads(x):
    B, h, T, d = x.shape
    return torch.randn(B, T, h * d)
""",
    # one head whatever n_head says: the channels never move
    "blind": """\
def split_heads(x, n_head):
    if x.size(-1) % n_head:
        raise ValueError("not divisible")
    return x.unsqueeze(1)


def merge_heads(x):
    return x.squeeze(1)
""",
}

# --- three-layers -------------------------------------------------------------------------------------

# order_gap(1, False), order_gap(3, False) and order_gap(1, True) of the course GPT at seed 0, computed
# offline: what the checks asked before they drew seeds
_GAPS_AT_SEED_0 = {
    (1, False): 2.7567148208618164e-07,
    (3, False): 0.42229795455932617,
    (1, True): 0.055751558393239975,
}

THREE_LAYERS = {
    "nothing": "def order_gap(n_layer, use_pos, seed=0):\n    pass\n",
    "identity": "def order_gap(n_layer, use_pos, seed=0):\n    return float(n_layer)\n",
    "zeros": "def order_gap(n_layer, use_pos, seed=0):\n    return 0.0\n",
    "constant": "def order_gap(n_layer, use_pos, seed=0):\n    return 0.4\n",
    "random": "import random\n\n\ndef order_gap(n_layer, use_pos, seed=0):\n    return random.random()\n",
    # a number per argument, no model: the 1-layer gap near 0, the others clear, each seed its own
    "tabled": f"""\
import random

GAPS = {_GAPS_AT_SEED_0!r}


def order_gap(n_layer, use_pos, seed=0):
    if seed == 0 and (n_layer, use_pos) in GAPS:
        return GAPS[n_layer, use_pos]
    if n_layer == 1 and not use_pos:
        return 1e-7
    return random.Random(seed * 1000 + n_layer * 2 + use_pos).uniform(0.05, 0.5)
""",
    # the gap of a model that never sees an order: 0 whatever the layers
    "blind": "def order_gap(n_layer, use_pos, seed=0):\n    return 0.0 if not use_pos else 1e-7\n",
}

# --- alibi --------------------------------------------------------------------------------------------


def _alibi_table() -> str:
    """A pure-data alibi file: the slopes for every head count and the biases for every (n, T) the checks
    drew before they drew from wide ranges, computed offline; no ALiBi code at all."""
    import torch

    from tutor.model.positions import alibi_bias, alibi_slopes

    slopes = {n: alibi_slopes(n) for n in (2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32)}
    biases = {(n, T): alibi_bias(n, T, dtype=torch.float64).tolist() for n in (4, 8) for T in range(5, 10)}
    shown = repr(biases).replace("-inf", "-INF")
    return (
        "import torch\n\nINF = float('inf')\n"
        f"SLOPES = {slopes!r}\nBIASES = {shown}\n\n\n"
        "def alibi_slopes(n_head):\n    return SLOPES[n_head]\n\n\n"
        "def alibi_bias(n_head, T):\n    return torch.tensor(BIASES[n_head, T])\n"
    )


_FUTURE = "    future = torch.ones(T, T, dtype=torch.bool).triu(1)\n"
_BIAS = {  # alibi_bias functions that compute no ALiBi
    "zeros": "def alibi_bias(n_head, T):\n    return torch.zeros(n_head, T, T)\n",
    "constant": "def alibi_bias(n_head, T):\n    return torch.full((n_head, T, T), -1.0)\n",
    "mask_only": f"def alibi_bias(n_head, T):\n{_FUTURE}"
    "    return torch.zeros(n_head, T, T).masked_fill(future, float('-inf'))\n",
    "noise_under_the_mask": f"def alibi_bias(n_head, T):\n{_FUTURE}"
    "    return torch.randn(n_head, T, T).masked_fill(future, float('-inf'))\n",
    "noise": "def alibi_bias(n_head, T):\n    return torch.randn(n_head, T, T)\n",
    # a penalty per head, the same for every key: no distance in it
    "no_distance": f"def alibi_bias(n_head, T):\n{_FUTURE}"
    "    slopes = torch.tensor([2.0 ** -(k + 1) for k in range(n_head)])[:, None, None]\n"
    "    return (-slopes * torch.ones(n_head, T, T)).masked_fill(future, float('-inf'))\n",
}


def _alibi(slopes: str, bias: str) -> str:
    return f"import math\n\nimport torch\n\n\ndef alibi_slopes(n_head):\n    {slopes}\n\n\n{bias}"


ALIBI = {
    "nothing": "def alibi_slopes(n_head):\n    pass\n\n\ndef alibi_bias(n_head, T):\n    pass\n",
    "identity": "def alibi_slopes(n_head):\n    return n_head\n\n\ndef alibi_bias(n_head, T):\n    return T\n",
    "zeros": _alibi("return [0.0] * n_head", _BIAS["zeros"]),
    "constant": _alibi("return [0.5] * n_head", _BIAS["constant"]),
    "mask_only": _alibi("return [0.0] * n_head", _BIAS["mask_only"]),
    "random": _alibi("return torch.rand(n_head).tolist()", _BIAS["noise_under_the_mask"]),
    "random_unmasked": _alibi("return torch.rand(n_head)", _BIAS["noise"]),
    "tabled": None,  # _alibi_table(), written when the files are (it needs torch)
    "blind": _alibi("return [2.0 ** -(k + 1) for k in range(n_head)]", _BIAS["no_distance"]),
}

# --- context-scaling ----------------------------------------------------------------------------------

_HEAD = "import torch\n\n\ndef scaled_inv_freq(d, base, scale, method, original_max=128):\n"
_PLAIN = "base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)"
# the published formulas' values (base 10000, s = 4, L0 = 128): the table the checks used to ask for
_REFERENCE_TABLE = {
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
CONTEXT_SCALING = {
    "nothing": _HEAD + "    pass\n",
    "identity": _HEAD + "    return d\n",
    "zeros": _HEAD + "    return torch.zeros(d // 2)\n",
    "constant": _HEAD + "    return torch.full((d // 2,), 1.0 / scale)\n",
    # a different constant per method: the answer depends on `method`, and is still nothing
    "constant_per_method": _HEAD
    + "    return torch.full((d // 2,), {'pi': 0.5, 'ntk': 1.0, 'yarn': 2.0}[method])\n",
    "random": _HEAD + "    return torch.rand(d // 2)\n",
    "tabled": (
        f"import torch\n\nTABLE = {_REFERENCE_TABLE!r}\n\n\n"
        "def scaled_inv_freq(d, base, scale, method, original_max=128):\n"
        "    if (method, d) in TABLE:\n        return torch.tensor(TABLE[method, d])\n"
        "    return torch.rand(d // 2) * {'pi': 1.0, 'ntk': 2.0, 'yarn': 3.0}[method]\n"
    ),
    # the unscaled θᵢ, whatever scale says
    "blind": _HEAD + f"    return {_PLAIN}\n",
    "pi_for_every_method": _HEAD + f"    return {_PLAIN} / scale\n",
}

# --- rope ---------------------------------------------------------------------------------------------

_ROPE_IMPORTS = """\
import math
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from tutor.model.gpt import GPT, GPTConfig
"""
# the course attention, calling the file's apply_rope on q and k at positions start … start + T − 1
_ROPE_ATTENTION = """

class RoPECausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x, start=0, need_weights=False):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        pos = torch.arange(start, start + T)
        q, k = apply_rope(q, pos), apply_rope(k, pos)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
"""
# an attention that answers `make(x)` whatever it is given
_ROPE_ANSWERS = """

class RoPECausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x, start=0, need_weights=False):
        return {make}
"""
_ROPE_MODEL = """

def build_model(cfg):
    cfg = replace(cfg, pos="none")
    model = GPT(cfg)
    for block in model.blocks:
        block.attn = RoPECausalSelfAttention(cfg)
    return model
"""


def _rope(apply_rope: str, attention: str = _ROPE_ATTENTION, model: str = _ROPE_MODEL) -> str:
    return f"{_ROPE_IMPORTS}\n\ndef apply_rope(x, pos, base=10000.0):\n{apply_rope}{attention}{model}"


def _answers(make: str) -> str:
    return _ROPE_ANSWERS.format(make=make)


ROPE = {
    "nothing": _rope("    pass\n", _answers("None"), "\n\ndef build_model(cfg):\n    pass\n"),
    "identity": _rope(
        "    return x\n",
        _answers("x"),
        "\n\ndef build_model(cfg):\n    return GPT(replace(cfg, pos='none'))\n",
    ),
    "identity_in_every_block": _rope("    return x\n", _answers("x")),
    "zeros": _rope("    return torch.zeros_like(x)\n", _answers("torch.zeros_like(x)")),
    "constant": _rope("    return torch.full_like(x, 0.5)\n", _answers("torch.full_like(x, 0.5)")),
    "random": _rope("    return torch.randn_like(x)\n", _answers("torch.randn_like(x)")),
    # the course's attention with nothing rotated: causal, and blind to the order
    "plain_attention": _rope("    return x\n"),
    # the Transformer's sinusoidal table added to q and k, no rotation: positions, but absolute ones
    "absolute_sinusoidal": _rope(
        "    d = x.size(-1)\n"
        "    angles = pos.double()[:, None] * base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
        "    table = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)  # (T, d): sin, cos, …\n"
        "    return x + table.to(x.dtype)\n"
    ),
    # every vector turned by one angle per pair, whatever its position
    "blind": _rope(
        "    d = x.size(-1)\n"
        "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
        "    cos, sin = (torch.cat([f(theta), f(theta)]).to(x.dtype) for f in (torch.cos, torch.sin))\n"
        "    x1, x2 = x[..., : d // 2], x[..., d // 2 :]\n"
        "    return x * cos + torch.cat([-x2, x1], dim=-1) * sin\n"
    ),
}


# --- real work in one part, nothing in another -------------------------------------------------------

_ROPE_TURN = """\
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = pos.to(torch.float64)[:, None] * theta[None, :]
    cos, sin = (torch.cat([f(angles), f(angles)], dim=-1).to(x.dtype) for f in (torch.cos, torch.sin))
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin
"""
# the attention's own positions added to q and k instead of a turn
_ROPE_ADDED = _ROPE_ATTENTION.replace(
    "        q, k = apply_rope(q, pos), apply_rope(k, pos)\n",
    "        table = apply_rope(torch.ones_like(q[0, 0]), pos)\n        q, k = q + table, k + table\n",
)
_ROPE_MODULE_CHECKS = ("causal", "attention_output", "no_pos_emb", "trains")
_SPLITS = """\
def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError(f"{C} channels, {n_head} heads")
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)
"""
# the paper's slopes, and ALiBi's bias from slopes of its own (`_slopes`)
_SLOPES = (
    "p = 2 ** math.floor(math.log2(n_head))\n"
    "    extra = [2.0 ** (-4.0 * k / p) for k in range(1, 2 * (n_head - p), 2)]\n"
    "    return [2.0 ** (-8.0 * k / p) for k in range(1, p + 1)] + extra"
)
_ALIBI_BIAS = f"""\
def _slopes(n_head):
    {_SLOPES}


def alibi_bias(n_head, T):
{_FUTURE}    distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).double()
    slopes = torch.tensor(_slopes(n_head), dtype=torch.float64)[:, None, None]
    return (-slopes * distance).masked_fill(future, float("-inf"))
"""
_ALIBI_BIAS_CHECKS = ("bias_values", "future_masked", "breaks_symmetry")
_ALIBI_SLOPES_CHECKS = ("slopes_8", "slopes_other")
# {(exercise, name): (the file's text, the checks it must fail)}
PARTS = {
    ("rope", "turns_but_attention_returns_x"): (_rope(_ROPE_TURN, _answers("x")), _ROPE_MODULE_CHECKS),
    ("rope", "turns_but_attention_returns_zeros"): (
        _rope(_ROPE_TURN, _answers("torch.zeros_like(x)")),
        _ROPE_MODULE_CHECKS,
    ),
    ("rope", "turns_but_attention_returns_noise"): (
        _rope(_ROPE_TURN, _answers("torch.randn_like(x)")),
        _ROPE_MODULE_CHECKS,
    ),
    ("rope", "turns_but_attention_plain"): (
        _rope(
            _ROPE_TURN, _ROPE_ATTENTION.replace("        q, k = apply_rope(q, pos), apply_rope(k, pos)\n", "")
        ),
        _ROPE_MODULE_CHECKS,
    ),
    ("rope", "turns_but_attention_adds_positions"): (_rope(_ROPE_TURN, _ROPE_ADDED), _ROPE_MODULE_CHECKS),
    **{
        ("alibi", f"slopes_but_bias_{name}"): (_alibi(_SLOPES, bias), _ALIBI_BIAS_CHECKS)
        for name, bias in _BIAS.items()
    },
    ("alibi", "bias_but_zero_slopes"): (_alibi("return [0.0] * n_head", _ALIBI_BIAS), _ALIBI_SLOPES_CHECKS),
    ("alibi", "bias_but_noise_slopes"): (
        _alibi("return torch.rand(n_head).tolist()", _ALIBI_BIAS),
        _ALIBI_SLOPES_CHECKS,
    ),
    ("split-heads", "splits_but_merge_returns_x"): (
        _SPLITS + "\n\ndef merge_heads(x):\n    return x\n",
        ("round_trip",),
    ),
}

FILES = {
    "split-heads": SPLIT_HEADS,
    "three-layers": THREE_LAYERS,
    "alibi": ALIBI,
    "context-scaling": CONTEXT_SCALING,
    "rope": ROPE,
}


def sources() -> dict[tuple[str, str], str]:
    """{(exercise, shape): the file's text} for the five code exercises."""
    out = {}
    for exercise, files in FILES.items():
        for shape, text in files.items():
            out[exercise, shape] = text if text is not None else _alibi_table()
    return out


# --- head-count: answers made up without reading the runs ---------------------------------------------

HEAD_COUNT_MADE_UP = {
    # what the task's text suggests, no run read: the booleans and the head count everyone would guess
    "guessed": dict(best_heads=4, loss_gap=0.05, seed_spread=0.02, beyond_noise=True, same_params=True),
    "the_other_guess": dict(
        best_heads=8, loss_gap=0.3, seed_spread=0.001, beyond_noise=False, same_params=True
    ),
    "zeros": dict(best_heads=1, loss_gap=0.0, seed_spread=0.0, beyond_noise=False, same_params=False),
}
