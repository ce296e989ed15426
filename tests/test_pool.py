"""A training job's runs in worker processes side by side: the same numbers bit for bit as one after another
in one process, every finished run reported as it ends, a task's failure reported as the job's, and a cancel
that leaves no worker behind."""

from __future__ import annotations

import os
import time

import pytest

from tutor.experiments.course import training
from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.params import TrainCompareParams
from tutor.experiments.pool import InlinePool, Pool, pool_size

TINY = TrainCompareParams(
    steps=12, n_embd=16, n_layer=1, batch=2, context=8, eval_interval=6, heads=[1, 2], seeds=2
)


def _tasks() -> list[tuple[str, dict]]:
    _, _, corpus_id = training._course_data()
    return [
        ("train", {"config": training.run_config(TINY, n_head, pos, corpus_id, seed)})
        for _, n_head, pos, seed in training.planned_runs(TINY)
    ]


@pytest.mark.slow  # 6-10 s: over the default run's budget (docs/development.md); CI's slow run has it
def test_runs_trained_side_by_side_give_the_numbers_of_runs_trained_one_after_another():
    events: list[tuple[int, str]] = []
    bad = ("train", {"config": {"model": {"n_embd": 15, "n_head": 2}, "train": {}}})
    with Pool("train-compare", 2, 1) as pool:
        parallel = pool.map(_tasks(), lambda task, event: events.append((task, event["event"])))
        with pytest.raises(ExperimentError) as err:  # a task's failure is the job's, in words
            pool.map([bad, bad])
        assert "n_embd" in str(err.value)
    with InlinePool(1) as here:
        alone = here.map(_tasks())
    for side, one in zip(parallel, alone, strict=True):
        assert side["curve"] == one["curve"] and side["final_val_loss"] == one["final_val_loss"]
        assert side["params"] == one["params"]
    # each run reports its first step, its validations and its end; "done" comes once per run
    assert sorted(task for task, kind in events if kind == "done") == [0, 1, 2, 3]
    assert all(any(t == task and kind == "report" for t, kind in events) for task in range(4))


def test_a_cancelled_pool_leaves_no_worker_behind():
    started = time.monotonic()
    pool = Pool("train-compare", 2, 1, should_stop=lambda: time.monotonic() - started > 1.0)
    long = [
        (
            "train",
            {**args, "config": {**args["config"], "train": {**args["config"]["train"], "steps": 10**6}}},
        )
        for _, args in _tasks()
    ]
    with pytest.raises(Cancelled), pool:
        pids = [w.proc.pid for w in pool._procs]
        pool.map(long)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_pool_has_a_worker_per_core_never_more_than_runs(monkeypatch):
    from tutor.experiments import pool

    monkeypatch.setattr(pool, "cores", lambda: 8)
    assert pool_size(6, 1) == 6 and pool_size(20, 1) == 8 and pool_size(20, 2) == 4 and pool_size(1, 1) == 1
    assert pool_size(6, 16) == 1
