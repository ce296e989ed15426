"""Every shipped exercise: the reference passes, in every language, the starter fails, each broken variant fails the
check it names in its first line (`# fails: CHECK — why`) as its exercise's `broken_fails` says (first, or
alone: tutor.grading.authoring.broken_problems, what `python -m tutor check` reports), and each accepted variant passes. Graded
once for the module, all files in one child process per exercise (runner.grade_trusted), every judge
forked from one warm judge the module shares; the sandboxed path is covered by the CLI and sandbox tests.
Files that do nothing score 0: tests/test_grading_nothing.py. The head-count exercise is graded from real
run records in a real store."""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.grading_helpers import PROBE_FILES, SOLUTION, exercise_course, tutor
from tutor.content.loader import load_course
from tutor.grading.authoring import _static_problems, broken_problems, check_exercises, named_check
from tutor.grading.judges import WarmJudge
from tutor.grading.runner import grade_trusted
from tutor.grading.runs import exercise_checks
from tutor.grading.submissions import grade_file
from tutor.grading.workspace import solution_file, starter_file
from tutor.i18n import LANGS
from tutor.progress.store import Store

ROOT = Path(__file__).resolve().parents[1]
COURSE = load_course(ROOT / "tutor" / "lessons")
CODE = [ex for ex in COURSE.exercises() if ex.kind == "code"]
BROKEN = [(ex, f) for ex in CODE for f in sorted((ex.folder / "broken").glob("*.py"))]
ACCEPTED = [(ex, f) for ex in CODE for f in sorted((ex.folder / "accepted").glob("*.py"))]


def _named_check(path: Path) -> str:
    named = named_check(path)
    assert named, f"{path} must start with '# fails: CHECK — why'"
    return named


@pytest.fixture(scope="module")
def warm():
    """One warm judge for the module's grading: torch is imported once, each exercise's judge is forked."""
    with WarmJudge() as judge:
        yield judge


@pytest.fixture(scope="module")
def graded(warm) -> dict[Path, object]:
    """Grade result per file (solution and starter in each language, broken and accepted variants of
    every code exercise)."""
    items = []
    for ex in CODE:
        files = [*(solution_file(ex, lang) for lang in LANGS), *(starter_file(ex, lang) for lang in LANGS)]
        files += sorted((ex.folder / "broken").glob("*.py"))
        files += sorted((ex.folder / "accepted").glob("*.py"))
        items.append((ex, files))
    return grade_trusted(items, warm=warm)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ex", CODE, ids=lambda ex: ex.id)
def test_reference_solution_passes_every_check_in_each_language(ex, lang, graded):
    assert solution_file(ex, lang).name == ("solution.py" if lang == "en" else f"solution.{lang}.py")
    result = graded[solution_file(ex, lang)]
    assert result.status == "pass", [(c.name, c.message) for c in result.checks if c.status != "pass"]
    assert result.score == result.max_score == sum(c.points for c in ex.checks)
    if ex.id == "split-heads":  # the check shows the error the reference raises: in its language
        said = {
            "en": "cannot be split evenly into",
            "de": "lassen sich nicht gleichmäßig auf",
            "zh": "无法平均分给",
        }
        (refused,) = (c.message for c in result.checks if c.name == "rejects_bad_split")
        assert said[lang] in refused


@pytest.mark.parametrize("ex", CODE, ids=lambda ex: ex.id)
def test_starter_compiles_keeps_signatures_and_fails(ex, graded):
    source = starter_file(ex).read_text(encoding="utf-8")
    tree = ast.parse(source)
    reference = ast.parse(solution_file(ex).read_text(encoding="utf-8"))

    def api(t):
        return {n.name for n in t.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}

    assert api(reference) <= api(tree)
    result = graded[starter_file(ex)]
    assert result.status == "fail" and result.score == 0


