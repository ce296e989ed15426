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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from tutor.experiments.errors import Cancelled
from tutor.experiments.params import TrainCompareParams
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
from tutor.settings import TRAINING_PROGRESS_EVERY_S

KEY_VERSION = 2  # 2: the Tang corpus, its vocabulary policy and several seeds


def run_config(
    p: TrainCompareParams, n_head: int, pos: str, corpus_id: str, seed: int | None = None
) -> dict[str, Any]:
    """The full configuration of one run (`seed` defaults to p.seed); its digest is the run's key."""
    from models.gpt import GPTConfig
    from models.train import TrainConfig

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


@dataclass(frozen=True)
class RunPlan:
    """One run of a job as planned: its steps (0 for a run read back from the store), a step's seconds and,
    every `eval_every` steps and at the last, a validation's seconds (models.train validates so)."""

    steps: int
    step_s: float
    eval_every: int = 0
    eval_s: float = 0.0

    def seconds(self, upto: int) -> float:
        """The planned seconds of its first `upto` steps, validations included."""
        evals = 0
        if self.eval_every:
            evals = upto // self.eval_every + (upto == self.steps and self.steps % self.eval_every != 0)
        return upto * self.step_s + evals * self.eval_s


class JobClock:
    """The time left of a whole job of training runs, from its plan (per run a RunPlan: timed before the
    job starts, see `time_run`, or equal relative weights when `timed` is False).

    The ETA is the plan's time still to go times the pace measured over the whole job so far (the runs' own
    clocks against the plan), plus each run's set-up (data, baselines) at the mean measured so far:
    cumulative figures, so the ETA settles instead of swinging with each step or jumping when a slower
    setting begins. While few steps are done, the timed plan counts as PRIOR_STEPS steps already run at
    its own pace."""

    PRIOR_STEPS = 20

    def __init__(self, plan: list[RunPlan], timed: bool = True) -> None:
        self.plan, self.timed = plan, timed
        self.done_s = 0.0  # seconds the finished runs trained
        self.done_plan = 0.0  # their planned seconds
        self.setups: list[float] = []  # seconds from each run's start to its first step

    @property
    def planned_s(self) -> float:
        """The whole job's expected seconds of training (timed plans only)."""
        return sum(run.seconds(run.steps) for run in self.plan)

    def setup(self, seconds: float) -> None:
        self.setups.append(max(seconds, 0.0))

    def finish(self, index: int, seconds: float) -> None:
        run = self.plan[index]
        self.done_s += seconds
        self.done_plan += run.seconds(run.steps)

    def eta(self, index: int, step: int, elapsed_s: float) -> float:
        """Seconds left of the job while run `index` (from 0) is at `step`, having trained `elapsed_s` (at
        its last step, once `finish` has counted it, what the runs after it will take)."""
        run = self.plan[index]
        actual, planned = self.done_s, self.done_plan
        if step < run.steps:
            actual, planned = actual + elapsed_s, planned + run.seconds(step)
        prior = self.PRIOR_STEPS * run.step_s if self.timed else 0.0
        pace = (actual + prior) / (planned + prior) if planned + prior > 0 else 0.0
        later = self.plan[index + 1 :]
        setup = sum(self.setups) / len(self.setups) if self.setups else 0.0
        left = (
            run.seconds(run.steps)
            - run.seconds(min(step, run.steps))
            + sum(r.seconds(r.steps) for r in later)
        )
        return left * pace + setup * sum(r.steps > 0 for r in later)


class Progress:
    """The "progress" events of a series of training runs: at most one every TRAINING_PROGRESS_EVERY_S
    seconds, plus each validation and the last step. The ETA is the whole job's (JobClock); without a
    timed plan every run counts `steps` steps of equal cost."""

    def __init__(self, ctx: RunContext, runs: int, steps: int, clock: JobClock | None = None) -> None:
        self.ctx, self.runs, self.steps = ctx, runs, steps
        self.clock = clock or JobClock([RunPlan(steps, 1.0)] * runs, timed=False)

    def of_run(
        self, index: int, label: dict[str, Any], also: Callable[[Any], None] | None = None
    ) -> Callable[[Any], None]:
        """The `on_progress` callback of run `index` (from 0), shown as `label`; `also` sees every step.
        Call it just before the run starts: the time to its first step is the run's set-up."""
        last_emit = 0.0
        started = time.perf_counter()
        first = True

        def on_progress(pr) -> None:
            nonlocal last_emit, first
            if also is not None:
                also(pr)
            now = time.perf_counter()
            if first:
                first = False
                self.clock.setup(now - started - pr.elapsed_s)
            if pr.step >= pr.steps:
                self.clock.finish(index, pr.elapsed_s)
            if pr.val_loss is None and pr.step < pr.steps and now - last_emit < TRAINING_PROGRESS_EVERY_S:
                return
            last_emit = now
            self.ctx.emit(
                {
                    "event": "progress",
                    "run": index + 1,
                    "runs": self.runs,
                    "label": label,
                    "step": pr.step,
                    "steps": pr.steps,
                    "loss": pr.loss,
                    "val_loss": pr.val_loss,
                    "tokens_per_s": pr.tokens_per_s,
                    "eta_s": self.clock.eta(index, pr.step, pr.elapsed_s),
                }
            )

        return on_progress


