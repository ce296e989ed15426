"""Long experiments in a child process: progress streaming, stored runs, cancelling (no child and
no half-written file left behind), failures reported, and the next run still working.
A tiny model and a few steps keep each child run to a few seconds."""

from __future__ import annotations

import asyncio
import os

import pytest

from tutor.experiments.errors import ExperimentError
from tutor.experiments.runner import run_in_child
from tutor.progress.store import Store

TINY = {
    "steps": 12,
    "n_embd": 16,
    "n_layer": 1,
    "batch": 2,
    "context": 8,
    "eval_interval": 6,
    "heads": [1, 2],
    "seeds": 1,
    "threads": 1,  # tiny tensors: one thread avoids thread-pool hand-offs on a busy machine
}


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _files(home) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()}


@pytest.mark.slow  # 21 s; default run: a training child's progress in test_ui_experiments, stored runs reused below
async def test_train_compare_streams_progress_stores_runs_and_reuses_them(home):
    events: list[dict] = []
    result = await run_in_child("train-compare", TINY, events.append, home=home, use_cache=False)
    assert set(result.metrics) >= {
        "val_loss_h1",
        "val_loss_h2",
        "params_h1",
        "seconds_h2_s1337",
        "min_val_loss_h1",
        "lowest_final_val_loss",
    }
    assert result.metrics["params_h1"] == result.metrics["params_h2"]  # heads regroup, add nothing
    progress = [e for e in events if e["event"] == "progress"]
    assert {e["run"] for e in progress} == {1, 2} and progress[-1]["step"] == progress[-1]["steps"] == 12
    assert {"loss", "val_loss", "tokens_per_s", "eta_s", "label", "runs"} <= set(progress[-1])
    with Store(home) as store:
        runs = store.training_runs(status="done")
    assert len(runs) == 2
    assert sorted(r.final_val_loss for r in runs) == sorted(
        [result.metrics["val_loss_h1"], result.metrics["val_loss_h2"]]
    )

    # asked again (one more head count), the two finished runs are read back, only the new one trains
    again_events: list[dict] = []
    again = await run_in_child("train-compare", {**TINY, "heads": [1, 2, 4]}, again_events.append, home=home)
    assert [e["run"] for e in again_events if e["event"] == "stored"] == [1, 2]
    assert {e["run"] for e in again_events if e["event"] == "progress"} == {3}
    assert again.metrics["val_loss_h1"] == result.metrics["val_loss_h1"]
    rows = again.shown("en").panels[0].rows
    assert rows[0][-1] == "stored" and rows[2][-1] == "trained"


def _two_seeds_measured_and_shown(result):
    """What train-compare makes of one and two heads with seeds 1337 and 1338: per setting the mean and
    spread over its seeds, the largest spread, the gap, the tables and the note. Returns the runs table."""
    m = result.metrics
    for h in (1, 2):
        finals = [m[f"val_loss_h{h}_s1337"], m[f"val_loss_h{h}_s1338"]]
        assert m[f"val_loss_h{h}"] == pytest.approx(sum(finals) / 2)
        assert m[f"seed_spread_h{h}"] == pytest.approx(max(finals) - min(finals))
        seconds = [m[f"seconds_h{h}_s1337"], m[f"seconds_h{h}_s1338"]]
        assert m[f"seconds_h{h}"] == pytest.approx(sum(seconds) / 2)  # the names of one-seed runs stay
    assert m["seed_spread"] == max(m["seed_spread_h1"], m["seed_spread_h2"])
    assert m["gap"] == pytest.approx(abs(m["val_loss_h1"] - m["val_loss_h2"]))
    shown = result.shown("en")
    runs, means = shown.panels[0], shown.panels[1]
    assert [row[:2] for row in runs.rows] == [
        ["1 head", "1337"],
        ["1 head", "1338"],
        ["2 heads", "1337"],
        ["2 heads", "1338"],
    ]
    assert means.columns[1:4] == ["mean final val loss", "mean lowest val loss", "seed spread"]
    note = shown.panels[-1].text
    assert "another seed moved the final loss by up to" in note
    assert ("cannot rank them" in note) == (m["gap"] <= m["seed_spread"])
    return runs


def test_train_compare_asks_for_every_setting_with_each_seed_and_measures_the_spread():
    """The slow test below on a smaller case, in this process and without training: every head count is
    asked for with each seed, each under its own key, and the runs handed back make the result (means,
    spreads, gap, the tables and the note) as four trained runs do."""
    from types import SimpleNamespace

    from tutor.experiments.runner import run_here

    finals = {(1, 1337): 5.40, (1, 1338): 5.46, (2, 1337): 5.30, (2, 1338): 5.33}
    asked: list[str] = []

    def stored_run(key: str) -> SimpleNamespace:
        h, seed = list(finals)[len(asked)]  # the order train-compare asks in: each setting, each seed
        asked.append(key)
        return SimpleNamespace(
            final_val_loss=finals[h, seed],
            params=4000,
            seconds=10.0 + len(asked),
            curve=[(6, 5.6, finals[h, seed] + 0.1), (12, 5.5, finals[h, seed])],
        )

    events: list[dict] = []
    result = run_here(
        "train-compare", {**TINY, "seeds": 2}, on_event=events.append, stored_run=stored_run, use_cache=False
    )
    assert len(set(asked)) == 4  # each seed is a run of its own, kept under its own key
    assert [e["run"] for e in events if e["event"] == "stored"] == [1, 2, 3, 4]
    m = result.metrics
    for h in (1, 2):
        assert [m[f"val_loss_h{h}_s1337"], m[f"val_loss_h{h}_s1338"]] == [finals[h, 1337], finals[h, 1338]]
    runs = _two_seeds_measured_and_shown(result)
    assert {row[-1] for row in runs.rows} == {"stored"}