@pytest.mark.parametrize("lang", ["de", "zh"])
@pytest.mark.parametrize("ex", CODE, ids=lambda ex: ex.id)
def test_the_starter_in_each_language_gets_the_english_starters_verdicts(ex, lang, graded):
    english, variant = graded[starter_file(ex)], graded[starter_file(ex, lang)]
    assert starter_file(ex, lang).name == f"starter.{lang}.py"
    verdicts = [(c.name, c.status, c.points) for c in english.checks]
    assert [(c.name, c.status, c.points) for c in variant.checks] == verdicts
    assert (variant.status, variant.score) == (english.status, english.score) == ("fail", 0)


def test_the_head_count_answer_file_in_each_language_gets_the_english_verdicts():
    from tutor.grading.runs import grade_runs

    runs = SAMPLE({1: 5.30, 4: 5.35, 8: 5.40})
    graded = {
        lang: grade_runs(HEAD_COUNT, starter_file(HEAD_COUNT, lang).read_bytes(), "head_count.toml", runs)
        for lang in LANGS
    }
    assert starter_file(HEAD_COUNT, "zh").name == "starter.zh.toml"
    assert graded["en"].status == "fail" and graded["en"].checks
    for lang in ("de", "zh"):
        assert [(c.name, c.status) for c in graded[lang].checks] == [
            (c.name, c.status) for c in graded["en"].checks
        ]
        assert graded[lang].score == graded["en"].score < graded["en"].max_score


@pytest.mark.parametrize("ex,path", BROKEN, ids=lambda v: v.id if hasattr(v, "id") else v.stem)
def test_broken_variant_fails_the_check_it_names(ex, path, graded):
    assert _named_check(path) in {c.id for c in ex.checks}
    assert graded[path].status == "fail"
    assert [p.message for p in broken_problems(ex, path, graded[path])] == []


def test_split_heads_and_alibi_broken_files_each_fail_their_check_alone():
    # their checks are independent; in rope, three-layers and context-scaling a check builds on another's
    assert {ex.id for ex in CODE if ex.broken_fails == "only"} == {"split-heads", "alibi"}


@pytest.mark.parametrize("ex,path", ACCEPTED, ids=lambda v: v.id if hasattr(v, "id") else v.stem)
def test_accepted_alternative_solution_passes(ex, path, graded):
    result = graded[path]
    assert result.status == "pass", [(c.name, c.message) for c in result.checks if c.status != "pass"]


def test_rope_geometry_counts_only_once_apply_rope_turns(graded):
    checks = {
        c.name: c for c in graded[COURSE.exercise("rope").folder / "broken/identity_rotation.py"].checks
    }
    for name in ("shape_kept", "norms_kept", "relative_only"):
        assert checks[name].status == "fail"
        assert re.fullmatch(
            r"apply_rope returned x unchanged: at position \d+ nothing turned", checks[name].message
        )


def test_rope_accepts_both_pairings(graded):
    rope = COURSE.exercise("rope")
    messages = [
        {c.name: c.message for c in graded[f].checks}["matches_reference"]
        for f in (solution_file(rope), rope.folder / "accepted/interleaved.py")
    ]
    assert messages[0].startswith("agrees with the reference (half pairing)")
    assert messages[1].startswith("agrees with the reference (interleaved pairing)")


def test_each_code_exercise_has_broken_variants_for_several_checks():
    for ex in CODE:
        named = {_named_check(p) for p in (ex.folder / "broken").glob("*.py")}
        assert len(named) >= 3, (ex.id, named)


def test_every_code_exercise_has_a_prediction_and_a_real_section():
    for lesson in COURSE.lessons:
        sections = {s.id for s in lesson.sections}
        for ex in lesson.exercises:
            assert ex.section in sections, ex.id
            assert ex.kind == "runs" or ex.predict, ex.id
            for c in ex.checks:
                assert set(c.title) == set(c.hint) == {"en", "de", "zh"}, (ex.id, c.id)
            assert set(ex.task) == {"en", "de", "zh"} and all(set(h) == {"en", "de", "zh"} for h in ex.hints)


