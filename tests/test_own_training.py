"""`python -m tutor exercise train rope`: once the learner's file passes, the model it builds is trained in
the grading box beside the course GPT with a learned position table, on the same batches, through the
real CLI, judge and worker. A file that does not pass is not trained; a model that stops giving a finite
loss stops the run with a reason; an exercise without a model says so. The losses shown are the judge's,
from the model's logits: a model that reports 1/100 of its loss shows its real loss, and one that reads
the next character of a validation window is refused."""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env, tutor_here
from tests.grading_helpers import grading_processes_left

# six exercise-train runs in their boxes at once take 23 s: in the slow run (CI runs it), outside the
# default run's budget (docs/development.md)
pytestmark = pytest.mark.slow

ROPE = ROOT / "tutor/lessons/03-rope-alibi/exercises/rope"
# passes every check (those probe batches of 1 and 4), then gives a NaN loss on the training batches of 10
NAN_AT_TEN = """

_built = build_model


def build_model(cfg):
    model = _built(cfg)
    forward = model.forward

    def odd(idx, targets=None, *args, **kwargs):
        logits, loss = forward(idx, targets, *args, **kwargs)
        if targets is not None and idx.size(0) == 10:
            loss = loss * float("nan")
        return logits, loss

    model.forward = odd
    return model
"""
# passes every check (its logits are the reference's), then reports 1/100 of its loss in eval mode
MODEST = """

_built = build_model


def build_model(cfg):
    model = _built(cfg)
    forward = model.forward

    def modest(idx, targets=None, *args, **kwargs):
        logits, loss = forward(idx, targets, *args, **kwargs)
        if loss is not None and not model.training:
            loss = loss / 100
        return logits, loss

    model.forward = modest
    return model
"""
# passes every check, then reads the next character in eval mode on the training run's windows (6 of 64)
PEEKS = """

_built = build_model


def build_model(cfg):
    model = _built(cfg)
    forward = model.forward

    def peeks(idx, targets=None, *args, **kwargs):
        logits, loss = forward(idx, targets, *args, **kwargs)
        if not model.training and tuple(idx.shape) == (6, 64):
            logits = logits.clone()
            logits[:, :-1].scatter_(-1, idx[:, 1:, None], 30.0)
        return logits, loss

    model.forward = peeks
    return model
"""


def tutor(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The CLI with its own TMPDIR, so the processes of its grade can be found (grading_processes)."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {**run_tutor_env(home), "TMPDIR": str(home / "tmp")}
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _home(root: Path, name: str, source: str | None) -> Path:
    home = root / name
    if source is not None:  # `exercise start` in this process (test_grading_cli runs it as a real one)
        assert tutor_here("exercise", "start", "rope", home=home).returncode == 0
        (home / "workspace" / "rope" / "rope.py").write_text(source, encoding="utf-8")
    return home


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """The four runs at once, each in a home of its own."""
    root = tmp_path_factory.mktemp("own")
    solution = (ROPE / "solution.py").read_text(encoding="utf-8")
    cases = {
        "solution": (_home(root, "solution", solution), ("--steps", "6")),
        "starter": (_home(root, "starter", (ROPE / "starter.py").read_text(encoding="utf-8")), ()),
        "nan": (_home(root, "nan", solution + NAN_AT_TEN), ("--steps", "6")),
        "modest": (_home(root, "modest", solution + MODEST), ("--steps", "1")),
        "peeks": (_home(root, "peeks", solution + PEEKS), ("--steps", "1")),
        "no-model": (_home(root, "no-model", None), ()),
    }

    def run(item):
        name, (home, extra) = item
        ex = "split-heads" if name == "no-model" else "rope"
        return name, (home, tutor(home, "exercise", "train", ex, *extra))

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(run, cases.items()))


def _losses(out: str) -> dict[int, tuple[float, float]]:
    found = re.findall(r"validation at step (\d+): yours ([\d.]+), learned positions ([\d.]+)", out)
    return {int(step): (float(a), float(b)) for step, a, b in found}


