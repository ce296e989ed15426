"""Training the learner's own model, after its checks pass: a short run on the Tang poems, beside the
course GPT with a learned position table trained on the same batches.

The judge drives it; the learner's code only runs in the boxed worker. The worker builds the learner's
model (the exercise's `[train] model` function, e.g. rope's `build_model`) and, for each step, runs its
forward and backward pass on a batch the judge sends (`RemoteModule.grads`). Everything else is here,
in the trusted judge: the data, the initial weights, the optimizer (AdamW with the course's settings,
on a shadow copy of the learner's parameters, which go back to the worker after each step) and the
schedule. Every loss shown is computed here from the logits the worker returns, never taken from the
model: a validation sends the fixed validation windows without their targets (`RemoteModule.logits`,
eval mode) and takes the cross-entropy against the targets it kept, the same windows the comparison
model is validated on; a progress line's loss is that of the step's own forward pass
(`grads(..., keep_logits=True)`, then `step_logits`). Logits cross a few rows at a time, so each
answer stays under the judge's read limit (wire.REPLY_LIMIT). A validation also checks the model looks
only to the left: its logits for a prefix of a window (cut at a place drawn per validation) must be
those it gave for the whole window. The model's own loss is only what its backward pass follows. This
is practice, not a verdict: nothing here changes a grade.

Events: {"event": "estimate", "seconds", "step"} once, after ESTIMATE_AFTER steps: the whole run's seconds
from its start, the steps timed here after the first at their pace and the first validation's seconds for
each one still to come; {"event": "training", "step", "steps", "loss", "compare_loss", "seconds"} every `report`
steps, {"event": "validated", "step", "val", "compare_val"} before the first step and at every
evaluation, {"event": "trained", "steps", "seconds", "val", "compare_val"} at the end.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from tutor.errors import TutorError

# the run: the course GPT's shape, the train-compare experiment's windows (its length is measured: ESTIMATE_AFTER)
DEFAULTS = {
    "steps": 300,
    "batch": 10,
    "context": 64,
    "eval_interval": 50,
    "eval_batches": 4,
    "report": 10,
    "seed": 1337,
    "compare": "learned",
}
# steps after which the run's length is announced: the first one (a warm-up) is not counted in the pace
ESTIMATE_AFTER = 5


class Refused(TutorError):
    """The learner's model cannot be trained this way; the text says why, in the learner's language."""


def settings(spec: dict, steps: int | None = None) -> dict:
    """The run's settings: the defaults, the exercise's `[train]` table, then the learner's step count."""
    out = {**DEFAULTS, **spec}
    if steps is not None:
        out["steps"] = steps
    return out


def _finite(value: Any) -> float | None:
    import torch

    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = float(value)
    return float(value) if isinstance(value, float) and math.isfinite(value) else None