def test_three_layers_messages_report_the_measured_gaps(graded):
    ex = COURSE.exercise("three-layers")
    checks = {c.name: c.message for c in graded[solution_file(ex)].checks}
    one = float(re.search(r"= ([0-9.e+-]+)", checks["one_layer_no_pos"]).group(1))
    three = float(re.search(r"= ([0-9.e+-]+)", checks["three_layers_no_pos"]).group(1))
    assert one < 1e-5 < 1e-3 < three  # rounding noise vs. the order leaking through the mask


# --- the example of tutor/lessons/README.md, built from the page ---------------------------------------------

FILE_BLOCK = re.compile(r"^```(?:python|toml) (\S+)\n(.*?)^```$", re.M | re.S)  # ```python checks.py


def _readme_example() -> dict[str, str]:
    """{file inside the exercise folder: its text}, from the code blocks of the page's Exercises part
    whose info string names a file."""
    page = (ROOT / "tutor/lessons/README.md").read_text(encoding="utf-8")
    return dict(FILE_BLOCK.findall(page[page.index("## Exercises\n") :]))


def test_the_readme_example_exercise_grades_as_the_page_says(tmp_path, warm):
    """A reader adds an exercise from tutor/lessons/README.md alone: its example, written out as the page
    shows it, loads without an error and grades through the real judge and worker as the page says."""
    files = _readme_example()
    assert {"exercise.toml", "starter.py", "solution.py", "checks.py"} <= set(files)
    meta = tomllib.loads(files["exercise.toml"])
    lesson = tmp_path / "lessons/01-example"
    folder = lesson / "exercises" / meta["id"]
    (folder / "broken").mkdir(parents=True)
    (lesson / "lesson.toml").write_text('id = "example"\norder = 1\ntitle = { en = "Example" }\n', "utf-8")
    (lesson / "en.md").write_text(f"# Example\n\n## Scores {{#{meta['section']}}}\n\nText.\n", "utf-8")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    course = load_course(tmp_path / "lessons")
    assert not [p for p in course.problems if p.severity == "error"], course.problems
    (ex,) = course.exercises()
    assert not _static_problems(ex)  # every declared check has its function; no message is missing
    assert ex.predict and len({_named_check(p) for p in (folder / "broken").glob("*.py")}) >= 3  # as shipped
    broken = sorted((folder / "broken").glob("*.py"))
    graded = grade_trusted([(ex, [folder / "solution.py", folder / "starter.py", *broken])], warm=warm)
    solution, starter = graded[folder / "solution.py"], graded[folder / "starter.py"]
    assert solution.status == "pass" and solution.score == sum(c.points for c in ex.checks), solution.checks
    assert starter.status == "fail" and starter.score == 0
    for path in broken:
        assert graded[path].status == "fail" and broken_problems(ex, path, graded[path]) == [], graded[
            path
        ].checks


# --- head-count: stored runs + the answer file ------------------------------------------------------

HEAD_COUNT = COURSE.exercise("head-count")
SAMPLE = exercise_checks(HEAD_COUNT).sample_runs


def _store_runs(store: Store, losses: dict[int, float], steps: int = 1000, spread: float = 0.01) -> None:
    for run in SAMPLE(losses, spread=spread):
        run["config"]["train"]["steps"] = steps
        store.record_training_run(
            run["key"] + f"-{steps}",
            config=run["config"],
            status="done",
            final_val_loss=run["final_val_loss"],
            params=run["params"],
            seconds=90.0,
            curve=[(steps, 5.0, run["final_val_loss"])],
        )


def _answer(tmp_path: Path, **values) -> Path:
    path = tmp_path / "head_count.toml"
    path.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items()), encoding="utf-8")
    return path