def test_a_passing_file_trains_its_model_beside_the_learned_table(runs):
    home, proc = runs["solution"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    losses = _losses(proc.stdout)
    assert sorted(losses) == [0, 6]
    (mine0, theirs0), (mine6, theirs6) = losses[0], losses[6]
    # both start near ln(6010) = 8.70, the loss of knowing nothing, and both learn in 6 steps
    assert all(8.0 < x < 9.5 for x in (mine0, theirs0))
    assert mine6 < mine0 - 0.5 and theirs6 < theirs0 - 0.5
    assert "step 6/6" in proc.stdout
    # its length is said once it is measured, on its first steps here, before the steps after them
    timed = re.search(r"timed on its first 5 steps here: about (\d+) s in all", proc.stdout)
    assert timed and int(timed[1]) >= 1 and timed.start() < proc.stdout.index("step 6/6")
    done = re.search(
        r"After 6 steps \(\d+ s\) the validation loss of your model is ([\d.]+), the course GPT "
        r"with learned positions ([\d.]+)",
        proc.stdout,
    )
    assert done and (float(done[1]), float(done[2])) == (mine6, theirs6)
    assert not grading_processes_left(home / "tmp")  # nothing outlives the run


def test_a_file_that_does_not_pass_is_not_trained(runs):
    _, proc = runs["starter"]
    assert proc.returncode == 1
    assert "Train your model once your file passes" in proc.stdout and "validation" not in proc.stdout


def test_a_model_without_a_finite_loss_stops_the_run_with_a_reason(runs):
    _, proc = runs["nan"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "The training stopped: at step 1 your model gave no finite loss" in proc.stdout  # its first step
    assert "Traceback" not in proc.stdout + proc.stderr


def test_the_losses_shown_are_computed_from_the_logits_not_taken_from_the_model(runs):
    _, honest = runs["solution"]
    _, proc = runs["modest"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _losses(proc.stdout)[0] == _losses(honest.stdout)[0]  # the same model: the same losses, not 1/100
    assert (
        8.0 < _losses(proc.stdout)[0][0] < 9.5
        and float(re.search(r"step 1/1  loss ([\d.]+)", proc.stdout)[1]) > 8.0
    )


def test_a_model_that_reads_the_next_character_is_refused(runs):
    _, proc = runs["peeks"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(
        r"The training stopped: at step 0 your model's logits for the first \d+ characters of a window"
        r" changed when it was given the characters after them",
        proc.stdout,
    ), proc.stdout
    assert "validation at step" not in proc.stdout


def test_an_exercise_without_a_model_says_so(runs):
    _, proc = runs["no-model"]
    assert proc.returncode == 2
    assert "split-heads builds no model to train" in proc.stderr


@pytest.mark.slow  # the CLI tests above run the same judge and worker path; this adds the lab's key and lines
async def test_the_lab_trains_a_passing_file_on_t_and_shows_both_losses(home):
    """In the app: t does nothing useful before a pass (it says so), and after one it trains the model
    in a judge forked from the app's warm judge, the validations staying on screen."""
    import shutil

    from textual.widgets import Static

    from tests.ui_helpers import drawn_text, make_app, settle, unlock_exercise, until

    app = make_app(home)
    async with app.run_test(size=(100, 40)) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "rope")
        ex = app.tutor.exercise("rope")[1]
        ex.train.steps = 5  # a short run: the same path as the 300 steps a learner gets
        assert not screen.check_action("train", ())  # no pass yet: the key is not offered
        shutil.copyfile(ROPE / "solution.py", screen.file)
        await pilot.press("g")
        await settle(app, 0.3)
        assert screen.result.status == "pass" and screen.check_action("train", ())
        await pilot.press("t")
        await until(pilot, lambda: "After 5 steps" in drawn_text(screen.query_one("#ex-train", Static)), 60)
        shown = drawn_text(screen.query_one("#ex-train", Static))
        assert "validation at step 0: yours" in shown and "validation at step 5: yours" in shown
        mine, theirs = re.search(
            r"your model is ([\d.]+), the course GPT with learned positions ([\d.]+)", shown
        ).groups()
        assert 5.0 < float(mine) < 9.0 and 5.0 < float(theirs) < 9.0
