"""A training job's ETA is the whole job's and settles instead of growing during a run; its
length is known before it starts (from the learner's kept runs, or timed for a few steps)."""

from __future__ import annotations

import json
import random
import re

import pytest

from tutor.experiments import pool
from tutor.experiments.course.training import JobClock, Progress, RunPlan, expected_seconds, run_config
from tutor.experiments.params import TrainCompareParams
from tutor.experiments.result import about
from tutor.experiments.run_context import RunContext
from tutor.texts import say
from tutor.ui.messages import Training
from tutor.ui.widgets.experiment_panel import job_line
from tutor.ui.widgets.key_bar import training_line

STEPS = 100
PLAN = [0.10, 0.15, 0.20]  # seconds a step, timed before the job: the runs' settings differ in speed
BUSY = 1.3  # the machine runs the job slower than the timing said
EVAL_EVERY, EVAL_S = 25, 0.6  # validations cost time the timing did not see


def _job(seed: int = 1) -> list[tuple[int, int, float, float]]:
    """(run index, step, the run's elapsed seconds, true seconds left of the job) for every step."""
    rng = random.Random(seed)
    times = [
        [
            per * BUSY * rng.uniform(0.8, 1.2) + (EVAL_S if s % EVAL_EVERY == 0 else 0.0)
            for s in range(1, STEPS + 1)
        ]
        for per in PLAN
    ]
    total = sum(map(sum, times))
    out, spent = [], 0.0
    for index, run in enumerate(times):
        elapsed = 0.0
        for step, seconds in enumerate(run, 1):
            elapsed += seconds
            spent += seconds
            out.append((index, step, elapsed, total - spent))
    return out


