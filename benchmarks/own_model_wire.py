"""What judging `exercise train`'s losses from the logits costs, against taking the model's own loss.

    python benchmarks/own_model_wire.py [--repeat 3]

A validation of the course GPT's shape (vocabulary 6010, four batches of 10 windows of 64 characters), run
in this process, with the wire's encoding and decoding in between as between the worker and the judge
(no pipe, no box):

- **model's loss**: what a validation was: the forward pass with targets, its loss as one number.
- **judged**: what it is (own_model._validation_loss): the forward pass without targets, its logits six
  windows at a time, the cross-entropy here, and the prefix run of the causal check.
- **a progress line**: the logits of one training batch of 10 windows, fetched as `step_logits` is, and
  their cross-entropy (each progress line, every 10 steps).

It prints the wall and CPU time of each (the median of the rounds), the two validation losses (the same
to float rounding), and the bytes of one answer against the judge's read limit.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from tutor.grading.box import wire  # noqa: E402
from tutor.grading.box.wire import REPLY_LIMIT  # noqa: E402
from tutor.grading.judging.own_model import _rows, _summed_loss, _validation_loss  # noqa: E402
from tutor.model.gpt import GPT, GPTConfig  # noqa: E402

VOCAB, CONTEXT, BATCH, BATCHES = 6010, 64, 10, 4


class Wired:
    """The learner's model as the judge sees it: every answer through the wire."""

    def __init__(self, model: GPT):
        self.model = model.eval()

    def logits(self, idx):
        with torch.no_grad():
            return wire.loads(wire.dumps(self.model(idx)[0].float()))


def timed(fn) -> tuple[float, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in the worker and the judge
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=VOCAB))
    theirs = Wired(model)
    val = [
        (torch.randint(0, VOCAB, (BATCH, CONTEXT)), torch.randint(0, VOCAB, (BATCH, CONTEXT)))
        for _ in range(BATCHES)
    ]

    def own_loss() -> float:
        losses = []
        for x, y in val:
            with torch.no_grad():
                losses.append(float(wire.loads(wire.dumps(model.eval()(x, y)[1]))))
        return sum(losses) / len(losses)

    def judged() -> float:
        return _validation_loss(theirs, val, VOCAB, 17, 0, lambda key, **v: key)

    def progress_line() -> float:
        x, y = val[0]
        with torch.no_grad():
            logits = model(x)[0].float()
        rows = _rows(CONTEXT, VOCAB)
        total = sum(
            _summed_loss(
                wire.loads(wire.dumps(logits[s : s + rows])), y[s : s + rows], VOCAB, 1, lambda key, **v: key
            )
            for s in range(0, BATCH, rows)
        )
        return total / y.numel()

    def just_forward() -> float:  # the forward pass a progress line's loss comes with anyway
        with torch.no_grad():
            return float(F.cross_entropy(model(val[0][0])[0].reshape(-1, VOCAB), val[0][1].reshape(-1)))

    for name, fn in (
        ("model's loss", own_loss),
        ("judged", judged),
        ("a progress line", progress_line),
        ("its forward alone", just_forward),
    ):
        runs = [timed(fn) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"{name:18} wall {wall:6.3f} s   cpu {cpu:6.3f} s   loss {runs[-1][2]:.6f}")
    rows = _rows(CONTEXT, VOCAB)
    size = len(wire.dumps(torch.zeros(rows, CONTEXT, VOCAB)))
    print(
        f"one answer: {rows} windows of logits, {size / 1e6:.1f} MB; the judge reads at most "
        f"{REPLY_LIMIT / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
