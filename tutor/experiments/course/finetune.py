"""context-finetune: what PI, NTK and YaRN do with the short fine-tune they were designed for.

For each method the shipped short-context RoPE model is loaded with that frequency table, scored at its
trained length L0 and at s·L0 on the validation text, fine-tuned for a few steps on training windows of
s·L0 characters, and scored again. Nothing is stored, and the shipped checkpoint is never written.

The methods are a job of runs like train-compare's (jobs.py, pool.py): each is timed here before the job
starts (a batch of scoring at each length, a few fine-tune steps, a validation), the job's length is
announced, and a long job trains its methods in worker processes side by side. A run reports from its
first second: its scoring before the fine-tune is its set-up, its scoring after it is part of its last step.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.jobs import JobClock, Progress, RunPlan, phase_reporter, reporter
from tutor.experiments.params import ContextFinetuneParams
from tutor.experiments.pool import POOL_WORTH_S, InlinePool, Pool, cores, pool_size
from tutor.experiments.result import Msg, Num, Result, Series, SeriesPanel, TablePanel, reading, result
from tutor.experiments.run_context import RunContext
from tutor.settings import ROPE_SHORT_CHECKPOINT, checkpoints_dir

TEXT = "exp.context-finetune."
TIMED_STEPS = 3  # fine-tune steps timed before the job starts (after one untimed warm-up step)


def run_context_finetune(p: ContextFinetuneParams, ctx: RunContext) -> Result:
    t_all = time.perf_counter()
    _, base = _short_rope_checkpoint()
    L0 = base.model.cfg.block_size
    lengths = _lengths(p, L0)
    labels = [Msg(f"term.method.{method}").model_dump() for method in p.methods]
    tasks = [("finetune", {"params": p.model_dump(mode="json"), "method": method}) for method in p.methods]
    done: dict[int, dict[str, Any]] = {}
    with ExitStack() as stack:
        pool, clock = _scheduled(p, ctx, stack)
        ctx.emit(
            {
                "event": "estimate",
                "seconds": clock.planned_s,
                "runs": len(p.methods),
                "stored": 0,
                "workers": pool.workers,
            }
        )
        progress = Progress(ctx, len(p.methods), p.steps, clock)

        def on_event(index: int, event: dict[str, Any]) -> None:
            if event.get("event") == "report":
                progress.update(index, labels[index], event)
            elif event.get("event") == "done":  # from a worker as JSON: the lengths as text
                r = event["result"]
                done[index] = {**r, **{k: {int(n): v for n, v in r[k].items()} for k in ("before", "after")}}

        pool.map(tasks, on_event)
    return finetune_result(
        p, L0, lengths, [done[i] for i in range(len(p.methods))], time.perf_counter() - t_all
    )


def _lengths(p: ContextFinetuneParams, L0: int) -> list[int]:
    long = round(p.scale * L0)
    return [L0, long] if long > L0 else [L0]


def _scheduled(p: ContextFinetuneParams, ctx: RunContext, stack: ExitStack):
    """Where the methods train and the job's clock: a job whose fine-tunes alone would take POOL_WORTH_S or
    more one after another goes to worker processes and is timed there, every worker at once; a shorter one
    is timed and trained in this process."""
    threads = p.threads or cores()
    here = InlinePool(threads, ctx.should_stop)
    workers = pool_size(len(p.methods), threads)
    if workers > 1:  # a fine-tune step timed first: a long job goes to the workers without a full timing here
        rough = RunPlan(
            **here.map([("finetune-time", {"params": p.model_dump(mode="json"), "rough": True})])[0]
        )
        if len(p.methods) * rough.seconds(p.steps) >= POOL_WORTH_S:
            ctx.check()
            pool = stack.enter_context(Pool("context-finetune", workers, threads, ctx.should_stop))
            return pool, _job_clock(p, pool)
    return here, _job_clock(p, here)


def _job_clock(p: ContextFinetuneParams, pool) -> JobClock:
    """Every method costs the same: timed once by every worker at once, the mean of their timings."""
    timings = [
        RunPlan(**t)
        for t in pool.map([("finetune-time", {"params": p.model_dump(mode="json")})] * pool.workers)
    ]
    fields = ("step_s", "eval_s", "setup_s", "end_s")
    mean = {f: sum(getattr(t, f) for t in timings) / len(timings) for f in fields}
    plan = RunPlan(p.steps, eval_every=p.steps, **mean)
    return JobClock([plan] * len(p.methods), workers=pool.workers)


def _scores(
    p: ContextFinetuneParams,
    model,
    val_ids,
    lengths: list[int],
    L0: int,
    should_stop,
    windows: int | None = None,
    tick=None,
) -> dict[int, Any]:
    from tutor.model.context import measure

    try:
        got = measure(
            model,
            val_ids,
            lengths,
            windows or p.windows,
            L0,
            should_stop=should_stop,
            on_batch=tick and (lambda _: tick()),
        )
    except InterruptedError:
        raise Cancelled() from None
    return {s.length: s for s in got}


def _model(path, method: str, scale: float, L0: int):
    from tutor.model.checkpoint import load_checkpoint

    return load_checkpoint(path, rope_scaling=method, rope_scale=scale, rope_original_max=L0).model


def _val_ids(tokenizer) -> list[int]:
    return tokenizer.encode(_course_texts()[1], unknown="unk")


def time_task(args: dict[str, Any], emit, should_stop) -> dict[str, Any]:
    """The pool's "finetune-time" task: a method's run as planned here (a RunPlan's fields). Its set-up is
    loading the model and scoring it (a batch of each length timed, times the batches the scoring reads), its
    steps are timed after a warm-up step, its last step adds a validation, and its end is the scoring again.
    With args["rough"]: one step and no scoring, to tell a long job from a short one."""
    import torch

    from tutor.model.context import BATCH
    from tutor.model.train import (
        TrainConfig,
        evaluate,
        make_optimizer,
        train_step,
        use_bf16,
        warm_up_optimizers,
    )

    warm_up_optimizers()
    p = ContextFinetuneParams(**args["params"])
    path, base = _short_rope_checkpoint()
    L0 = base.model.cfg.block_size
    lengths = _lengths(p, L0)
    t0 = time.perf_counter()
    model = _model(path, p.methods[0], p.scale, L0)
    load_s = time.perf_counter() - t0
    scoring_s = 0.0
    if not args.get("rough"):  # the scoring: a batch of each length after a warm-up batch
        val_ids = _val_ids(base.tokenizer)
        for length in lengths:
            windows = min(p.windows * lengths[-1], len(val_ids) - 1) // length
            _scores(p, model, val_ids, [length], L0, should_stop, windows=min(windows, BATCH))
            t = time.perf_counter()
            _scores(p, model, val_ids, [length], L0, should_stop, windows=min(windows, BATCH))
            scoring_s += (time.perf_counter() - t) * -(-windows // BATCH)
    cfg = TrainConfig(steps=TIMED_STEPS + 1, batch_size=p.batch, context=lengths[-1], lr=p.lr)
    optimizer = make_optimizer(model, cfg)
    model.train()
    x, y = torch.randint(model.cfg.vocab_size, (2, p.batch, lengths[-1]))
    bf16 = use_bf16(cfg.precision, "cpu")
    train_step(model, optimizer, x, y, cfg, p.lr, "cpu", bf16)
    steps = 1 if args.get("rough") else TIMED_STEPS
    t1 = time.perf_counter()
    for _ in range(steps):
        train_step(model, optimizer, x, y, cfg, p.lr, "cpu", bf16)
    t2 = time.perf_counter()
    evaluate(model, [(x, y)] * cfg.eval_batches, bf16=bf16)
    eval_s = time.perf_counter() - t2
    return {
        "steps": p.steps,
        "step_s": (t2 - t1) / steps,
        "eval_every": p.steps,
        "eval_s": eval_s,
        "setup_s": load_s + scoring_s,
        "end_s": scoring_s,
    }


def finetune_task(args: dict[str, Any], emit, should_stop) -> dict[str, Any]:
    """The pool's "finetune" task: one method scored, fine-tuned in place on windows of s·L0 characters and
    scored again, reporting from its first second (jobs.reporter; the report of its last step waits for the
    second scoring). Its losses before and after at each length, entropies, loss curve and seconds."""
    from tutor.model.train import TrainConfig, train

    started = time.perf_counter()
    p, method = ContextFinetuneParams(**args["params"]), args["method"]
    path, base = _short_rope_checkpoint()
    L0 = base.model.cfg.block_size
    lengths = _lengths(p, L0)
    val_ids = _val_ids(base.tokenizer)
    model = _model(path, method, p.scale, L0)
    scoring = (p, model, val_ids, lengths, L0, should_stop)
    before = _scores(*scoring, tick=phase_reporter(emit, "setup", 0, p.steps))
    steps, losses = [], []
    last: list[Any] = []  # the last Progress
    report = reporter(emit, started, ends=False)

    def on_progress(pr) -> None:
        steps.append(float(pr.step))
        losses.append(pr.loss)
        report(pr)
        last[:] = [pr]

    cfg = TrainConfig(
        steps=p.steps, batch_size=p.batch, context=lengths[-1], lr=p.lr, eval_interval=p.steps, seed=p.seed
    )
    texts = _course_texts()
    tuned = train(
        model.cfg,
        cfg,
        *texts,
        on_progress=on_progress,
        should_stop=should_stop,
        tokenizer=base.tokenizer,
        init=model,
    )
    if tuned.cancelled:
        raise Cancelled()
    end = last[-1]
    after = _scores(*scoring, tick=phase_reporter(emit, "end", end.step, end.steps, end.elapsed_s))
    figures = ("step", "steps", "loss", "val_loss", "tokens_per_s", "elapsed_s")
    emit({"event": "report", **{name: getattr(end, name) for name in figures}, "finished": True})
    return {
        "method": method,
        "before": {n: before[n].loss for n in lengths},
        "after": {n: after[n].loss for n in lengths},
        "entropy_before": before[lengths[-1]].entropy,
        "entropy_after": after[lengths[-1]].entropy,
        "steps": steps,
        "losses": losses,
        "seconds": tuned.seconds,
    }


def _course_texts() -> tuple[str, str]:
    from tutor.experiments.course.course_text import course_texts

    return course_texts()


def _short_rope_checkpoint():
    """(path, checkpoint) of the shipped short-context RoPE model."""
    from tutor.model.checkpoint import load_checkpoint

    path = checkpoints_dir() / ROPE_SHORT_CHECKPOINT
    if not path.is_file():
        raise ExperimentError("err.experiment.no_checkpoint", path=str(path))
    base = load_checkpoint(path)
    if base.model.cfg.pos != "rope":
        raise ExperimentError("err.experiment.not_rope", name=ROPE_SHORT_CHECKPOINT, pos=base.model.cfg.pos)
    return path, base


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
    best = min(after_long, key=after_long.__getitem__)
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
