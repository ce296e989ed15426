"""train-compare: train the course model several times, changing only the head count or the
position mode, and compare validation loss, parameter count and time.

Every setting is trained with `seeds` seeds (seed, seed+1, ...) on the shipped Tang corpus; at the defaults
(1000 steps of 10 windows of 64 characters) a run reads 640,000 characters, 23% of the 2.74M in the
training split: well under one epoch, so there is nothing to memorise yet and its final validation loss is
close to its lowest. The result shows both, per run and as the mean over seeds, and the seed spread: the largest
difference another seed made within one setting. A gap between settings smaller than that is noise.

Runs in a child process (see runner.py). Each run has a key made from its full configuration (model,
training, corpus). A finished run is announced as a "trained" event carrying the key, the
configuration, the losses and the curve; the caller keeps it (the `experiment` command records it in
the learner's progress store) and hands kept runs back through `ctx.stored_run`, so asking again for
the same run reads it back instead of training it again. Nothing here opens the store.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from tutor.experiments.errors import Cancelled
from tutor.experiments.jobs import JobClock, Progress, RunPlan, reporter
from tutor.experiments.params import TrainCompareParams
from tutor.experiments.pool import POOL_WORTH_S, InlinePool, Pool, cores, pool_size
from tutor.experiments.result import (
    Msg,
    Num,
    Result,
    Series,
    SeriesPanel,
    TablePanel,
    columns,
    reading,
    result,
)
from tutor.experiments.run_context import RunContext

if TYPE_CHECKING:
    from tutor.model.tokenizer import CharTokenizer

KEY_VERSION = 2  # 2: the Tang corpus, its vocabulary policy and several seeds


def run_config(
    p: TrainCompareParams, n_head: int, pos: str, corpus_id: str, seed: int | None = None
) -> dict[str, Any]:
    """The full configuration of one run (`seed` defaults to p.seed); its digest is the run's key."""
    from tutor.model.gpt import GPTConfig
    from tutor.model.train import TrainConfig

    model = GPTConfig(
        block_size=p.context, n_layer=p.n_layer, n_head=n_head, n_embd=p.n_embd, pos=pos, dropout=p.dropout
    )
    train = TrainConfig(
        steps=p.steps,
        batch_size=p.batch,
        context=p.context,
        lr=p.lr,
        eval_interval=min(p.eval_interval, p.steps),
        seed=p.seed if seed is None else seed,
    )
    model_dict = model.to_dict()
    model_dict.pop("vocab_size")  # set from the corpus by train()
    return {"version": KEY_VERSION, "model": model_dict, "train": asdict(train), "corpus": corpus_id}


def run_key(config: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:20]
    return f"train-compare:{digest}"


TEXT = "exp.train-compare."


def run_label(n_head: int, pos: str, vary: str, seed: int | None = None) -> Msg:
    """A run as the learner reads it: "4 heads", or the position mode ("learned positions"); with its seed
    when one setting is trained with several."""
    if vary != "heads":
        label = Msg(f"term.pos.{pos}")
    else:
        label = Msg(f"{TEXT}heads", n=n_head)
    return label if seed is None else Msg(f"{TEXT}seeded", label=label, seed=str(seed))


TIMED_STEPS = 5  # steps timed per setting before a job starts (after one untimed warm-up step)


def pace(p: TrainCompareParams, n_head: int, pos: str) -> tuple:
    """What the time of one training step depends on: the model's shape and the batch."""
    return (p.n_layer, n_head, p.n_embd, pos, p.batch, p.context)


def _kept_pace(config: dict[str, Any]) -> tuple:
    model, train = config.get("model", {}), config.get("train", {})
    return (
        model.get("n_layer"),
        model.get("n_head"),
        model.get("n_embd"),
        model.get("pos"),
        train.get("batch_size"),
        train.get("context") or model.get("block_size"),
    )