def _grade_runs(home: Path, path: Path):
    with Store(home) as store:
        return grade_file(HEAD_COUNT, path, store=store)


def test_head_count_passes_with_the_answer_the_stored_runs_support(home, tmp_path):
    # seeds 1337 and 1338 per head count, the second 0.01 worse: means 5.417, 5.376, 5.403
    with Store(home) as store:
        _store_runs(store, {1: 5.412, 4: 5.371, 8: 5.398})
    answer = dict(best_heads=4, loss_gap=0.041, seed_spread=0.01, beyond_noise=True, same_params=True)
    result = _grade_runs(home, _answer(tmp_path, **answer))
    assert result.status == "pass", [c.message for c in result.checks]
    assert result.checks[0].message == "six comparable runs: 1, 4 and 8 heads, each with seeds 1337, 1338"
    with Store(home) as store:
        (sub,) = store.submissions("head-count")
        assert sub.status == "pass" and len(sub.sha256) == 64


def test_head_count_a_gap_within_the_seed_spread_is_noise(home, tmp_path):
    # the head counts differ by 0.02 on average, another seed moves a run by 0.05
    with Store(home) as store:
        _store_runs(store, {1: 5.40, 4: 5.38, 8: 5.39}, spread=0.05)
    claims_real = dict(best_heads=4, loss_gap=0.02, seed_spread=0.05, beyond_noise=True, same_params=True)
    result = _grade_runs(home, _answer(tmp_path, **claims_real))
    status = {c.name: c.status for c in result.checks}
    assert status["beyond_noise"] == "fail" and status["best_heads"] == "pass"
    noise = next(c for c in result.checks if c.name == "beyond_noise")
    assert noise.message.startswith("beyond_noise = true is not what your runs show")
    says_noise = {**claims_real, "beyond_noise": False}
    assert _grade_runs(home, _answer(tmp_path, **says_noise)).status == "pass"


def test_head_count_wrong_answers_fail_their_checks(home, tmp_path):
    with Store(home) as store:
        _store_runs(store, {1: 5.30, 4: 5.35, 8: 5.40})
    answer = dict(best_heads=4, loss_gap=0.3, seed_spread=0.2, beyond_noise=False, same_params=False)
    result = _grade_runs(home, _answer(tmp_path, **answer))
    status = {c.name: c.status for c in result.checks}
    assert status == {
        "runs_done": "pass",  # the six runs are there, whatever the answer says
        "same_params": "fail",
        "best_heads": "fail",
        "loss_gap": "fail",
        "seed_spread": "fail",
        "beyond_noise": "fail",
    }
    message = {c.name: c.message for c in result.checks}
    assert message["best_heads"].startswith("best_heads = 4 is not the head count with the lowest mean")
    assert message["loss_gap"].startswith(
        "loss_gap = 0.3 is not the worst mean final val loss minus the best"
    )
    assert message["seed_spread"].startswith("seed_spread = 0.2 is not the largest difference")


def test_head_count_without_all_runs_says_which_are_missing(home, tmp_path):
    with Store(home) as store:
        _store_runs(store, {1: 5.30, 4: 5.35})
        _store_runs(store, {8: 5.40}, steps=300)  # too short to count
    result = _grade_runs(home, _answer(tmp_path, best_heads=1, loss_gap=0.05, same_params=True))
    assert result.status == "fail"
    first = result.checks[0]
    assert first.status == "fail" and "8 heads, seeds: 0" in first.message
    assert "train-compare" in first.message and "seeds=2" in first.message


def test_head_count_one_seed_per_head_count_is_not_enough(home, tmp_path):
    with Store(home) as store:
        for run in SAMPLE({1: 5.30, 4: 5.35, 8: 5.40}):
            if run["config"]["train"]["seed"] == 1337:
                store.record_training_run(
                    run["key"],
                    config=run["config"],
                    status="done",
                    final_val_loss=run["final_val_loss"],
                    params=run["params"],
                    seconds=90.0,
                    curve=[(1000, 5.0, run["final_val_loss"])],
                )
    result = _grade_runs(home, _answer(tmp_path, best_heads=1, loss_gap=0.1, same_params=True))
    first = result.checks[0]
    assert first.status == "fail" and "1 head, seeds: 1" in first.message