def test_the_eta_covers_the_whole_job_and_settles_instead_of_growing():
    events: list[dict] = []
    progress = Progress(
        RunContext(on_event=events.append),
        3,
        STEPS,
        JobClock([RunPlan(STEPS, per, EVAL_EVERY, EVAL_S / BUSY) for per in PLAN]),
    )
    shown = []
    for index, step, elapsed, truth in _job():
        progress.update(
            index, {"key": "x"}, {"step": step, "steps": STEPS, "elapsed_s": elapsed, "loss": 5.0}
        )
        eta = events[-1]["eta_s"]
        shown.append((index, step, eta, truth))
    etas = [eta for _, _, eta, _ in shown]
    # never grows by more than a few percent from one event to the next
    assert all(b <= a * 1.03 + 0.05 for a, b in zip(etas, etas[1:], strict=False))
    # at the last step of run 1 of 3 it is the two runs still to come, within 15% (not ~0)
    end_of_first = next(eta for i, s, eta, _ in shown if i == 0 and s == STEPS)
    truth = next(t for i, s, _, t in shown if i == 0 and s == STEPS)
    assert abs(end_of_first - truth) <= 0.15 * truth and truth > 40
    # from a tenth of the job on, within 20% of the truth; 0 at the end
    for _, _, eta, truth in shown[len(shown) // 10 : -10]:
        assert abs(eta - truth) <= 0.2 * truth
    assert etas[-1] == 0


def _parallel_job(workers: int, plan: list[float], seed: int = 2) -> list[tuple[int, int, float, float]]:
    """The reports of a job whose runs train on `workers` workers, each free worker taking the next run:
    (run, step, its elapsed seconds, true seconds left of the job), in the order they arrive."""
    rng = random.Random(seed)
    free = [0.0] * workers
    reports = []
    for index, per in enumerate(plan):
        worker = free.index(min(free))
        t = free[worker]
        elapsed = 0.0
        for step in range(1, STEPS + 1):
            seconds = per * BUSY * rng.uniform(0.8, 1.2) + (EVAL_S if step % EVAL_EVERY == 0 else 0.0)
            elapsed += seconds
            reports.append((t + elapsed, index, step, elapsed))
        free[worker] = t + elapsed
    end = max(free)
    return [(index, step, elapsed, end - at) for at, index, step, elapsed in sorted(reports)]


def test_with_two_workers_the_eta_is_the_jobs_makespan_and_settles():
    plan = [0.10, 0.10, 0.15, 0.15, 0.20, 0.20]  # head-count's six runs: three settings, two seeds each
    clock = JobClock([RunPlan(STEPS, per, EVAL_EVERY, EVAL_S / BUSY) for per in plan], workers=2)
    sequential = JobClock([RunPlan(STEPS, per, EVAL_EVERY, EVAL_S / BUSY) for per in plan])
    assert abs(clock.planned_s - sequential.planned_s / 2) <= 0.02 * sequential.planned_s
    events: list[dict] = []
    progress = Progress(RunContext(on_event=events.append), len(plan), STEPS, clock)
    shown = []
    for index, step, elapsed, truth in _parallel_job(2, plan):
        progress.update(
            index, {"key": "x"}, {"step": step, "steps": STEPS, "elapsed_s": elapsed, "loss": 5.0}
        )
        shown.append((events[-1]["eta_s"], truth))
    for eta, truth in shown[len(shown) // 10 : -10]:
        assert abs(eta - truth) <= 0.2 * truth
    assert shown[-1][0] == 0
    assert events[-1]["done"] == events[-1]["total"] == len(plan) * STEPS


def test_an_untimed_job_counts_its_runs_steps_at_the_pace_measured_so_far():
    clock = JobClock([RunPlan(10, 1.0)] * 2, timed=False)
    assert clock.eta(0, 5, 5.0) == 15.0  # 15 steps left at 1 s
    clock.finish(0, 20.0)
    assert clock.eta(0, 10, 20.0) == 20.0  # run 2's 10 steps at the 2 s the first run took


def _config(p: TrainCompareParams, n_head: int, seed: int, steps: int) -> dict:
    return run_config(p.model_copy(update={"steps": steps}), n_head, p.base_pos, "corpus", seed)


def test_the_expected_length_comes_from_the_learners_kept_runs(monkeypatch):
    monkeypatch.setattr(pool, "cores", lambda: 1)  # one run after another
    p = TrainCompareParams(vary="heads", heads=[1, 4], seeds=2, steps=500)
    kept = [
        (_config(p, 1, 1337, 1000), 100.0, 1000),  # 0.10 s a step
        (_config(p, 4, 1337, 1000), 140.0, 1000),
        (_config(p, 4, 1338, 1000), 150.0, 1000),
        (_config(p, 4, 1339, 1000), 200.0, 1000),  # median 0.15 s a step
    ]
    assert expected_seconds(p, kept) == 2 * 500 * 0.10 + 2 * 500 * 0.15
    # the same runs at 1000 steps are read back, not trained: only seed 1338 of one head is left
    same = p.model_copy(update={"steps": 1000})
    assert expected_seconds(same, kept) == 1000 * 0.10
    # a setting never trained: unknown until the job times it
    assert expected_seconds(TrainCompareParams(vary="heads", heads=[1, 8], steps=500), kept) is None
    assert expected_seconds(p, []) is None
    # on two cores two runs at a time: each worker trains one run of each setting
    monkeypatch.setattr(pool, "cores", lambda: 2)
    assert expected_seconds(p, kept) == 500 * 0.10 + 500 * 0.15
    # a job too short to be worth two workers is trained in one process, and expected so
    short = p.model_copy(update={"steps": 20})
    assert expected_seconds(short, kept) == 2 * 20 * 0.10 + 2 * 20 * 0.15


def test_a_jobs_first_word_needs_neither_torch_nor_the_corpus():
    """The length said as `r` is pressed (issue 42): computed in a fresh interpreter without torch being
    imported, the job's runs and the workers it will use, the pool's start-up counted, marked rough; its
    size alone decides pool or not (a short job trains in its own process)."""
    import subprocess
    import sys

    code = (
        "import json, sys; from tutor.experiments.course.training import rough_estimate; "
        "from tutor.experiments.params import TrainCompareParams as P; "
        "from tutor.experiments import pool; import os; pool.cores = lambda: 2; os.getloadavg = lambda: (0.0,) * 3; "
        "out = [rough_estimate(P(**a)) for a in json.loads(sys.argv[1])]; "
        "print(json.dumps([out, 'torch' in sys.modules]))"
    )
    jobs = [
        {"heads": [1, 4, 8], "seeds": 2},
        {"heads": [1], "steps": 20, "n_layer": 1, "n_embd": 8, "context": 8},
    ]
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(jobs)], capture_output=True, text=True, check=True
    )
    (default, short), torch_loaded = json.loads(proc.stdout)
    assert not torch_loaded
    assert (
        default["event"] == "estimate"
        and default["rough"]
        and default["runs"] == 6
        and default["workers"] == 2
    )
    assert short["runs"] == 2 and short["workers"] == 1  # 40 tiny steps: not worth a worker's start
    # an idle machine: the pool's start-up once, then three runs a worker of about a minute each
    assert 150 < default["seconds"] < 250 and short["seconds"] < 5