def _same_run(p: TrainCompareParams, seed: int, config: dict[str, Any]) -> bool:
    """Whether a kept run's configuration is the one this job would train (it is read back, not trained)."""
    model, train = config.get("model", {}), config.get("train", {})
    return (
        config.get("version") == KEY_VERSION
        and train.get("steps") == p.steps
        and train.get("seed") == seed
        and train.get("lr") == p.lr
        and train.get("eval_interval") == min(p.eval_interval, p.steps)
        and model.get("dropout") == p.dropout
    )


def planned_runs(p: TrainCompareParams) -> list[tuple[str, int, str, int]]:
    """(slug, n_head, pos, seed) of every run of the job, in order."""
    seeds = [p.seed + k for k in range(p.seeds)]
    return [(slug, n_head, pos, seed) for slug, n_head, pos in p.runs() for seed in seeds]


def threads_per_run(p: TrainCompareParams) -> int:
    """The torch threads each run trains with: the parameter, or every core for one run when it is unset."""
    return p.threads or cores()


def _kept_paces(kept: list[tuple[dict[str, Any], float | None, int]]) -> dict[tuple, float]:
    """Per setting (`pace`'s key) the median seconds a step of the learner's finished runs of it."""
    paces: dict[tuple, list[float]] = {}
    for config, seconds, steps in kept:
        if seconds and steps:
            paces.setdefault(_kept_pace(config), []).append(seconds / steps)
    return {key: sorted(per)[len(per) // 2] for key, per in paces.items()}


def expected_seconds(
    p: TrainCompareParams, kept: list[tuple[dict[str, Any], float | None, int]]
) -> float | None:
    """The job's length expected from the learner's finished runs, each given as (config, seconds, steps):
    every run still to train at the pace its setting had in the kept runs (the median seconds a step), laid
    out over the workers the job will use; a run kept with these very settings at 0 s; None when a setting was
    never trained."""
    paces = _kept_paces(kept)
    plan = []
    for _, n_head, pos, seed in planned_runs(p):
        key = pace(p, n_head, pos)
        if any(_kept_pace(c) == key and _same_run(p, seed, c) for c, _, _ in kept):
            continue
        if key not in paces:
            return None
        plan.append(RunPlan(p.steps, paces[key]))
    alone = JobClock(plan).planned_s
    if alone < POOL_WORTH_S:  # as the job will run it: in its own process (see _scheduled)
        return alone
    return JobClock(plan, workers=pool_size(len(plan), threads_per_run(p))).planned_s


# A step's seconds on one thread of an idle machine, before anything is timed (`rough_plan`): a fit of time_run's
# timings of eight shapes (1-8 blocks, widths 8-256, windows 8-128, batches 1-20, 1-8 heads) on the 2-core
# machine the course was built on, per step, per block, per attention score (block x head x batch x window^2)
# and per multiply-add of the model's matrices; timed at a load of 5, halved to head-count's 60-65 s a run
# on that machine idle (docs/figures.md).
ROUGH_STEP_S = (0.85e-3, 2.45e-3, 4.35e-9, 0.73e-11)
ROUGH_EVAL_STEPS = 2.4  # a validation as training steps (time_run's timings: 1.0-3.8)
ROUGH_VOCAB = 6010  # the Tang corpus's vocabulary (CharTokenizer.for_training), before it is read
# seconds before the first step on that machine idle: this process loading torch and the corpus, then the
# workers doing the same and timing the job (docs/figures.md, head-count's job)
ROUGH_START_S = {"here": 2.5, "pool": 5.0}


def rough_plan(p: TrainCompareParams, n_head: int, pos: str) -> RunPlan:
    """A run of this setting as planned from its shape alone on an idle machine, nothing timed (see
    ROUGH_STEP_S): within 0.4-1.2x of a timing on the machine it was fitted on, and unknown on another."""
    fixed, per_block, per_score, per_flop = ROUGH_STEP_S
    tokens, c = p.batch * p.context, p.n_embd
    flops = 6 * tokens * (p.n_layer * 12 * c * c + c * ROUGH_VOCAB) + 6 * tokens * p.n_layer * p.context * c
    step = (
        fixed + per_block * p.n_layer + per_score * p.n_layer * n_head * tokens * p.context + per_flop * flops
    )
    return RunPlan(p.steps, step, min(p.eval_interval, p.steps), ROUGH_EVAL_STEPS * step)


def rough_estimate(
    p: TrainCompareParams, kept: Sequence[tuple[dict[str, Any], float | None, int]] = ()
) -> dict[str, Any]:
    """The job's first "estimate" event, from what is known before anything is loaded: each run to train at the
    pace its setting had in the learner's finished runs `kept` ((config, seconds, steps) each, as for
    `expected_seconds`; a run kept with these very settings is stored), else at `rough_plan`'s, on the workers
    `_scheduled` would use, after the start-up. What is fitted, not measured here, is slowed by the machine's
    load over its cores (the last minute's, at least 1: at a load of 5 on 2 cores the steps took about twice
    as long). The job's own process knows no kept runs before torch and the corpus are loaded (their keys
    need both): there every run counts as to train. `rough`: the workers' timing follows with the estimate
    that holds."""
    import os

    try:
        load = max(1.0, os.getloadavg()[0] / cores())
    except OSError:  # no load average here
        load = 1.0
    runs, paces = planned_runs(p), _kept_paces(list(kept))
    plan, stored = [], 0
    for _, n_head, pos, seed in runs:
        key = pace(p, n_head, pos)
        if any(_kept_pace(c) == key and _same_run(p, seed, c) for c, _, _ in kept):
            stored += 1
        elif key in paces:
            plan.append(RunPlan(p.steps, paces[key]))
        else:
            fitted = rough_plan(p, n_head, pos)
            plan.append(replace(fitted, step_s=fitted.step_s * load, eval_s=fitted.eval_s * load))
    workers = pool_size(len(plan), threads_per_run(p))
    if workers > 1 and sum(r.seconds(r.steps) for r in plan) < POOL_WORTH_S:
        workers = 1
    start = load * (ROUGH_START_S["here"] + (ROUGH_START_S["pool"] if workers > 1 else 0.0))
    return {
        "event": "estimate",
        "seconds": start + JobClock(plan, workers=workers).planned_s,
        "runs": len(runs),
        "stored": stored,
        "workers": workers,
        "rough": True,
    }


def time_run(
    p: TrainCompareParams, n_head: int, pos: str, vocab_size: int, steps: int = TIMED_STEPS
) -> RunPlan:
    """A run of this setting as planned here: a training step timed over `steps` steps on random windows
    (the same work as real ones) after a warm-up step, one validation timed, and the set-up of a run (its
    model and optimizer; the corpus is encoded once per process, see `time_task`)."""
    import torch

    from tutor.model.gpt import GPT, GPTConfig
    from tutor.model.train import TrainConfig, evaluate, make_optimizer, train_step, use_bf16

    t0 = time.perf_counter()
    cfg = TrainConfig(steps=steps + 1, batch_size=p.batch, context=p.context, lr=p.lr)
    model = GPT(
        GPTConfig(
            block_size=p.context,
            n_layer=p.n_layer,
            n_head=n_head,
            n_embd=p.n_embd,
            pos=pos,
            dropout=p.dropout,
            vocab_size=vocab_size,
        )
    )
    optimizer = make_optimizer(model, cfg)
    setup = time.perf_counter() - t0
    x, y = torch.randint(vocab_size, (2, p.batch, p.context))
    bf16 = use_bf16(cfg.precision, "cpu")
    train_step(model, optimizer, x, y, cfg, p.lr, "cpu", bf16)
    t1 = time.perf_counter()
    for _ in range(steps):
        train_step(model, optimizer, x, y, cfg, p.lr, "cpu", bf16)
    t2 = time.perf_counter()
    evaluate(model, [(x, y)] * cfg.eval_batches, bf16=bf16)
    t3 = time.perf_counter()
    return RunPlan(p.steps, (t2 - t1) / steps, min(p.eval_interval, p.steps), t3 - t2, setup)


@cache
def _course_data() -> tuple[tuple[str, str], CharTokenizer, str]:
    """(texts, tokenizer, corpus id) of the Tang corpus as `python -m tutor train` trains on it, once a process."""
    from tutor.experiments.course.course_text import course_texts
    from tutor.model.tokenizer import CharTokenizer

    texts = course_texts()
    tokenizer = CharTokenizer.for_training(texts[0])  # the vocabulary policy of `python -m tutor train`
    corpus_id = hashlib.sha256((texts[0] + "\0" + texts[1]).encode()).hexdigest()[:16]
    return texts, tokenizer, corpus_id


def _train_config(config: dict[str, Any]):
    from tutor.model.train import TrainConfig

    return TrainConfig(**{**config["train"], "threads": None})  # the worker has set its threads


def time_task(args: dict[str, Any], emit: Callable, should_stop: Callable | None) -> list[dict[str, Any]]:
    """The pool's "time" task: each setting of args["settings"] ((n_head, pos) pairs) timed by `time_run`, after
    the corpus is encoded and its baselines fitted for the job's windows (what every later run in this
    process reads from memory, so their set-up is only their model's)."""
    from tutor.model.train import fit_baselines, make_batches, warm_up_optimizers

    warm_up_optimizers()
    p = TrainCompareParams(**args["params"])
    texts, tokenizer, _ = _course_data()
    cfg = _train_config(run_config(p, p.n_head, p.base_pos, ""))
    batches = make_batches(tokenizer, *texts, cfg, p.context)
    fit_baselines(batches, batches.val_batches(cfg.eval_batches), tokenizer.vocab_size)
    return [asdict(time_run(p, n_head, pos, tokenizer.vocab_size)) for n_head, pos in args["settings"]]


def train_task(args: dict[str, Any], emit: Callable, should_stop: Callable | None) -> dict[str, Any]:
    """The pool's "train" task: one run of args["config"] (run_config), reporting as it goes (jobs.reporter);
    its losses, parameters, seconds and curve."""
    from tutor.model.gpt import GPTConfig
    from tutor.model.train import train

    started = time.perf_counter()
    config = args["config"]
    texts, tokenizer, _ = _course_data()
    trained = train(
        GPTConfig(**config["model"]),
        _train_config(config),
        *texts,
        on_progress=reporter(emit, started),
        should_stop=should_stop,
        tokenizer=tokenizer,
    )
    if trained.cancelled:
        raise Cancelled()
    return {
        "final_val_loss": trained.final_val_loss,
        "params": trained.num_params,
        "seconds": trained.seconds,
        "curve": [[pt["step"], pt["loss"], pt["val_loss"]] for pt in trained.curve],
    }


def run_train_compare(p: TrainCompareParams, ctx: RunContext) -> Result:
    runs = planned_runs(p)
    ctx.emit(
        rough_estimate(p)
    )  # at once, before torch and the corpus load: the learner hears the length first
    texts, tokenizer, corpus_id = _course_data()
    configs = [run_config(p, n_head, pos, corpus_id, seed) for _, n_head, pos, seed in runs]
    kept = [ctx.stored_run(run_key(c)) if ctx.stored_run is not None else None for c in configs]
    todo = [i for i, stored in enumerate(kept) if stored is None]
    # events are JSON: the Msg as its fields
    labels = [
        run_label(n_head, pos, p.vary, seed if p.seeds > 1 else None).model_dump()
        for _, n_head, pos, seed in runs
    ]
    done: dict[int, dict[str, Any]] = {}
    with ExitStack() as stack:
        pool, clock = _scheduled(p, runs, kept, ctx, stack)
        ctx.emit(
            {
                "event": "estimate",
                "seconds": clock.planned_s,
                "runs": len(runs),
                "stored": len(runs) - len(todo),
                "workers": pool.workers,
            }
        )
        for index, stored in enumerate(kept):
            if stored is not None:
                ctx.emit({"event": "stored", "run": index + 1, "runs": len(runs), "label": labels[index]})
                curve = [[s, tl, vl] for s, tl, vl in stored.curve]
                done[index] = _finished(
                    p, runs[index], stored.final_val_loss, stored.params, stored.seconds, curve, True
                )
        progress = Progress(ctx, len(runs), p.steps, clock)

        def on_event(task: int, event: dict[str, Any]) -> None:
            index = todo[task]
            if event.get("event") == "report":
                progress.update(index, labels[index], event)
            elif event.get("event") == "done":  # kept at once: a job cancelled later keeps its finished runs
                r = event["result"]
                ctx.emit({"event": "trained", "key": run_key(configs[index]), "config": configs[index], **r})
                done[index] = _finished(
                    p, runs[index], r["final_val_loss"], r["params"], r["seconds"], r["curve"], False
                )

        pool.map([("train", {"config": configs[i]}) for i in todo], on_event)
    return compare_runs(p, [done[i] for i in range(len(runs))])


def _scheduled(p: TrainCompareParams, runs: list[tuple], kept: list, ctx: RunContext, stack: ExitStack):
    """Where the job's runs train, and its clock: a job that would take POOL_WORTH_S or more one run after
    another (by `rough_plan`) goes to worker processes (one per core, pool.py) and is timed there, all workers
    at once; a shorter one is timed and trained in this process."""
    threads = threads_per_run(p)
    here = InlinePool(threads, ctx.should_stop)
    todo = [(n_head, pos) for (_, n_head, pos, _), stored in zip(runs, kept, strict=True) if stored is None]
    workers = pool_size(len(todo), threads)
    if workers > 1 and sum(rough_plan(p, *setting).seconds(p.steps) for setting in todo) >= POOL_WORTH_S:
        ctx.check()
        pool = stack.enter_context(Pool("train-compare", workers, threads, ctx.should_stop))
        return pool, _job_clock(p, runs, kept, pool)
    return here, _job_clock(p, runs, kept, here)


def _job_clock(p: TrainCompareParams, runs: list[tuple], kept: list, pool) -> JobClock:
    """The job's length before it starts: each setting still to train timed for a few steps by every worker
    at once (so under the load the job puts on the machine), the mean of their timings. Every worker first
    reads the corpus (a task with no setting), so that their timings start together and overlap."""
    settings = list(
        dict.fromkeys(
            (n_head, pos) for (_, n_head, pos, _), stored in zip(runs, kept, strict=True) if stored is None
        )
    )
    timed: dict[tuple, RunPlan] = {}
    if settings:
        params = p.model_dump(mode="json")
        if pool.workers > 1:
            pool.map([("time", {"params": params, "settings": []})] * pool.workers)
        per_worker = pool.map([("time", {"params": params, "settings": settings})] * pool.workers)
        for k, (n_head, pos) in enumerate(settings):
            plans = [RunPlan(**timings[k]) for timings in per_worker]
            mean = {
                f: sum(getattr(r, f) for r in plans) / len(plans) for f in ("step_s", "eval_s", "setup_s")
            }
            timed[pace(p, n_head, pos)] = replace(plans[0], **mean)
    plan = [
        RunPlan(0, 0.0) if stored is not None else timed[pace(p, n_head, pos)]
        for (_, n_head, pos, _), stored in zip(runs, kept, strict=True)
    ]
    return JobClock(plan, workers=pool.workers)


def _finished(
    p: TrainCompareParams,
    run: tuple,
    val_loss: float | None,
    params: int | None,
    seconds: float | None,
    curve: list[list],
    stored: bool,
) -> dict[str, Any]:
    """A finished run as compare_runs reads it."""
    slug, n_head, pos, seed = run
    return {
        "label": run_label(n_head, pos, p.vary).model_dump(),
        "slug": slug,
        "seed": seed,
        "val_loss": val_loss,
        "params": params,
        "seconds": seconds,
        "curve": curve,
        "stored": stored,
    }


def _lowest(curve: list[list]) -> tuple[float | None, int | None]:
    points = [(c[2], c[0]) for c in curve if c[2] is not None]
    return min(points) if points else (None, None)


def compare_runs(p: TrainCompareParams, done: list[dict[str, Any]]) -> Result:
    """The Result of finished runs: per run its label (a Msg's fields, without the seed), slug, seed, losses,
    parameters, seconds, curve and whether it was stored."""
    metrics: dict[str, float] = {}
    rows, settings, lows, overfit = _per_run(p, done, metrics)
    means, spreads, summary = _per_setting(settings, metrics)
    best = min(means, key=means.__getitem__)
    metrics["lowest_final_val_loss"] = means[best]
    metrics["gap"] = max(means.values()) - means[best]
    varied = Msg(f"{TEXT}head_count" if p.vary == "heads" else f"{TEXT}pos_mode")
    note = _note(settings, means, spreads, best, varied, lows, overfit, metrics)
    seeded = len(spreads) == len(settings)
    panels = [
        TablePanel(
            title=Msg(f"{TEXT}table", runs=len(done), steps=p.steps, batch=p.batch, context=p.context),
            columns=[
                varied,
                Msg(f"{TEXT}col.seed"),
                *columns(f"{TEXT}col.", "final", "lowest"),
                Msg("exp.col.params"),
                *columns(f"{TEXT}col.", "seconds", "source"),
            ],
            rows=rows,
        ),
        TablePanel(
            title=Msg(f"{TEXT}means", seeds=p.seeds),
            columns=[
                varied,
                *columns(f"{TEXT}col.", "mean_final", "mean_lowest", "spread"),
                Msg("exp.col.params"),
            ],
            rows=summary,
        ),
        _curves(p, done, seeded),
        reading(note, tables=True),
    ]
    return result("train-compare", p, metrics, panels)


def _per_run(
    p: TrainCompareParams, done: list[dict[str, Any]], metrics: dict[str, float]
) -> tuple[list[list], dict[str, dict[str, Any]], list[tuple[float, int, Msg]], dict[str, Msg]]:
    """A table row per run, its metrics, and what the settings gather: the settings (slug -> label, final
    and lowest losses over seeds, seconds, params), the lowest loss of each validated run with its step and
    label, and the settings with a run whose val loss rose again before the end."""
    rows = []
    settings: dict[str, dict[str, Any]] = {}
    lows: list[tuple[float, int, Msg]] = []
    overfit: dict[str, Msg] = {}
    for r in done:
        low, at = _lowest(r["curve"])
        label = Msg.model_validate(r["label"])
        seed = r.get("seed", p.seed)
        setting = settings.setdefault(
            r["slug"], {"label": label, "finals": [], "lows": [], "seconds": [], "params": r["params"]}
        )
        setting["seconds"].append(r["seconds"])
        setting["finals"].append(r["val_loss"])
        setting["lows"].append(r["val_loss"] if low is None else low)
        metrics[f"val_loss_{r['slug']}_s{seed}"] = r["val_loss"]
        if low is not None:
            assert at is not None  # a lowest point has its step
            metrics[f"min_val_loss_{r['slug']}_s{seed}"] = low
            lows.append((low, at, label))
        if (low or r["val_loss"]) < r["val_loss"] - 0.02:
            overfit[r["slug"]] = label
        metrics[f"params_{r['slug']}"] = r["params"]
        metrics[f"seconds_{r['slug']}_s{seed}"] = r["seconds"]
        lowest = Msg(f"{TEXT}at", loss=Num(low), step=at) if low is not None else None
        source = Msg(f"{TEXT}stored" if r["stored"] else f"{TEXT}trained")
        rows.append(
            [label, str(seed), Num(r["val_loss"]), lowest, r["params"], Num(r["seconds"], decimals=1), source]
        )
    return rows, settings, lows, overfit


def _per_setting(
    settings: dict[str, dict[str, Any]], metrics: dict[str, float]
) -> tuple[dict[str, float], dict[str, float], list[list]]:
    """Per setting its mean final loss, its seed spread (only with several seeds: one seed measures no
    spread), its metrics and its row of the means table."""
    means, spreads, summary = {}, {}, []
    for slug, s in settings.items():
        means[slug] = sum(s["finals"]) / len(s["finals"])
        spread = max(s["finals"]) - min(s["finals"])
        metrics[f"val_loss_{slug}"] = means[slug]
        metrics[f"min_val_loss_{slug}"] = sum(s["lows"]) / len(s["lows"])
        metrics[f"seconds_{slug}"] = sum(s["seconds"]) / len(s["seconds"])  # the name runs had before seeds
        several = len(s["finals"]) > 1
        if several:  # one seed measures no spread: no metric rather than a 0
            metrics[f"seed_spread_{slug}"] = spreads[slug] = spread
        summary.append(
            [
                s["label"],
                Num(means[slug]),
                Num(metrics[f"min_val_loss_{slug}"]),
                Num(spread, 2) if several else None,
                s["params"],
            ]
        )
    return means, spreads, summary


def _note(
    settings: dict[str, dict[str, Any]],
    means: dict[str, float],
    spreads: dict[str, float],
    best: str,
    varied: Msg,
    lows: list[tuple[float, int, Msg]],
    overfit: dict[str, Msg],
    metrics: dict[str, float],
) -> Msg:
    """The reading under the tables: the best setting, the gap, the seed spread's verdict and any overfitting."""
    overfit_note: Msg | str = ""
    if overfit and lows:
        low, at, label = min(lows, key=lambda t: t[:2])
        metrics["lowest_val_loss"] = low
        overfit_note = Msg(f"{TEXT}overfit", runs=list(overfit.values()), best=label, loss=Num(low), step=at)
    says = dict(
        best=settings[best]["label"], loss=Num(means[best]), gap=Num(metrics["gap"], 2), varied=varied
    )
    if len(spreads) == len(settings):
        spread = max(spreads.values(), default=0.0)
        metrics["seed_spread"] = spread
        verdict = _verdict(settings, means, best, spread)
        note = Msg(f"{TEXT}note", **says, spread=Num(spread, 2), verdict=verdict)
    else:
        note = Msg(f"{TEXT}note_one_seed", **says)
    return Msg(f"{TEXT}with_overfit", note=note, overfit=overfit_note) if overfit_note else note


def _curves(p: TrainCompareParams, done: list[dict[str, Any]], seeded: bool) -> SeriesPanel:
    """Every run's validation loss over the steps."""

    def name(r: dict[str, Any]) -> Msg:
        label = Msg.model_validate(r["label"])
        return Msg(f"{TEXT}seeded", label=label, seed=str(r.get("seed", p.seed))) if seeded else label

    return SeriesPanel(
        title=Msg(f"{TEXT}plot"),
        x_label=Msg(f"{TEXT}step"),
        y_label=Msg(f"{TEXT}val_loss"),
        series=[
            Series(name=name(r), x=[float(c[0]) for c in r["curve"]], y=[c[2] for c in r["curve"]])
            for r in done
        ],
    )


def _verdict(settings: dict[str, dict[str, Any]], means: dict[str, float], best: str, spread: float) -> Msg:
    """Which settings are within the seed spread of the best one, and which are behind by more."""
    within = [settings[s]["label"] for s in settings if s != best and means[s] - means[best] <= spread]
    beyond = [settings[s]["label"] for s in settings if s != best and means[s] - means[best] > spread]
    if not beyond:
        return Msg(f"{TEXT}noise_all") if within else Msg(f"{TEXT}noise_single")
    if not within:
        return Msg(f"{TEXT}noise_none", best=settings[best]["label"])
    return Msg(f"{TEXT}noise_some", best=settings[best]["label"], within=within, beyond=beyond)
