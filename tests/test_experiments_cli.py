"""`python -m tutor experiment` end to end in a subprocess: listing, running, JSON, exit codes (the
heatmaps of a model experiment are drawn by the command in the test's process)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env, tutor_here
from tutor.experiments import cache
from tutor.experiments.registry import get_registry
from tutor.experiments.result import Result


def tutor(*args: str, home=None) -> subprocess.CompletedProcess:
    env = run_tutor_env(home)
    if "TUTOR_CHECKPOINTS" in os.environ:  # development checkpoints before the shipped ones exist
        env["TUTOR_CHECKPOINTS"] = os.environ["TUTOR_CHECKPOINTS"]
    return subprocess.run(
        [PYTHON, "-m", "tutor", "experiment", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def test_list_shows_every_experiment_with_its_parameters():
    proc = tutor("--list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert [e["name"] for e in listed] == list(get_registry())
    heads = next(e for e in listed if e["name"] == "heads")
    assert heads["params"]["n_head"]["default"] == 4 and heads["metrics"][0] == "qkv_params"
    text = tutor("--list")
    assert text.returncode == 0 and "train-compare" in text.stdout and "n_head" in text.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("rope-absolute",), ["unknown experiment 'rope-absolute'", "valid names: heads, params"]),
        ((), ["name an experiment", "context-scaling"]),
        (("alibi", "--set", "n_head=0"), ["n_head", "got 0", "integer 1..64"]),
        (("alibi", "--set", "n_head=many"), ["n_head", "valid integer", '"many"']),
        (("alibi", "--set", "n_head"), ["KEY=VALUE"]),
        (("alibi", "--set", "slopes=1"), ["unknown parameter 'slopes'", "n_head, T"]),
        (("params", "--set", "heads=1,3"), ["d_model (512)", "divisible"]),
    ],
)
def test_bad_name_or_value_exits_2_with_a_clear_message(args, expected):
    proc = tutor(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ")
    for part in expected:
        assert part in proc.stderr, f"{part!r} not in {proc.stderr!r}"


def test_json_output_is_a_result_with_the_set_parameters():
    proc = tutor("alibi", "--set", "n_head=6", "--set", "T=4", "--json")
    assert proc.returncode == 0, proc.stderr
    result = Result.model_validate_json(proc.stdout)
    assert result.params == {"n_head": 6, "T": 4}
    assert result.metrics["slope_first"] == 0.25 and result.metrics["slope_last"] == 0.125
    assert result.duration_s > 0


def test_terminal_output_draws_heatmaps_labelled_with_the_characters():
    if not (cache.checkpoints_dir() / cache.LEARNED).is_file():
        pytest.skip("shipped checkpoint not trained yet")
    proc = tutor_here("experiment", "heads", "--set", "layer=1", "--set", "text=床前明月光")
    assert proc.returncode == 0, proc.stderr
    assert "layer 1 · head 1" in proc.stdout
    assert "(1, 4, 5, 8)" in proc.stdout
    heat_rows = [line for line in proc.stdout.splitlines() if line.lstrip().startswith("月")]
    assert heat_rows, proc.stdout


def test_text_the_model_cannot_read_exits_2_naming_the_character(capsys):
    if not (cache.checkpoints_dir() / cache.LEARNED).is_file():
        pytest.skip("shipped checkpoint not trained yet")
    from tutor.cli import main

    assert main(["experiment", "heads", "--set", "text=白日Q山尽"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: text: ") and "'Q' at 2" in err


def test_heatmap_rows_line_up_with_double_width_labels():
    from rich.cells import cell_len
    from rich.console import Console

    from tutor.experiments.render import heatmap
    from tutor.experiments.result import HeatmapPanel

    labels = list("白日依山尽")
    values = [[(1.0 / (i + 1) if j <= i else None) for j in range(5)] for i in range(5)]
    console = Console(width=80, record=True, color_system="truecolor")
    console.print(heatmap(HeatmapPanel(title="h", row_labels=labels, col_labels=labels, values=values), "en"))
    lines = [line for line in console.export_text().splitlines() if line.strip()][1:]  # skip the title
    assert len(lines) == 6 and lines[1].startswith("白") and "1.00" in lines[1]
    assert len({cell_len(line.rstrip()) for line in lines[1:]}) == 1  # every row equally wide
    assert all(label in lines[0] for label in labels)
    assert "·" in lines[1]  # masked cells drawn, not left as numbers