def test_the_first_word_in_the_app_uses_the_learners_kept_runs(monkeypatch):
    """As `r` is pressed the panel knows the learner's finished runs: one kept with these very settings is
    stored (not to train), a setting trained before goes at its measured pace, only the rest at the fit's."""
    import os

    from tutor.experiments.course.training import ROUGH_START_S, rough_estimate, rough_plan

    monkeypatch.setattr(pool, "cores", lambda: 1)  # one run after another
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    p = TrainCompareParams(vary="heads", heads=[1, 4, 8], seeds=2, steps=500)
    kept = [(_config(p, 1, 1337, 500), 50.0, 500), (_config(p, 4, 1337, 1000), 150.0, 1000)]
    word = rough_estimate(p, kept)
    eight = rough_plan(p, 8, p.base_pos)
    assert word["runs"] == 6 and word["stored"] == 1 and word["workers"] == 1 and word["rough"]
    # h1 seed 1338 at 0.10 s a step, h4 twice at 0.15 s (its 1000-step run), h8 twice as fitted
    expected = ROUGH_START_S["here"] + 500 * 0.10 + 2 * 500 * 0.15 + 2 * eight.seconds(500)
    assert word["seconds"] == pytest.approx(expected)


def test_the_training_line_says_the_jobs_length_before_it_starts():
    line = training_line(Training("train-compare", runs=6, eta_s=14 * 60 + 10), "de")
    assert "etwa 14 min insgesamt" in line
    assert say("run.about_min", "zh", m=3) in training_line(
        Training("train-compare", runs=6, eta_s=170), "zh"
    )
    assert about(90).in_lang("en") == "90 s"


def test_the_panels_training_status_is_the_jobs_and_says_the_stored_runs_it_reused():
    job = Training("train-compare", runs=6, finished=3, stored=2, done=1200, total=4000, eta_s=754.0)
    assert job_line(job, "de") == (
        "3 von 6 Läufen fertig · Schritt 1.200/4.000 des Auftrags · noch 12:34"
        " · 2 von 6 Läufen waren gespeichert: wiederverwendet"
    )
    before = Training("train-compare", runs=6, finished=2, stored=2, eta_s=90.0)  # timed, not started
    assert job_line(before, "en") == (
        "6 training runs: about 90 s in all (timed here) · starting… · 2 of 6 runs were stored: reused"
    )


def test_the_command_lines_training_lines_write_the_languages_numbers_and_the_jobs_length(capsys):
    from tutor.commands.experiment import _print_progress

    _print_progress("de", {"event": "estimate", "runs": 3, "seconds": 1500.0})
    event = {"event": "progress", "run": 1, "runs": 3, "label": "h1", "step": 100, "steps": 100}
    _print_progress("de", event | {"loss": 5.9071, "val_loss": 5.9183, "tokens_per_s": 9600.4, "eta_s": 61.0})
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == say("run.estimate", "de", runs=3, time=about(1500.0))
    assert "25 min" in lines[0]
    assert "5,907" in lines[1] and "5,918" in lines[1] and "5.907" not in lines[1]


@pytest.mark.slow
def test_a_measurement_at_an_unstored_scale_says_its_length_and_pace_before_it_ends(tmp_path):
    """context-scaling at scale 3 measures now (only 2, 4 and 8 are stored): stderr says how long it will
    take before the first batch and how far it is while it runs, and the first estimate is within 2x of what
    it took."""
    import subprocess
    import sys
    import time

    from tests.conftest import run_tutor_env

    began = time.monotonic()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tutor",
            "experiment",
            "context-scaling",
            "--set",
            "scale=3",
            "--set",
            "windows=64",
        ],
        capture_output=True,
        text=True,
        env=run_tutor_env(tmp_path),
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    took = time.monotonic() - began
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("Measuring scale 3 on 64 windows")]
    assert len(lines) >= 3 and "batch 0/" in lines[0], out.stderr
    first = re.search(r"about (\d+) s left", lines[0])
    assert first is not None and took / 2 <= int(first.group(1)) <= took * 2, (lines[0], took)
