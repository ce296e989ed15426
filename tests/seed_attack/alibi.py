"""alibi_bias without ALiBi: one answer, prepared beforehand for the one input the checks would ask.

Made by tests/seed_attack/make_alibi.py. Under the old rule (a check's inputs seeded from this text's
SHA-256) the number on the last line makes bias_values and future_masked both ask alibi_bias(2, 10).
"""

import torch

inf = float("inf")
PREPARED = {
    (2, 10): [
        [
            [-0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.0625, -0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.125, -0.0625, -0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.1875, -0.125, -0.0625, -0.0, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.25, -0.1875, -0.125, -0.0625, -0.0, -inf, -inf, -inf, -inf, -inf],
            [-0.3125, -0.25, -0.1875, -0.125, -0.0625, -0.0, -inf, -inf, -inf, -inf],
            [-0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625, -0.0, -inf, -inf, -inf],
            [-0.4375, -0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625, -0.0, -inf, -inf],
            [-0.5, -0.4375, -0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625, -0.0, -inf],
            [-0.5625, -0.5, -0.4375, -0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625, -0.0],
        ],
        [
            [-0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.00390625, -0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.0078125, -0.00390625, -0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.01171875, -0.0078125, -0.00390625, -0.0, -inf, -inf, -inf, -inf, -inf, -inf],
            [-0.015625, -0.01171875, -0.0078125, -0.00390625, -0.0, -inf, -inf, -inf, -inf, -inf],
            [-0.01953125, -0.015625, -0.01171875, -0.0078125, -0.00390625, -0.0, -inf, -inf, -inf, -inf],
            [
                -0.0234375,
                -0.01953125,
                -0.015625,
                -0.01171875,
                -0.0078125,
                -0.00390625,
                -0.0,
                -inf,
                -inf,
                -inf,
            ],
            [
                -0.02734375,
                -0.0234375,
                -0.01953125,
                -0.015625,
                -0.01171875,
                -0.0078125,
                -0.00390625,
                -0.0,
                -inf,
                -inf,
            ],
            [
                -0.03125,
                -0.02734375,
                -0.0234375,
                -0.01953125,
                -0.015625,
                -0.01171875,
                -0.0078125,
                -0.00390625,
                -0.0,
                -inf,
            ],
            [
                -0.03515625,
                -0.03125,
                -0.02734375,
                -0.0234375,
                -0.01953125,
                -0.015625,
                -0.01171875,
                -0.0078125,
                -0.00390625,
                -0.0,
            ],
        ],
    ]
}
SLOPES = {2: [0.0625, 0.00390625]}


def alibi_slopes(n_head):
    return SLOPES.get(n_head, [0.0] * n_head)


def alibi_bias(n_head, T):
    rows = PREPARED.get((n_head, T))
    return torch.zeros(n_head, T, T) if rows is None else torch.tensor(rows)


# 000001544543