def train_own(sub, run: dict, emit: Callable[[dict], None], say: Callable[..., str]) -> None:
    """Train the learner's model built by `sub` for `run["steps"]` steps, emitting progress events.
    Raises Refused when the model is not the course GPT's shape or a step gives no usable answer;
    LearnerError and Stopped pass through (the learner's code raised; the worker is gone)."""
    from tutor.model.train import evaluate, lr_at, make_optimizer, train_step

    t0 = time.monotonic()
    tcfg, config, batches = _training_data(run)
    val_set = batches.val_batches(tcfg.eval_batches)
    theirs, shadow, other = _models(sub, run, config, say)
    params = dict(shadow.named_parameters())
    theirs.load({n: p.detach() for n, p in params.items()})
    mine, its = make_optimizer(shadow, tcfg), make_optimizer(other, tcfg)

    def validate(step: int) -> tuple[float, float]:
        cut = random.Random(run["seed"] * 100_003 + step).randint(1, tcfg.context - 1)
        val = _validation_loss(theirs, val_set, config.vocab_size, cut, step, say)
        compare_val = evaluate(other, val_set)
        emit({"event": "validated", "step": step, "val": val, "compare_val": compare_val})
        return val, compare_val

    step, started = 0, time.monotonic()
    val, compare_val = validate(step)
    val_s = time.monotonic() - started
    first_step = 0.0
    while step < tcfg.steps:
        x, y = batches.train_batch()
        lr = lr_at(step, tcfg)
        shown = (step + 1) % run["report"] == 0 or step + 1 == tcfg.steps
        loss = _their_step(theirs, shadow, mine, (x, y), tcfg, lr, step + 1, say, config.vocab_size, shown)
        compare_loss = float(train_step(other, its, x, y, tcfg, lr))
        step += 1
        if step == 1:
            first_step = time.monotonic()
        elif step == ESTIMATE_AFTER and step < tcfg.steps:
            step_s = (time.monotonic() - first_step) / (step - 1)
            emit(_estimate(tcfg, step, time.monotonic() - t0, step_s, val_s))
        if shown:
            losses = {"loss": loss, "compare_loss": compare_loss, "seconds": round(time.monotonic() - t0, 2)}
            emit({"event": "training", "step": step, "steps": tcfg.steps, **losses})
        if step % tcfg.eval_interval == 0 or step == tcfg.steps:
            val, compare_val = validate(step)
    seconds = round(time.monotonic() - t0, 2)
    emit({"event": "trained", "steps": step, "seconds": seconds, "val": val, "compare_val": compare_val})


def _estimate(tcfg, step: int, elapsed_s: float, step_s: float, val_s: float) -> dict:
    """The run's expected length at `step`: what it took so far, its steps left at `step_s` each and a
    validation's `val_s` for each validation still to come (every eval_interval steps and at the end)."""
    evals = (
        tcfg.steps // tcfg.eval_interval - step // tcfg.eval_interval + (tcfg.steps % tcfg.eval_interval != 0)
    )
    seconds = elapsed_s + (tcfg.steps - step) * step_s + evals * val_s
    return {"event": "estimate", "seconds": round(seconds, 1), "step": step}


def _training_data(run: dict):
    """The run's settings as the course trainer's, the course GPT's shape, and the Tang poems in
    batches (training and the fixed validation windows)."""
    from tutor.model.corpus import tang_texts
    from tutor.model.gpt import GPTConfig
    from tutor.model.tokenizer import course_tokenizer
    from tutor.model.train import TrainConfig, make_batches

    tokenizer = course_tokenizer()
    tcfg = TrainConfig(
        steps=run["steps"],
        batch_size=run["batch"],
        context=run["context"],
        eval_interval=run["eval_interval"],
        eval_batches=run["eval_batches"],
        seed=run["seed"],
        precision="fp32",
    )
    config = GPTConfig(vocab_size=tokenizer.vocab_size)  # the course GPT: 4 layers, 4 heads, 128 wide
    train_text, val_text = tang_texts()
    return tcfg, config, make_batches(tokenizer, train_text, val_text, tcfg, run["context"])


def _models(sub, run: dict, config, say: Callable[..., str]):
    """The learner's model in the worker, its shadow here (the same parameters, which the optimizer
    steps) and the comparison model, each from the run's seed. Refused unless the learner's model has
    the course GPT's parameters."""
    import torch

    from tutor.model.gpt import GPT, GPTConfig

    theirs = sub.new(run["model"], config.to_dict())  # as the checks do: pos_emb must go even when asked for
    torch.manual_seed(run["seed"])
    shadow = GPT(GPTConfig(**{**config.to_dict(), "pos": "none"}))  # holds their weights in here
    wanted = {n: tuple(p.shape) for n, p in shadow.named_parameters()}
    if not theirs.is_module or theirs.params != wanted:
        raise Refused(say("train.own.not_course", name=run["model"]))
    torch.manual_seed(run["seed"])
    other = GPT(GPTConfig(**{**config.to_dict(), "pos": run["compare"]}))
    other.train()
    return theirs, shadow, other


