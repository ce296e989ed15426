"""The experiment registry: names, parameter models and their messages, `--set` parsing, and the
Result JSON contract. No torch needed here, except for the round trip through a real run."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tutor.experiments.errors import ExperimentError
from tutor.experiments.registry import canonical_params, get_registry, get_spec, validate_params
from tutor.experiments.result import Result
from tutor.experiments.values import parse_assignments

NAMES = {
    "heads",
    "params",
    "dk-scaling",
    "train-compare",
    "shuffle",
    "permutation",
    "rope-relative",
    "rope-frequencies",
    "alibi",
    "context-scaling",
    "context-finetune",
    "write",
}


def test_registry_lists_every_experiment_with_titles_in_three_languages():
    reg = get_registry()
    assert set(reg) == NAMES
    for spec in reg.values():
        assert set(spec.title) == {"en", "de", "zh"} and all(spec.title.values())
        assert set(spec.summary) == {"en", "de", "zh"} and all(spec.summary.values())
        for name, field in spec.params_model.model_fields.items():
            assert field.description, f"{spec.name}.{name} has no help text"
    assert [s.name for s in reg.values() if s.long] == ["train-compare", "context-finetune"]


def test_importing_the_registry_and_validating_does_not_import_torch_or_textual():
    code = (
        "import sys\n"
        "from tutor.experiments.registry import get_registry, validate_params\n"
        "for spec in get_registry().values(): spec.validate(); spec.defaults()\n"
        "validate_params('heads', {'n_head': 8})\n"
        "import tutor.experiments.values, tutor.experiments.result, tutor.experiments.runner\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
    )
    proc = subprocess.run([PYTHON, "-c", code], env=run_tutor_env(), cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_lesson_parameter_names_are_accepted():
    # the names lesson writers embed (see tutor/lessons/*/??.md experiment blocks)
    validate_params("heads", {"n_embd": 32, "n_head": 4, "text": "白日依山尽"})
    validate_params("params", {"d_model": 512, "heads": [1, 2, 4, 8, 16]})
    validate_params("dk-scaling", {})
    validate_params(
        "train-compare", {"vary": "pos", "pos": ["learned", "none", "rope", "alibi"], "steps": 1000}
    )
    validate_params("train-compare", {"vary": "heads", "heads": [1, 4, 8]})
    validate_params("shuffle", {"seq": 6, "d": 16, "seed": 0})
    validate_params("permutation", {"layers": [1, 2, 3], "modes": ["none", "learned"], "seed": 0})
    validate_params("rope-relative", {"d": 16, "base": 10000.0, "dtype": "float64", "max_pos": 200})
    validate_params("rope-frequencies", {"d": 32, "base": 10000.0})
    validate_params("alibi", {"n_head": 8, "T": 8})
    validate_params("context-scaling", {"scale": 4.0})


def test_defaults_are_the_documented_ones():
    heads = get_spec("heads").defaults()
    assert (heads["n_embd"], heads["n_head"], heads["text"]) == (32, 4, "白日依山尽")
    assert get_spec("params").defaults()["heads"] == [1, 2, 4, 8, 16]
    assert get_spec("train-compare").defaults()["heads"] == [1, 4, 8]
    assert get_spec("train-compare").defaults()["steps"] == 1000
    assert get_spec("permutation").defaults()["modes"] == ["none", "learned"]
    assert get_spec("alibi").defaults() == {"n_head": 8, "T": 8}
    assert get_spec("context-scaling").defaults()["scale"] == 4.0


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("heads", {"n_head": 0}, ["n_head", "got 0", "integer 1..64"]),
        ("heads", {"n_head": 3}, ["n_embd (32)", "divisible", "(3)"]),
        ("heads", {"colour": "red"}, ["unknown parameter 'colour'", "n_embd, n_head, text"]),
        ("params", {"heads": [1, 3]}, ["d_model (512)", "(3)"]),
        ("alibi", {"T": 1000}, ["T", "got 1000", "1..64"]),
        (
            "train-compare",
            {"pos": ["rope", "sinus"]},
            ["pos[1]", '"sinus"', '"learned", "none", "rope", "alibi"'],
        ),
        ("train-compare", {"vary": "layers"}, ["vary", '"heads", "pos"']),
        ("rope-relative", {"d": 15}, ["d", "multiple of 2"]),
        ("rope-relative", {"max_pos": 16}, ["offsets [16, 32, 64]", "max_pos 16"]),
        ("permutation", {"other": "山依日白"}, ["same characters"]),
        ("context-scaling", {"scale": 0.5}, ["scale", "1.0..64.0"]),
    ],
)
def test_bad_parameters_get_a_message_naming_field_value_and_allowed_range(name, raw, expected):
    with pytest.raises(ExperimentError) as info:
        validate_params(name, raw)
    message = str(info.value)
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"
    assert "Traceback" not in message and "pydantic" not in message


def test_unknown_experiment_lists_the_valid_names():
    with pytest.raises(ExperimentError) as info:
        get_spec("rope-absolute")
    assert "rope-absolute" in str(info.value)
    for name in NAMES:
        assert name in str(info.value)


def test_set_values_parse_lists_numbers_text_and_unset():
    spec = get_spec("params")
    assert validate_params(spec, parse_assignments(spec, ["heads=1,2,4"])).heads == [1, 2, 4]
    assert validate_params(spec, parse_assignments(spec, ["heads=[1, 8]"])).heads == [1, 8]
    assert validate_params(spec, parse_assignments(spec, ["d_model=256"])).d_model == 256
    tc = get_spec("train-compare")
    p = validate_params(tc, parse_assignments(tc, ["pos=['rope', 'alibi']", "vary=pos", "lr=1e-3"]))
    assert p.pos == ["rope", "alibi"] and p.vary == "pos" and p.lr == 0.001
    assert validate_params(tc, parse_assignments(tc, ["pos=none,learned"])).pos == ["none", "learned"]
    heads = get_spec("heads")
    p = validate_params(heads, parse_assignments(heads, ["text=床前明月光", "layer=2"]))
    assert p.text == "床前明月光" and p.layer == 2
    assert validate_params(heads, parse_assignments(heads, ["layer=none"])).layer is None
    with pytest.raises(ExperimentError, match="KEY=VALUE"):
        parse_assignments(heads, ["n_head"])
    with pytest.raises(ExperimentError, match="valid parameters: n_embd"):
        parse_assignments(heads, ["heads=4"])


def test_canonical_params_are_the_same_for_equal_parameter_sets():
    a = validate_params("params", {})
    b = validate_params("params", {"heads": [1, 2, 4, 8, 16], "d_model": 512})
    c = validate_params("params", {"heads": [1, 2]})
    assert canonical_params(a) == canonical_params(b) != canonical_params(c)


def test_result_json_matches_the_design_contract_and_rejects_non_finite_metrics():
    data = {
        "experiment": "x",
        "params": {"a": 1},
        "metrics": {"m": 1.5, "n": 3},
        "panels": [
            {"kind": "table", "title": "t", "columns": ["a"], "rows": [[1], ["b"]]},
            {"kind": "heatmap", "title": "h", "row_labels": ["白"], "col_labels": ["白"], "values": [[None]]},
            {"kind": "series", "title": "s", "series": [{"name": "l", "x": [0, 1], "y": [1.0, None]}]},
            {"kind": "text", "title": "r", "text": "plain"},
        ],
        "duration_s": 0.01,
    }
    result = Result.model_validate(data)
    again = json.loads(result.model_dump_json())
    assert set(again) == {"experiment", "params", "metrics", "panels", "duration_s"}
    assert Result.model_validate(again) == result
    assert again["metrics"]["n"] == 3 and isinstance(again["metrics"]["n"], int)
    with pytest.raises(ValueError, match="not finite: m"):
        Result.model_validate({**data, "metrics": {"m": float("inf")}})
    with pytest.raises(ValueError):
        Result.model_validate({**data, "panels": [{"kind": "pie", "title": "p"}]})


def test_every_experiment_block_in_the_shipped_lessons_validates():
    import re
    import tomllib

    blocks = 0
    for md in sorted((ROOT / "tutor" / "lessons").glob("*/*.md")):
        text = md.read_text(encoding="utf-8")
        for match in re.finditer(r"^```experiment ([\w-]+)\n(.*?)^```", text, re.M | re.S):
            blocks += 1
            name, body = match.group(1), match.group(2)
            try:
                validate_params(name, tomllib.loads(body))
            except ExperimentError as err:
                pytest.fail(f"{md.relative_to(ROOT)}: {err}")
    assert blocks > 0
