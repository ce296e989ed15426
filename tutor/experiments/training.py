"""train-compare: train the course model several times, changing only the head count or the
position mode, and compare validation loss, parameter count and time.

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
from dataclasses import asdict
from typing import Any

from tutor.experiments.base import RunContext
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
from tutor.settings import TRAINING_PROGRESS_EVERY_S

KEY_VERSION = 1


def run_config(p: TrainCompareParams, n_head: int, pos: str, corpus_id: str) -> dict[str, Any]:
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
        seed=p.seed,
    )
    model_dict = model.to_dict()
    model_dict.pop("vocab_size")  # set from the corpus by train()
    return {"version": KEY_VERSION, "model": model_dict, "train": asdict(train), "corpus": corpus_id}


def run_key(config: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:20]
    return f"train-compare:{digest}"


TEXT = "exp.train-compare."


def run_label(n_head: int, pos: str, vary: str) -> Msg:
    """A run as the learner reads it: "4 heads", or the position mode ("learned positions")."""
    if vary != "heads":
        return Msg(f"term.pos.{pos}")
    return Msg(f"{TEXT}one_head") if n_head == 1 else Msg(f"{TEXT}heads", n=n_head)


def run_train_compare(p: TrainCompareParams, ctx: RunContext) -> Result:
    from models.corpus import corpus_text, load_poems, split_poems
    from models.gpt import GPTConfig
    from models.train import TrainConfig, train

    train_poems, val_poems = split_poems(load_poems())
    train_text, val_text = corpus_text(train_poems), corpus_text(val_poems)
    corpus_id = hashlib.sha256((train_text + "\0" + val_text).encode()).hexdigest()[:16]
    runs = p.runs()
    done: list[dict[str, Any]] = []
    per_step_s: float | None = None
    for index, (slug, n_head, pos) in enumerate(runs):
        label = run_label(n_head, pos, p.vary).model_dump()  # events are JSON: the Msg as its fields
        ctx.check()
        config = run_config(p, n_head, pos, corpus_id)
        key = run_key(config)
        stored = ctx.stored_run(key) if ctx.stored_run is not None else None
        if stored is not None:
            ctx.emit({"event": "stored", "run": index + 1, "runs": len(runs), "label": label})
            done.append(
                {
                    "label": label,
                    "slug": slug,
                    "val_loss": stored.final_val_loss,
                    "params": stored.params,
                    "seconds": stored.seconds,
                    "curve": [[s, tl, vl] for s, tl, vl in stored.curve],
                    "stored": True,
                }
            )
            continue
        last_emit = 0.0

        def on_progress(pr, index=index, label=label) -> None:
            nonlocal last_emit, per_step_s
            per_step_s = pr.elapsed_s / max(pr.step, 1)
            now = time.perf_counter()
            if pr.val_loss is None and pr.step < pr.steps and now - last_emit < TRAINING_PROGRESS_EVERY_S:
                return
            last_emit = now
            later = len(runs) - index - 1
            ctx.emit(
                {
                    "event": "progress",
                    "run": index + 1,
                    "runs": len(runs),
                    "label": label,
                    "step": pr.step,
                    "steps": pr.steps,
                    "loss": pr.loss,
                    "val_loss": pr.val_loss,
                    "tokens_per_s": pr.tokens_per_s,
                    "eta_s": pr.eta_s + later * p.steps * per_step_s,
                }
            )

        trained = train(
            GPTConfig(**config["model"]),
            TrainConfig(**{**config["train"], "threads": p.threads}),
            train_text,
            val_text,
            on_progress=on_progress,
            should_stop=ctx.should_stop,
        )
        if trained.cancelled:
            raise Cancelled()
        curve = [[pt["step"], pt["loss"], pt["val_loss"]] for pt in trained.curve]
        ctx.emit(
            {
                "event": "trained",
                "key": key,
                "config": config,
                "final_val_loss": trained.final_val_loss,
                "params": trained.num_params,
                "seconds": trained.seconds,
                "curve": curve,
            }
        )
        done.append(
            {
                "label": label,
                "slug": slug,
                "val_loss": trained.final_val_loss,
                "params": trained.num_params,
                "seconds": trained.seconds,
                "curve": curve,
                "stored": False,
            }
        )
    return compare_runs(p, done)


def _lowest(curve: list[list]) -> tuple[float | None, int | None]:
    points = [(c[2], c[0]) for c in curve if c[2] is not None]
    return min(points) if points else (None, None)


def compare_runs(p: TrainCompareParams, done: list[dict[str, Any]]) -> Result:
    """The Result of finished runs: per run its label (a Msg's fields), slug, losses, parameters,
    seconds, curve and whether it was stored."""
    metrics: dict[str, float] = {}
    rows = []
    lows: list[tuple[float, int, Msg]] = []  # (lowest val loss, its step, label) of each validated run
    overfit: list[Msg] = []  # runs whose val loss rose again before the end
    for r in done:
        low, at = _lowest(r["curve"])
        label = Msg.model_validate(r["label"])
        metrics[f"val_loss_{r['slug']}"] = r["val_loss"]
        if low is not None:
            metrics[f"min_val_loss_{r['slug']}"] = low
            lows.append((low, at, label))
        if (low or r["val_loss"]) < r["val_loss"] - 0.02:
            overfit.append(label)
        metrics[f"params_{r['slug']}"] = r["params"]
        metrics[f"seconds_{r['slug']}"] = r["seconds"]
        lowest = Msg(f"{TEXT}at", loss=Num(low), step=at) if low is not None else None
        source = Msg(f"{TEXT}stored" if r["stored"] else f"{TEXT}trained")
        rows.append([label, Num(r["val_loss"]), lowest, r["params"], Num(r["seconds"], decimals=1), source])
    best = min(done, key=lambda r: r["val_loss"])
    metrics["lowest_final_val_loss"] = best["val_loss"]
    varied = Msg(f"{TEXT}head_count" if p.vary == "heads" else f"{TEXT}pos_mode")
    overfit_note: Msg | str = ""
    if overfit and lows:
        low, at, label = min(lows, key=lambda t: t[:2])
        metrics["lowest_val_loss"] = low
        overfit_note = Msg(f"{TEXT}overfit", runs=overfit, best=label, loss=Num(low), step=at)
    note = Msg(
        f"{TEXT}note",
        best=Msg.model_validate(best["label"]),
        loss=Num(best["val_loss"]),
        spread=Num(max(r["val_loss"] for r in done) - best["val_loss"], 3),
        varied=varied,
        overfit=overfit_note,
    )
    panels = [
        TablePanel(
            title=Msg(f"{TEXT}table", runs=len(done), steps=p.steps, batch=p.batch, context=p.context),
            columns=[
                varied,
                *columns(f"{TEXT}col.", "final", "lowest"),
                Msg("exp.col.params"),
                *columns(f"{TEXT}col.", "seconds", "source"),
            ],
            rows=rows,
        ),
        SeriesPanel(
            title=Msg(f"{TEXT}plot"),
            x_label=Msg(f"{TEXT}step"),
            y_label=Msg(f"{TEXT}val_loss"),
            series=[
                Series(
                    name=Msg.model_validate(r["label"]),
                    x=[float(c[0]) for c in r["curve"]],
                    y=[c[2] for c in r["curve"]],
                )
                for r in done
            ],
        ),
        reading(note),
    ]
    return result("train-compare", p, metrics, panels)