def _rows(context: int, vocab: int) -> int:
    """Rows of logits per answer: float32 in base64 is 16/3 bytes a logit, kept within 3/4 of the
    judge's read limit (6 rows of the course's 64 × 6010 logits, 12 MB)."""
    from tutor.grading.box.wire import REPLY_LIMIT

    return max(1, REPLY_LIMIT * 3 // 4 // (context * vocab * 16 // 3))


def _summed_loss(logits, targets, vocab: int, step: int, say: Callable[..., str]) -> float:
    """The cross-entropy of `logits` against `targets` (rows, T), summed, computed here; Refused unless
    the worker sent finite float logits of shape (rows, T, vocab)."""
    import torch
    import torch.nn.functional as F

    want = (*targets.shape, vocab)
    if not (
        isinstance(logits, torch.Tensor)
        and logits.is_floating_point()
        and tuple(logits.shape) == want
        and bool(torch.isfinite(logits).all())
    ):
        raise Refused(say("train.own.bad_logits", step=step, shape=want))
    return float(F.cross_entropy(logits.reshape(-1, vocab).float(), targets.reshape(-1), reduction="sum"))


def _validation_loss(theirs, val_set, vocab: int, cut: int, step: int, say: Callable[..., str]) -> float:
    """The mean cross-entropy of the learner's model on the validation windows, from its logits (the
    targets stay here); the first rows are also run cut to their first `cut` positions, whose logits
    must not change (a model that looks ahead would show a loss it has not earned)."""
    import torch

    total, count = 0.0, 0
    for x, y in val_set:
        rows = _rows(x.size(1), vocab)
        for start in range(0, x.size(0), rows):
            xs, ys = x[start : start + rows], y[start : start + rows]
            logits = theirs.logits(xs)
            total += _summed_loss(logits, ys, vocab, step, say)
            count += ys.numel()
            if cut:
                prefix = theirs.logits(xs[:, :cut])
                if not (
                    isinstance(prefix, torch.Tensor)
                    and prefix.shape == logits[:, :cut].shape
                    and torch.allclose(prefix.float(), logits[:, :cut], rtol=1e-4, atol=1e-3)
                ):
                    raise Refused(say("train.own.not_causal", step=step, cut=cut))
                cut = 0
    return total / count


def _their_step(
    theirs,
    shadow,
    optimizer,
    batch,
    tcfg,
    lr: float,
    step: int,
    say: Callable[..., str],
    vocab: int,
    shown: bool,
) -> float | None:
    """One step of the learner's model: its forward and backward pass in the worker on `batch`, the
    gradients checked and stepped here on the shadow, whose new weights go back to the worker. When the
    step is `shown`, its loss, computed here from that forward pass's logits (else None)."""
    import torch

    from tutor.model.train import optimizer_step

    params = dict(shadow.named_parameters())
    reply = theirs.grads(*batch, keep_logits=shown)
    grads = reply["grads"]
    if _finite(reply["loss"]) is None or set(grads) != set(params):  # what its backward pass followed
        raise Refused(say("train.own.no_loss", step=step))
    loss = None
    if shown:
        x, y = batch
        rows = _rows(x.size(1), vocab)
        total = sum(
            _summed_loss(theirs.step_logits(start, start + rows), y[start : start + rows], vocab, step, say)
            for start in range(0, x.size(0), rows)
        )
        loss = total / y.numel()
    for name, p in params.items():
        g = grads[name]
        if not isinstance(g, torch.Tensor) or tuple(g.shape) != tuple(p.shape) or not torch.isfinite(g).all():
            raise Refused(say("train.own.bad_grad", step=step, name=name))
        p.grad = g.to(p.dtype)
    optimizer_step(shadow, optimizer, tcfg, lr)
    theirs.load({n: p.detach() for n, p in params.items()})
    return loss
