"""context-finetune: what PI, NTK and YaRN do with the short fine-tune they were designed for.

For each method the shipped short-context RoPE model is loaded with that frequency table, scored at its
trained length L0 and at s·L0 on the validation text, fine-tuned for a few steps on training windows of
s·L0 characters, and scored again. Runs in a child process (see runner.py) with progress events; nothing is
stored, and the shipped checkpoint is never written.
"""

from __future__ import annotations

import time
from typing import Any

from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.params import ContextFinetuneParams
from tutor.experiments.result import Msg, Num, Result, Series, SeriesPanel, TablePanel, reading, result
from tutor.experiments.run_context import RunContext
from tutor.experiments.training import Progress
from tutor.settings import ROPE_SHORT_CHECKPOINT, checkpoints_dir

TEXT = "exp.context-finetune."


def run_context_finetune(p: ContextFinetuneParams, ctx: RunContext) -> Result:
    from models.checkpoint import load_checkpoint
    from models.context import measure
    from tutor.experiments.course_text import course_texts

    path, base = _short_rope_checkpoint()
    L0 = base.model.cfg.block_size
    long = round(p.scale * L0)
    lengths = [L0, long] if long > L0 else [L0]
    texts = course_texts()
    val_ids = base.tokenizer.encode(texts[1], unknown="unk")

    def scores(model) -> dict[int, object]:
        try:
            got = measure(model, val_ids, lengths, p.windows, L0, should_stop=ctx.should_stop)
        except InterruptedError:
            raise Cancelled() from None
        return {s.length: s for s in got}

    done: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    progress = Progress(ctx, len(p.methods), p.steps)
    for index, method in enumerate(p.methods):
        ctx.check()
        label = Msg(f"term.method.{method}").model_dump()
        model = load_checkpoint(path, rope_scaling=method, rope_scale=p.scale, rope_original_max=L0).model
        before = scores(model)
        steps, losses = [], []

        def curve(pr, steps=steps, losses=losses) -> None:
            steps.append(float(pr.step))
            losses.append(pr.loss)

        seconds = _finetune(
            p, model, long, texts, base.tokenizer, progress.of_run(index, label, also=curve), ctx
        )
        after = scores(model)
        done.append(
            {
                "method": method,
                "before": {n: before[n].loss for n in lengths},
                "after": {n: after[n].loss for n in lengths},
                "entropy_before": before[lengths[-1]].entropy,
                "entropy_after": after[lengths[-1]].entropy,
                "steps": steps,
                "losses": losses,
                "seconds": seconds,
            }
        )
    return finetune_result(p, L0, lengths, done, time.perf_counter() - t_all)


def _short_rope_checkpoint():
    """(path, checkpoint) of the shipped short-context RoPE model."""
    from models.checkpoint import load_checkpoint

    path = checkpoints_dir() / ROPE_SHORT_CHECKPOINT
    if not path.is_file():
        raise ExperimentError("err.experiment.no_checkpoint", path=str(path))
    base = load_checkpoint(path)
    if base.model.cfg.pos != "rope":
        raise ExperimentError("err.experiment.not_rope", name=ROPE_SHORT_CHECKPOINT, pos=base.model.cfg.pos)
    return path, base


def _finetune(p: ContextFinetuneParams, model, context: int, texts: tuple[str, str], tokenizer, on_progress,
              ctx: RunContext) -> float:  # fmt: skip
    """Fine-tune `model` in place on training windows of `context` characters; returns its seconds."""
    from models.train import TrainConfig, train

    cfg = TrainConfig(steps=p.steps, batch_size=p.batch, context=context, lr=p.lr, eval_interval=p.steps,
                      seed=p.seed, threads=p.threads)  # fmt: skip
    tuned = train(model.cfg, cfg, *texts, on_progress=on_progress, should_stop=ctx.should_stop, tokenizer=tokenizer,
                  init=model)  # fmt: skip
    if tuned.cancelled:
        raise Cancelled()
    return tuned.seconds


def finetune_result(
    p: ContextFinetuneParams, L0: int, lengths: list[int], done: list[dict[str, Any]], seconds: float
) -> Result:
    """The Result of finished fine-tunes: per method its losses before and after at each length, the
    attention entropy at the longest length before and after, the training-loss curve and its seconds."""
    rows, metrics = [], {}
    for d in done:
        method = d["method"]
        row: list = [Msg(f"term.method.{method}")]
        for n in lengths:
            k = "1x" if n == L0 else "long"
            metrics[f"before_{k}_{method}"] = d["before"][n]
            metrics[f"after_{k}_{method}"] = d["after"][n]
            row += [Num(d["before"][n]), Num(d["after"][n])]
        metrics[f"entropy_before_{method}"] = d["entropy_before"]
        metrics[f"entropy_after_{method}"] = d["entropy_after"]
        metrics[f"seconds_{method}"] = d["seconds"]
        row += [Num(d["entropy_before"], 3), Num(d["entropy_after"], 3)]
        rows.append(row)
    metrics["trained_length"] = L0
    metrics["length"] = lengths[-1]
    metrics["seconds"] = seconds

    cols = [Msg("exp.col.method")]
    for n in lengths:
        cols += [Msg(f"{TEXT}before", n=n), Msg(f"{TEXT}after", n=n)]
    cols += [Msg(f"{TEXT}entropy_before", n=lengths[-1]), Msg(f"{TEXT}entropy_after", n=lengths[-1])]
    after_long = {d["method"]: d["after"][lengths[-1]] for d in done}
    best = min(after_long, key=after_long.get)
    panels = [
        TablePanel(
            title=Msg(
                f"{TEXT}table", steps=p.steps, batch=p.batch, n=lengths[-1], length=L0, windows=p.windows
            ),
            columns=cols,
            rows=rows,
        ),
        SeriesPanel(
            title=Msg(f"{TEXT}plot"),
            x_label=Msg("exp.train-compare.step"),
            y_label=Msg("exp.train-compare.loss"),
            series=[
                Series(name=Msg(f"term.method.{d['method']}"), x=d["steps"], y=d["losses"]) for d in done
            ],
        ),
        reading(
            Msg(
                f"{TEXT}note",
                n=lengths[-1],
                length=L0,
                steps=p.steps,
                best=Msg(f"term.method.{best}"),
                loss=Num(after_long[best]),
                scaling=Msg("exp.context-scaling.title"),
            )
        ),
    ]
    return result("context-finetune", p, metrics, panels)
