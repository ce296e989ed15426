"""Feedback that teaches: a failed check names what the learner's result was and what it lacks, never the
reference's value for the learner's own question, and each check fails only for what it names.

head-count (an answer file graded against stored runs, through the real store and grader): the reference
values are what `reference_answer` reads off the runs; no failed check of the starter or of a wrong answer
says them. An answer with one key wrong (head-count's broken files: they depend on the runs, so they are made
here from the runs' own answer) fails that key's check and no other.

Code exercises (every starter and broken/ file, through the real judge and worker): a failed message that
names a call with plain arguments (`alibi_slopes(6)`, `scaled_inv_freq(8, 10000, 4, 'ntk', ...)`,
`order_gap(3, False, seed=…)`) asks a question the learner can ask their own code; the reference solution
and the graded file are both run on it here, and the message may hold the file's own numbers, never one of
the reference's that the file did not give. A call on tensors drawn in the judge cannot be asked again, so
its numbers are no answer to copy.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import re
import sys
import tomllib
from pathlib import Path

import pytest

from tutor.content.loader import load_course
from tutor.grading.runs import exercise_checks
from tutor.grading.submissions import grade_file
from tutor.grading.workspace import solution_file, starter_file
from tutor.i18n import LANGS
from tutor.progress.store import Store

ROOT = Path(__file__).resolve().parents[1]
COURSE = load_course(ROOT / "tutor" / "lessons")
CODE = [ex for ex in COURSE.exercises() if ex.kind == "code"]
HEAD_COUNT = COURSE.exercise("head-count")
CHECKS = exercise_checks(HEAD_COUNT)


# --- head-count ------------------------------------------------------------------------------------------


def _store(home: Path, losses: dict[int, float], spread: float) -> list[dict]:
    runs = CHECKS.sample_runs(losses, spread=spread)
    with Store(home) as store:
        for run in runs:
            store.record_training_run(
                run["key"],
                config=run["config"],
                status="done",
                final_val_loss=run["final_val_loss"],
                params=run["params"],
                seconds=90.0,
                curve=[(1000, 5.0, run["final_val_loss"])],
            )
    return runs


def _toml(answer: dict) -> str:
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in answer.items())


def _said(key: str, value) -> list[str]:
    """The ways a message could give `value` as the answer for `key`."""
    if isinstance(value, bool):
        return [f"{key} = {str(value).lower()}"]
    if isinstance(value, int):
        return [f"{key} = {value}", f"{key} = `{value}`"]
    return [f"{value:.4f}", f"{value:.3f}", f"{value:.3g}", f"{value:g}", repr(value), f"{key} ≈"]


def _wrong(key: str, reference: dict):
    """A wrong value for `key`: one the runs do not support, and not the other figure either."""
    value = reference[key]
    if isinstance(value, bool):
        return not value
    if key == "best_heads":
        return next(h for h in (1, 4, 8) if h != value)
    return round(value * 3 + 0.1, 4)


@pytest.mark.parametrize(
    "losses,spread", [({1: 5.412, 4: 5.371, 8: 5.398}, 0.01), ({1: 5.40, 4: 5.38, 8: 5.39}, 0.05)]
)
def test_head_count_feedback_names_the_learners_value_never_the_runs_figure(home, tmp_path, losses, spread):
    runs = _store(home, losses, spread)
    reference = CHECKS.reference_answer(runs)
    answers = {f"starter.{lang}": starter_file(HEAD_COUNT, lang).read_text("utf-8") for lang in LANGS}
    answers |= {f"wrong_{key}": _toml({**reference, key: _wrong(key, reference)}) for key in reference}
    answers["all_wrong"] = _toml({key: _wrong(key, reference) for key in reference})
    answers["swapped"] = _toml(
        {**reference, "loss_gap": reference["seed_spread"], "seed_spread": reference["loss_gap"]}
    )
    for name, text in answers.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text, encoding="utf-8")
        with Store(home) as store:
            result = grade_file(HEAD_COUNT, path, store=store, lang="en")
        own = tomllib.loads(text)
        failed = [c for c in result.checks if c.status != "pass"]
        assert failed, name
        for check in failed:
            for key, value in reference.items():
                if value in own.values():
                    continue  # a number the learner wrote (under this key or another) is theirs to see
                for shown in _said(key, value):
                    assert shown not in check.message, (name, check.name, shown, check.message)
        if name.startswith("wrong_"):  # one key wrong: its check fails, and no other
            assert [c.name for c in failed] == [name.removeprefix("wrong_")], [
                (c.name, c.message) for c in failed
            ]


def test_head_count_runs_done_passes_while_the_six_runs_are_stored(home, tmp_path):
    _store(home, {1: 5.30, 4: 5.35, 8: 5.40}, 0.01)
    with Store(home) as store:
        result = grade_file(HEAD_COUNT, starter_file(HEAD_COUNT), store=store)
    checks = {c.name: c for c in result.checks}
    assert checks["runs_done"].status == "pass", checks["runs_done"].message
    assert checks["loss_gap"].message == (
        "loss_gap = -1 is below 0, and the worst mean final val loss minus the best cannot be: "
        "subtract the smaller value from the larger"
    )


# --- code exercises: calls the learner can ask again ----------------------------------------------------

CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\(([^()\[\]]*)\)")
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d*(?:e[-+]?\d+)?|(?<![\w.])-?\d+e[-+]?\d+")
TUPLE = re.compile(r"\(\d+(?:, \d+)*,?\)")


def _module(path: Path):
    """A course file (a reference, a starter, a broken variant) imported here: trusted files of this
    repository, so the test can ask them the message's own calls."""
    name = f"_teaching_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _plain_calls(message: str) -> list[tuple[str, tuple, dict, str]]:
    """(function, args, kwargs, text) of each call in the message whose arguments are plain values."""
    calls = []
    for m in CALL.finditer(message):
        try:
            node = ast.parse(f"f({m.group(2)})", mode="eval").body
            args = tuple(ast.literal_eval(a) for a in node.args)
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        except (SyntaxError, ValueError):
            continue
        if args or kwargs:
            calls.append((m.group(1), args, kwargs, m.group(0)))
    return calls