TIMED_STEPS = 3  # steps timed per setting before a job starts (after one untimed warm-up step)


def pace(p: TrainCompareParams, n_head: int, pos: str) -> tuple:
    """What the time of one training step depends on: the model's shape and the batch."""
    return (p.n_layer, n_head, p.n_embd, pos, p.batch, p.context)


def _kept_pace(config: dict[str, Any]) -> tuple:
    model, train = config.get("model", {}), config.get("train", {})
    return (model.get("n_layer"), model.get("n_head"), model.get("n_embd"), model.get("pos"),
            train.get("batch_size"), train.get("context") or model.get("block_size"))  # fmt: skip


def _same_run(p: TrainCompareParams, seed: int, config: dict[str, Any]) -> bool:
    """Whether a kept run's configuration is the one this job would train (it is read back, not trained)."""
    model, train = config.get("model", {}), config.get("train", {})
    return (config.get("version") == KEY_VERSION and train.get("steps") == p.steps and train.get("seed") == seed
            and train.get("lr") == p.lr and train.get("eval_interval") == min(p.eval_interval, p.steps)
            and model.get("dropout") == p.dropout)  # fmt: skip


def planned_runs(p: TrainCompareParams) -> list[tuple[str, int, str, int]]:
    """(slug, n_head, pos, seed) of every run of the job, in order."""
    seeds = [p.seed + k for k in range(p.seeds)]
    return [(slug, n_head, pos, seed) for slug, n_head, pos in p.runs() for seed in seeds]