@pytest.mark.slow  # the test above proves the same without training; this one trains the four runs
async def test_train_compare_runs_every_setting_with_each_seed_and_measures_the_spread(home):
    events: list[dict] = []
    result = await run_in_child(
        "train-compare", {**TINY, "seeds": 2}, events.append, home=home, use_cache=False
    )
    _two_seeds_measured_and_shown(result)
    assert {e["run"] for e in events if e["event"] == "progress"} == {1, 2, 3, 4}
    with Store(home) as store:
        seeds = sorted(r.config["train"]["seed"] for r in store.training_runs(status="done"))
    assert seeds == [1337, 1337, 1338, 1338]  # each seed is a run of its own, kept under its own key


@pytest.mark.slow  # default run: the asyncio cancel below (no child left), test_training's should_stop (no file)
async def test_cancelling_a_training_child_leaves_no_process_and_no_half_written_file(home):
    seen: list[dict] = []
    training = asyncio.Event()

    def on_event(event: dict) -> None:
        seen.append(event)
        if event["event"] == "progress" and event["step"] >= 2:
            training.set()

    before = _files(home)
    task = asyncio.create_task(
        run_in_child("train-compare", {**TINY, "steps": 20000}, on_event, home=home, grace_s=10)
    )
    await asyncio.wait_for(training.wait(), 120)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = next(e["pid"] for e in seen if e["event"] == "start")
    assert _gone(pid)
    with Store(home) as store:
        assert store.training_runs(status="done") == []
    leftovers = {f for f in _files(home) - before if not f.startswith("progress.sqlite3")}
    assert leftovers == set()  # no checkpoint or temp file half written


@pytest.mark.slow  # a long job's timing comes before its first progress: 16 s
async def test_cancelling_the_asyncio_task_terminates_the_child(home):
    started = asyncio.Event()
    pids: list[int] = []

    def on_event(event: dict) -> None:
        if event["event"] == "start":
            pids.append(event["pid"])
        if event["event"] == "progress":
            started.set()

    task = asyncio.create_task(
        run_in_child("train-compare", {**TINY, "steps": 20000}, on_event, home=home, niceness=5)
    )
    await asyncio.wait_for(started.wait(), 60)
    assert os.getpriority(os.PRIO_PROCESS, pids[0]) >= os.getpriority(os.PRIO_PROCESS, 0) + 5  # niceness
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pids and _gone(pids[0])


@pytest.mark.slow  # 6-10 s: over the default run's budget (docs/development.md); CI's slow run has it
async def test_a_failed_child_reports_why_and_the_next_run_works(home, tmp_path, monkeypatch):
    monkeypatch.setenv("TUTOR_CHECKPOINTS", str(tmp_path / "no-checkpoints"))
    with pytest.raises(ExperimentError, match="gpt-learned.pt is missing") as failed:
        await run_in_child("permutation", {"seed": 11}, home=home)
    # the error crosses the process boundary as its key and values, worded in the parent's language
    assert failed.value.key == "err.experiment.no_checkpoint_train"
    assert failed.value.in_lang("de").startswith(
        f"der Checkpoint {tmp_path / 'no-checkpoints'}/gpt-learned.pt fehlt"
    )
    monkeypatch.undo()
    result = await run_in_child("rope-frequencies", {"d": 8}, home=home, use_cache=False)
    assert result.metrics["pairs"] == 4


async def test_a_result_larger_than_asyncios_default_line_limit_arrives_whole():
    # eight 64×64 bias maps: the result line is about 218 KB, past asyncio's default 64 KiB per line
    result = await run_in_child("alibi", {"n_head": 8, "T": 64}, use_cache=False)
    assert len(result.model_dump_json()) > 64 * 1024
    assert result.metrics["slope_first"] == 0.5 and result.metrics["slope_last"] == 1 / 256


def test_a_child_runs_result_is_kept_for_its_home_only(tmp_path):
    """A long experiment's result comes from that learner's stored runs: kept in the process for the
    home it ran in, never handed to a run in another home (two learners, or two tests, in one process)."""
    from types import SimpleNamespace

    from tutor.experiments.runner import _remember, cached, prepare

    _, params = prepare("train-compare", TINY)
    result = SimpleNamespace(experiment="train-compare")
    _remember(result, params, tmp_path / "ana")
    assert cached("train-compare", params, tmp_path / "ana") is result
    assert (
        cached("train-compare", params, tmp_path / "bo") is None and cached("train-compare", params) is None
    )