def test_head_count_starter_fails_and_bad_toml_is_an_error(home, tmp_path):
    with Store(home) as store:
        _store_runs(store, {1: 5.30, 4: 5.35, 8: 5.40})
    assert _grade_runs(home, starter_file(HEAD_COUNT)).status == "fail"
    bad = tmp_path / "bad.toml"
    bad.write_text("best_heads = = 4\n", encoding="utf-8")
    result = _grade_runs(home, bad)
    assert (
        result.status == "error"
        and "not valid TOML" in result.checks[0].message
        and "line 1" in result.checks[0].message
    )


# --- the authoring check ----------------------------------------------------------------------------


class _Course:
    def __init__(self, exercises):
        self._exercises = exercises

    def exercises(self):
        return self._exercises


def test_authoring_check_flags_a_passing_starter_and_a_missing_check_function(tmp_path):
    src = COURSE.exercise("split-heads")
    folder = tmp_path / "split-heads"
    folder.mkdir()
    for name in ("checks.py", "solution.py"):
        (folder / name).write_text((src.folder / name).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "starter.py").write_text(
        (src.folder / "solution.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    problems = check_exercises(_Course([src.model_copy(update={"folder": folder})]))
    errors = [p.message for p in problems if p.severity == "error"]
    assert errors == ["the starter of 'split-heads' passes every check; it must fail"]
    assert {p.file.name for p in problems if p.severity == "warning"} == {
        f"{role}.{lang}.py" for role in ("starter", "solution") for lang in ("de", "zh")
    }

    (folder / "checks.py").write_text("def check_shape(sub):\n    return 'ok'\n", encoding="utf-8")
    problems = check_exercises(_Course([src.model_copy(update={"folder": folder})]))
    assert {p.message for p in problems if p.severity == "error"} == {
        f"no function check_{cid} for the declared check {cid!r}"
        for cid in ("matches_view", "round_trip", "rejects_bad_split")
    }


def test_check_reports_each_broken_file_that_does_not_fail_the_check_it_names(tmp_path):
    """`python -m tutor check` holds broken/ to its contract: a file that passes, one that fails another
    check first, one that fails a second check where the exercise says "only", one whose first line names
    no declared check or no check at all; each is FILE: message, exit 2. A file that keeps it is not named."""
    toml = PROBE_FILES["exercise.toml"].replace("timeout_s = 10\n", 'timeout_s = 10\nbroken_fails = "only"\n')
    lessons = exercise_course(tmp_path / "lessons", {**PROBE_FILES, "exercise.toml": toml}, shipped=False)
    broken = lessons / "09-probe/exercises/probe/broken"
    broken.mkdir()
    wrong_add = SOLUTION.replace("return a + b\n\n\ndef concat", "return a - b\n\n\ndef concat")
    files = {
        "kept.py": "# fails: add — subtracts\n" + wrong_add,
        "passes.py": "# fails: concat — the reference itself\n" + SOLUTION,
        "other_first.py": "# fails: scale — names scale, but add fails first\n"
        + wrong_add.replace("x * k", "x + k"),
        "also_last.py": "# fails: add — and the last item is the first\n"
        + wrong_add.replace("xs[-1]", "xs[0]"),
        "undeclared.py": "# fails: sum — no such check\n" + wrong_add,
        "no_header.py": wrong_add,
    }
    for name, text in files.items():
        (broken / name).write_text(text, encoding="utf-8")
    proc = tutor(tmp_path / "home", "check", "--lessons", str(lessons))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines() if str(broken) in line]
    named = {Path(line.split(":")[0]).name: line for line in lines}
    assert sorted(named) == ["also_last.py", "no_header.py", "other_first.py", "passes.py", "undeclared.py"]
    assert named["passes.py"].endswith("passes.py: passes every check; it must fail 'concat'")
    assert (
        "other_first.py: fails 'add' first; it must fail 'scale' first: add: fail ("
        in named["other_first.py"]
    )
    assert named["also_last.py"].endswith(
        """also_last.py: fails 'last' too; it must fail 'add' alone (broken_fails = "only")"""
    )
    assert named["undeclared.py"].endswith(
        "undeclared.py:1: names the check 'sum', which exercise.toml does not declare"
    )
    assert named["no_header.py"].endswith("no_header.py:1: the first line must be '# fails: CHECK — why'")
    assert "errors: 5," in proc.stdout and "Traceback" not in proc.stderr


def test_authoring_check_accepts_the_head_count_exercise():
    assert check_exercises(_Course([HEAD_COUNT])) == []


def test_grading_modules_import_neither_torch_nor_textual():
    import subprocess
    import sys

    code = (
        "import sys, tutor.grading.submissions, tutor.grading.workspace, tutor.grading.safe_read,"
        " tutor.grading.hints, tutor.grading.runner, tutor.grading.instructor.batch, tutor.grading.runs, tutor.grading.authoring,"
        " tutor.grading.kit, tutor.grading.watch, tutor.grading.text,"
        " tutor.commands.grade, tutor.commands.exercise;"
        " print(sorted(m for m in ('torch', 'textual') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_authoring_check_passes_on_the_shipped_course():
    # needs the shipped checkpoint (three-layers reads its tokenizer)
    assert check_exercises(COURSE) == []


@pytest.mark.slow  # 3 s of a loop running out its time
def test_a_looping_course_file_times_out_and_the_next_file_is_still_graded(tmp_path, warm):
    src = COURSE.exercise("split-heads")
    folder = tmp_path / "split-heads"
    folder.mkdir()
    for name in ("checks.py", "solution.py"):
        (folder / name).write_text((src.folder / name).read_text(encoding="utf-8"), encoding="utf-8")
    ex = src.model_copy(update={"folder": folder})
    ex = ex.model_copy(update={"timeout_s": 3.0})  # per file: the references take well under a second
    files = [folder / "solution.py", folder / "starter.py", folder / "solution.py"]
    (folder / "starter.py").write_text("import time\nwhile True:\n    time.sleep(0.01)\n", encoding="utf-8")
    results = grade_trusted([(ex, files)], warm=warm)
    looped = results[folder / "starter.py"]
    assert looped.status == "timeout"
    assert looped.checks[0].message == "timed out after 3 s while loading your file"
    assert results[folder / "solution.py"].status == "pass"  # graded again after the loop, by a new worker


@pytest.mark.parametrize("imports", [["tutor.grading.kit"], ["tutor.lessons"], ["tutor.model"], ["tutor"]])
def test_an_exercise_cannot_hand_the_grader_the_lessons_or_the_whole_course_package(imports):
    from pydantic import ValidationError

    from tutor.content.schema import WorkerSpec

    with pytest.raises(ValidationError):
        WorkerSpec(imports=imports)


def test_what_each_code_exercise_hands_its_worker_leaves_out_the_course_answers():
    from tutor.grading.box.sandbox import box_for

    for ex in CODE:
        handed = box_for(ex.worker.imports, ex.worker.files, ROOT)["handed"]
        assert not any("/lessons" in p.removeprefix(str(ROOT)) for p in handed), ex.id
        assert (str(ROOT / "tutor/model/gpt.py") in handed) == ("tutor.model.gpt" in ex.worker.imports), ex.id
        if ex.id in ("rope", "alibi", "context-scaling"):
            assert str(ROOT / "tutor/model/positions.py") not in handed, ex.id