def expected_seconds(
    p: TrainCompareParams, kept: list[tuple[dict[str, Any], float | None, int]]
) -> float | None:
    """The job's length expected from the learner's finished runs, each given as (config, seconds, steps):
    every run still to train at the pace its setting had in the kept runs (the median seconds a step), a
    run kept with these very settings at 0 s; None when a setting was never trained."""
    paces: dict[tuple, list[float]] = {}
    for config, seconds, steps in kept:
        if seconds and steps:
            paces.setdefault(_kept_pace(config), []).append(seconds / steps)
    total = 0.0
    for _, n_head, pos, seed in planned_runs(p):
        key = pace(p, n_head, pos)
        if any(_kept_pace(c) == key and _same_run(p, seed, c) for c, _, _ in kept):
            continue
        if key not in paces:
            return None
        per = sorted(paces[key])
        total += p.steps * per[len(per) // 2]
    return total


def time_run(p: TrainCompareParams, n_head: int, pos: str, vocab_size: int) -> RunPlan:
    """A run of this setting as planned here: a training step timed over TIMED_STEPS steps on random
    windows (the same work as real ones) after a warm-up step, and one validation timed."""
    import torch

    from models.gpt import GPT, GPTConfig
    from models.train import TrainConfig, evaluate, make_optimizer, train_step, use_bf16

    if p.threads:
        torch.set_num_threads(p.threads)
    cfg = TrainConfig(steps=TIMED_STEPS + 1, batch_size=p.batch, context=p.context, lr=p.lr)
    model = GPT(GPTConfig(block_size=p.context, n_layer=p.n_layer, n_head=n_head, n_embd=p.n_embd, pos=pos,
                          dropout=p.dropout, vocab_size=vocab_size))  # fmt: skip
    optimizer = make_optimizer(model, cfg)
    x, y = torch.randint(vocab_size, (2, p.batch, p.context))
    bf16 = use_bf16(cfg.precision, "cpu")
    train_step(model, optimizer, x, y, cfg, p.lr, "cpu", bf16)
    t0 = time.perf_counter()
    for _ in range(TIMED_STEPS):
        train_step(model, optimizer, x, y, cfg, p.lr, "cpu", bf16)
    t1 = time.perf_counter()
    evaluate(model, [(x, y)] * cfg.eval_batches)
    t2 = time.perf_counter()
    return RunPlan(p.steps, (t1 - t0) / TIMED_STEPS, min(p.eval_interval, p.steps), t2 - t1)


def run_train_compare(p: TrainCompareParams, ctx: RunContext) -> Result:
    from models.tokenizer import CharTokenizer
    from tutor.experiments.course_text import course_texts

    texts = course_texts()
    tokenizer = CharTokenizer.for_training(texts[0])  # the vocabulary policy of `python -m tutor train`
    corpus_id = hashlib.sha256((texts[0] + "\0" + texts[1]).encode()).hexdigest()[:16]
    runs = planned_runs(p)
    configs = [run_config(p, n_head, pos, corpus_id, seed) for _, n_head, pos, seed in runs]
    kept = [ctx.stored_run(run_key(c)) if ctx.stored_run is not None else None for c in configs]
    clock = _job_clock(p, runs, kept, tokenizer.vocab_size, ctx)
    ctx.emit({"event": "estimate", "seconds": clock.planned_s, "runs": len(runs),
              "stored": sum(k is not None for k in kept)})  # fmt: skip
    done: list[dict[str, Any]] = []
    progress = Progress(ctx, len(runs), p.steps, clock)
    for index, (run, config, stored) in enumerate(zip(runs, configs, kept, strict=True)):
        _, n_head, pos, seed = run
        # events are JSON: the Msg as its fields
        label = run_label(n_head, pos, p.vary, seed if p.seeds > 1 else None).model_dump()
        ctx.check()
        if stored is not None:
            ctx.emit({"event": "stored", "run": index + 1, "runs": len(runs), "label": label})
            curve = [[s, tl, vl] for s, tl, vl in stored.curve]
            done.append(_finished(p, run, stored.final_val_loss, stored.params, stored.seconds, curve, True))
            continue
        on_progress = progress.of_run(index, label)
        done.append(_train_run(p, run, config, texts, tokenizer, on_progress, ctx))
    return compare_runs(p, done)


def _job_clock(
    p: TrainCompareParams, runs: list[tuple], kept: list, vocab_size: int, ctx: RunContext
) -> JobClock:
    """The job's length before it starts: each setting still to train timed for a few steps."""
    timed: dict[tuple, RunPlan] = {}
    for (_, n_head, pos, _), stored in zip(runs, kept, strict=True):
        if stored is None and pace(p, n_head, pos) not in timed:
            ctx.check()
            timed[pace(p, n_head, pos)] = time_run(p, n_head, pos, vocab_size)
    return JobClock([
        RunPlan(0, 0.0) if stored is not None else timed[pace(p, n_head, pos)]
        for (_, n_head, pos, _), stored in zip(runs, kept, strict=True)
    ])  # fmt: skip


def _train_run(p: TrainCompareParams, run: tuple, config: dict[str, Any], texts: tuple[str, str], tokenizer,
               on_progress: Callable, ctx: RunContext) -> dict[str, Any]:  # fmt: skip
    """Train one run of the job and announce it (a "trained" event, for the caller to keep)."""
    from models.gpt import GPTConfig
    from models.train import TrainConfig, train

    trained = train(
        GPTConfig(**config["model"]),
        TrainConfig(**{**config["train"], "threads": p.threads}),
        *texts,
        on_progress=on_progress,
        should_stop=ctx.should_stop,
        tokenizer=tokenizer,
    )
    if trained.cancelled:
        raise Cancelled()
    curve = [[pt["step"], pt["loss"], pt["val_loss"]] for pt in trained.curve]
    ctx.emit({"event": "trained", "key": run_key(config), "config": config, "final_val_loss": trained.final_val_loss,
              "params": trained.num_params, "seconds": trained.seconds, "curve": curve})  # fmt: skip
    return _finished(p, run, trained.final_val_loss, trained.num_params, trained.seconds, curve, False)


def _finished(p: TrainCompareParams, run: tuple, val_loss: float | None, params: int | None,
              seconds: float | None, curve: list[list], stored: bool) -> dict[str, Any]:  # fmt: skip
    """A finished run as compare_runs reads it."""
    slug, n_head, pos, seed = run
    return {"label": run_label(n_head, pos, p.vary).model_dump(), "slug": slug, "seed": seed, "val_loss": val_loss,
            "params": params, "seconds": seconds, "curve": curve, "stored": stored}  # fmt: skip


def _lowest(curve: list[list]) -> tuple[float | None, int | None]:
    points = [(c[2], c[0]) for c in curve if c[2] is not None]
    return min(points) if points else (None, None)


def compare_runs(p: TrainCompareParams, done: list[dict[str, Any]]) -> Result:
    """The Result of finished runs: per run its label (a Msg's fields, without the seed), slug, seed, losses,
    parameters, seconds, curve and whether it was stored."""
    metrics: dict[str, float] = {}
    rows, settings, lows, overfit = _per_run(p, done, metrics)
    means, spreads, summary = _per_setting(settings, metrics)
    best = min(means, key=means.get)
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
        summary.append([s["label"], Num(means[slug]), Num(metrics[f"min_val_loss_{slug}"]),
                        Num(spread, 2) if several else None, s["params"]])  # fmt: skip
    return means, spreads, summary


def _note(settings: dict[str, dict[str, Any]], means: dict[str, float], spreads: dict[str, float], best: str,
          varied: Msg, lows: list[tuple[float, int, Msg]], overfit: dict[str, Msg],
          metrics: dict[str, float]) -> Msg:  # fmt: skip
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
