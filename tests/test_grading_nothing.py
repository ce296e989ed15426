"""A file that does nothing, or nothing of what its exercise asks, scores 0 of the exercise's points, for
each of the six exercises: the shapes of tests/nothing_files.py (nothing, identity, zeros, a constant,
random values, answers tabled offline, an answer blind to what the exercise is about) and the starter in
every language, graded through the real judge (one warm judge for the module, every file of an exercise
through one worker: runner.grade_trusted); head-count's starter and made-up answers against stored runs.
A file that does one part of the work earns nothing for another (PARTS), and the grade says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.nothing_files import FILES, HEAD_COUNT_MADE_UP, PARTS, sources
from tutor.content.loader import load_course
from tutor.grading.judges import WarmJudge
from tutor.grading.runner import grade_trusted
from tutor.grading.runs import exercise_checks, grade_runs
from tutor.grading.workspace import starter_file
from tutor.i18n import LANGS

COURSE = load_course(ROOT / "tutor" / "lessons")
CODE = [ex for ex in COURSE.exercises() if ex.kind == "code"]
SHAPES = list(sources())
# a Llama-style attention whose cos/sin cache holds block_size positions, half of what the grader uses
SHORT_CACHE = (
    (ROOT / "tutor/lessons/03-rope-alibi/exercises/rope/accepted/llama_cache.py")
    .read_text(encoding="utf-8")
    .replace("torch.arange(2 * cfg.block_size)", "torch.arange(cfg.block_size)")
)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """{(exercise, name): path} of every shape and part, written out, and the short cache."""
    folder = tmp_path_factory.mktemp("do-nothing")
    texts = {
        **sources(),
        **{key: text for key, (text, _) in PARTS.items()},
        ("rope", "short_cache"): SHORT_CACHE,
    }
    paths = {}
    for (exercise, name), text in texts.items():
        paths[exercise, name] = folder / f"{exercise}-{name}.py"
        paths[exercise, name].write_text(text, encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def graded(files) -> dict[Path, object]:
    """Grade result per file: the module's files and every code exercise's starter in each language."""
    items = []
    for ex in CODE:
        own = [path for (exercise, _), path in files.items() if exercise == ex.id]
        items.append((ex, own + [starter_file(ex, lang) for lang in LANGS]))
    with WarmJudge() as warm:
        return grade_trusted(items, warm=warm)


def _passed(result) -> list[tuple[str, str]]:
    return [(c.name, c.message) for c in result.checks if c.status == "pass"]


def test_every_code_exercise_meets_every_shape():
    for ex in CODE:
        shapes = set(FILES[ex.id])
        assert {"nothing", "identity", "zeros", "constant", "random", "blind"} <= shapes, ex.id
        # a table can answer only what the checks ask of plain numbers: not random tensors
        assert ("tabled" in shapes) == (ex.id not in ("split-heads", "rope")), ex.id


@pytest.mark.parametrize("exercise,shape", SHAPES, ids=lambda v: v)
def test_a_file_that_does_nothing_scores_zero(exercise, shape, graded, files):
    result = graded[files[exercise, shape]]
    assert result.status == "fail" and result.max_score == sum(
        c.points for c in COURSE.exercise(exercise).checks
    )
    assert result.score == 0, _passed(result)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ex", CODE, ids=lambda ex: ex.id)
def test_the_starter_scores_zero(ex, lang, graded):
    result = graded[starter_file(ex, lang)]
    assert result.status == "fail" and result.score == 0, _passed(result)


@pytest.mark.parametrize("exercise,name", list(PARTS), ids=lambda v: v)
def test_real_work_in_one_part_earns_nothing_for_another(exercise, name, graded, files):
    result = graded[files[exercise, name]]
    status = {c.name: c.status for c in result.checks}
    _, nothing_in = PARTS[exercise, name]
    assert [c for c in nothing_in if status[c] == "pass"] == [], _passed(result)
    assert any(s == "pass" for s in status.values())  # the part that is there counts


def test_rope_geometry_counts_only_once_apply_rope_turns(graded, files):
    checks = {c.name: c for c in graded[files["rope", "identity"]].checks}
    for name in ("shape_kept", "norms_kept", "relative_only"):
        assert checks[name].status == "fail"
        assert re.fullmatch(
            r"apply_rope returned x unchanged: at position \d+ nothing turned", checks[name].message
        )
    zeros = {c.name: c.message for c in graded[files["rope", "zeros"]].checks}
    assert zeros["shape_kept"].startswith("apply_rope(x, pos) at position 0 (a turn by 0 · θᵢ leaves")
    added = {c.name: c.message for c in graded[files["rope", "turns_but_attention_adds_positions"]].checks}
    assert "RoPE's scores depend only on n − m" in added["causal"]
    plain = {c.name: c.message for c in graded[files["rope", "turns_but_attention_plain"]].checks}
    assert "each query weighs its keys alike" in plain["causal"]


def test_a_constant_gap_and_a_method_blind_scaling_say_why_they_earn_nothing(graded, files):
    zero = {c.name: c.message for c in graded[files["three-layers", "zeros"]].checks}
    assert "so that ≈ 0 is a measurement" in zero["one_layer_no_pos"]
    assert "a constant cannot" in zero["from_model"]
    tabled = {c.name: c.message for c in graded[files["three-layers", "tabled"]].checks}
    assert re.match(
        r"order_gap\(3, False, seed=\d+\): [0-9.e-]+ is not the gap of the course GPT",
        tabled["three_layers_no_pos"],
    )
    unscaled = graded[files["context-scaling", "blind"]].checks[0].message
    assert "unscaled θᵢ" in unscaled and "nothing is scaled" in unscaled
    blind = graded[files["context-scaling", "pi_for_every_method"]].checks[0].message
    assert "the answer must depend on `method`" in blind
    noise = graded[files["context-scaling", "random"]].checks[0].message
    assert "gave none of the course's frequencies for 'pi', 'ntk', 'yarn'" in noise
    mask = {c.name: c.message for c in graded[files["alibi", "mask_only"]].checks}["future_masked"]
    assert "plain causal mask, not ALiBi" in mask
    symmetry = {c.name: c.message for c in graded[files["alibi", "slopes_but_bias_noise"]].checks}
    assert "is noise, not ALiBi's penalty for distance" in symmetry["breaks_symmetry"]


def test_a_cos_sin_cache_too_short_for_the_graders_positions_names_the_call_and_its_positions(graded, files):
    result = graded[files["rope", "short_cache"]]
    errors = [c.message for c in result.checks if c.status == "error"]
    assert errors and result.score < result.max_score
    for message in errors:
        assert re.match(
            r"(attn\(Tensor\[\d+, \d+, 32\], start=\d+\)|model\(Tensor\[\d+, \d+\](, targets)?\)), at positions "
            r"\d+…\d+ \(the grader's go up to 31 = 2 · block_size − 1; a cos/sin cache must hold them all\): "
            r"RuntimeError: ",
            message,
        ), message


# --- head-count: an answer file graded against stored runs ----------------------------------------------

HEAD_COUNT = COURSE.exercise("head-count")
SAMPLE = exercise_checks(HEAD_COUNT).sample_runs
# runs of three kinds: a clear winner, a gap within the seed spread, and 8 heads the best
RUNS = {
    "clear": SAMPLE({1: 5.412, 4: 5.371, 8: 5.398}),
    "noise": SAMPLE({1: 5.40, 4: 5.38, 8: 5.39}, spread=0.05),
    "eight": SAMPLE({1: 5.52, 4: 5.47, 8: 5.36}, spread=0.03),
}


def _toml(answer: dict) -> bytes:
    return "".join(
        f"{k} = {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in answer.items()
    ).encode()


@pytest.mark.parametrize("runs", list(RUNS))
def test_head_count_the_starter_and_made_up_answers_earn_nothing_that_must_be_read(runs):
    """What must be read off the runs (loss_gap, seed_spread) a made-up answer never gets; the runs being
    stored earns runs_done, which is the training itself, and each other check judges its own key only
    (a lucky guess of a head count or a boolean is not failed for another key's number)."""
    answers = {f"starter.{lang}": starter_file(HEAD_COUNT, lang).read_bytes() for lang in LANGS}
    answers |= {name: _toml(answer) for name, answer in HEAD_COUNT_MADE_UP.items()}
    reference = exercise_checks(HEAD_COUNT).reference_answer(RUNS[runs])
    answers["guesses_right"] = _toml({**reference, "loss_gap": 0.5, "seed_spread": 0.25})
    for name, source in answers.items():
        result = grade_runs(HEAD_COUNT, source, "head_count.toml", RUNS[runs])
        status = {c.name: c.status for c in result.checks}
        assert result.status == "fail" and status["runs_done"] == "pass", (name, _passed(result))
        assert status["loss_gap"] == status["seed_spread"] == "fail", (name, _passed(result))
        for key in ("best_heads", "beyond_noise", "same_params"):  # right exactly where the guess is
            assert (status[key] == "pass") == (answers_value(source, key) == reference[key]), (name, key)
    starter = grade_runs(HEAD_COUNT, answers["starter.en"], "head_count.toml", RUNS[runs])
    assert starter.score == 1  # the runs, nothing of the answer
    graded = grade_runs(HEAD_COUNT, _toml(reference), "head_count.toml", RUNS[runs])
    assert graded.status == "pass" and graded.score == graded.max_score == 6  # the runs' own answer


def answers_value(source: bytes, key: str):
    import tomllib

    return tomllib.loads(source.decode("utf-8")).get(key)
