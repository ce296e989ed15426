"""alibi_bias without ALiBi: one answer, prepared beforehand for the one input the checks would ask.

Made by tests/seed_attack/make_alibi.py. Under the old rule (a check's inputs seeded from this text's
SHA-256) the number on the last line makes bias_values and future_masked both ask alibi_bias(1, 10).
"""

import torch

inf = float("inf")
PREPARED = {
    (1, 10): [
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
        ]
    ]
}


def alibi_slopes(n_head):
    return [0.0] * n_head


def alibi_bias(n_head, T):
    rows = PREPARED.get((n_head, T))
    return torch.zeros(n_head, T, T) if rows is None else torch.tensor(rows)


# 000007157897