def _numbers(value) -> list[float]:
    """Every finite number in what a call returned (a number, a list, a tensor), or [] if it raised."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [x for v in value for x in _numbers(v)]
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return [float(value)]
    return []


def _answers(module, name: str, args: tuple, kwargs: dict) -> list[float]:
    fn = getattr(module, name, None)
    if not callable(fn):
        return []
    try:
        return _numbers(fn(*args, **kwargs))
    except Exception:  # the starter's NotImplementedError, a broken file's own error: it gave nothing
        return []


def _close(x: float, values: list[float]) -> bool:
    return any(abs(x - v) <= 5e-6 * abs(v) + 1e-12 for v in values)


def leaked(message: str, reference, learner) -> list[float]:
    """The numbers in `message` that the reference gives for a call the message names, and the learner's
    file does not: answers the grade would be handing over."""
    calls = _plain_calls(message)
    if not calls:
        return []
    want = [x for name, a, k, _ in calls for x in _answers(reference, name, a, k)]
    own = [x for name, a, k, _ in calls for x in _answers(learner, name, a, k)] if learner else []
    text = message
    for *_, call in calls:
        text = text.replace(call, " ")
    text = TUPLE.sub(" ", text)  # indices
    return [x for x in map(float, NUMBER.findall(text)) if _close(x, want) and not _close(x, own)]


def test_the_detector_finds_a_reference_value_handed_over():
    reference = _module(solution_file(COURSE.exercise("alibi")))
    wrong = _module(COURSE.exercise("alibi").folder / "broken/power_of_two_only.py")
    assert leaked("alibi_slopes(6): expected 0.25 at index (0,), got 0.39685", reference, wrong) == [0.25]
    assert (
        leaked("alibi_slopes(6)[0] is 0.39685: not slope 0 of your alibi_slopes(4) (0.25)", reference, wrong)
        == []
    )


@pytest.fixture(scope="module")
def warm():
    from tutor.grading.judges import WarmJudge

    with WarmJudge() as judge:
        yield judge


# split-heads and rope call the learner on tensors drawn in the judge: nothing to ask again, so their run is
# a check of the detector's reach only. Slow: these and three-layers (whose every call builds course GPTs,
# in the judge and here) take 10-15 s each on two cores; alibi and context-scaling are the default proof
ON_TENSORS = {"split-heads", "rope"}
SLOW = ON_TENSORS | {"three-layers"}


@pytest.mark.parametrize(
    "ex",
    [pytest.param(ex, marks=[pytest.mark.slow] if ex.id in SLOW else []) for ex in CODE],
    ids=lambda ex: ex.id,
)
def test_no_failed_check_of_a_starter_or_broken_file_hands_over_the_references_answer(ex, warm):
    from tutor.grading.runner import grade_trusted

    files = [starter_file(ex), *sorted((ex.folder / "broken").glob("*.py"))]
    graded = grade_trusted([(ex, files)], warm=warm)
    reference = _module(solution_file(ex))
    asked = 0
    for path in files:
        learner = _module(path)
        for check in graded[path].checks:
            if check.status != "pass":
                asked += bool(_plain_calls(check.message))
                assert not leaked(check.message, reference, learner), (path.name, check.name, check.message)
    assert asked or ex.id in ON_TENSORS, ex.id  # the messages of the others name calls the learner can ask
