"""Makes tests/seed_attack/alibi.py: an ALiBi file that implements nothing, yet passed bias_values and
future_masked while a check's inputs came from the file's own SHA-256 (the rule before issue 40).

The file holds one answer, alibi_bias(2, 10), and the slopes of 2 heads (the bias checks compare the bias
with the file's own slopes), prepared with the reference solution, and a number in its last line. This
script tries numbers until, under that rule, both checks draw exactly (2, 10): about 2457² ≈ 6 million
tries, half a minute. Run it from the repository's root:

    python tests/seed_attack/make_alibi.py
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHECKS = ("bias_values", "future_masked")  # each draws n, T = randint(2, 64), randint(10, 48) first
PREPARED = (2, 10)

HEAD = '''"""alibi_bias without ALiBi: one answer, prepared beforehand for the one input the checks would ask.

Made by tests/seed_attack/make_alibi.py. Under the old rule (a check's inputs seeded from this text's
SHA-256) the number on the last line makes bias_values and future_masked both ask alibi_bias(2, 10).
"""

import torch

inf = float("inf")
PREPARED = {ANSWERS}
SLOPES = {SLOPES}


def alibi_slopes(n_head):
    return SLOPES.get(n_head, [0.0] * n_head)


def alibi_bias(n_head, T):
    rows = PREPARED.get((n_head, T))
    return torch.zeros(n_head, T, T) if rows is None else torch.tensor(rows)


# '''


def drawn(seed: str, check: str) -> tuple[int, int]:
    """The (n, T) a bias check draws first under `seed` (tutor.grading.kit.seeded: Python's `random`
    seeded from digits 15-30 of sha256(f"{seed}:{check}"))."""
    draw = random.Random(int(hashlib.sha256(f"{seed}:{check}".encode()).hexdigest()[15:30], 16))
    return draw.randint(2, 64), draw.randint(10, 48)


def _answers() -> tuple[str, str]:
    sys.path.insert(0, str(ROOT / "tutor/lessons/03-rope-alibi/exercises/alibi"))
    from solution import alibi_bias, alibi_slopes  # type: ignore[import-not-found]

    # the list's -inf reads back as -inf: the file defines `inf`
    bias = "{" + f"{PREPARED}: {alibi_bias(*PREPARED).tolist()!r}" + "}"
    slopes = "{" + f"{PREPARED[0]}: {[float(s) for s in alibi_slopes(PREPARED[0])]!r}" + "}"
    return bias, slopes


def main() -> None:
    bias, slopes = _answers()
    head = HEAD.replace("{ANSWERS}", bias).replace("{SLOPES}", slopes)
    probe = HERE / "alibi.py"
    probe.write_text(head + "0" * 12 + "\n", encoding="utf-8")
    subprocess.run(["ruff", "format", "-q", str(probe)], check=True)  # the nonce's line stays as it is
    head = probe.read_text(encoding="utf-8").removesuffix("0" * 12 + "\n")
    prefix = hashlib.sha256(head.encode())
    for nonce in range(10**12):
        text = f"{nonce:012d}\n".encode()
        h = prefix.copy()
        h.update(text)
        seed = h.hexdigest()[:16]
        if all(drawn(seed, check) == PREPARED for check in CHECKS):
            probe.write_text(head + text.decode(), encoding="utf-8")
            print(f"nonce {nonce}: seed {seed}")
            return


if __name__ == "__main__":
    main()
