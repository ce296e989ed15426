"""docs/gradescope/'s autograder recipe, run as Gradescope runs it: its run_autograder script itself,
against a folder laid out as Gradescope lays /autograder out (source/ with autograder.env, submission/
with the student's files, results/ to write), with AUTOGRADER_ROOT for /autograder and this Python for
its venv. results.json is checked against Gradescope's documented fields.

setup.sh cannot run here (it needs Gradescope's Ubuntu 22.04 image, root and the network): its lines are
read instead, for a Python the tutor accepts and torch from the CPU index; that apt, the PPA and pip do
what they say there is untested.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_tutor_env
from tests.grading_helpers import PROBE_CHECKS, PROBE_TOML, SOLUTION, exercise_course

RECIPE = ROOT / "docs" / "gradescope"
WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
TOP = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "visibility",
    "stdout_visibility",
    "tests",
}
TEST = {"score", "max_score", "name", "number", "output", "visibility", "status"}


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    files = {
        "exercise.toml": PROBE_TOML,
        "checks.py": PROBE_CHECKS,
        "solution.py": SOLUTION,
        "starter.py": SOLUTION.replace("return", "raise NotImplementedError #"),
    }
    return exercise_course(tmp_path_factory.mktemp("lessons"), files, shipped=False, order=1)


def autograder(
    root: Path, lessons: Path, submission: dict[str, str], env_lines: str = ""
) -> subprocess.CompletedProcess:
    """/autograder as Gradescope has it when run_autograder starts (`env_lines` more of autograder.env),
    and the script run in it, with no TUTOR_ variable in its own environment."""
    (root / "source").mkdir(parents=True)
    for name in ("setup.sh", "run_autograder"):
        shutil.copy(RECIPE / name, root / "source" / name)
    (root / "source/autograder.env").write_text(
        f"TUTOR_EXERCISE=probe\nTUTOR_POINTS=10\nTUTOR_LESSONS={lessons}\n{env_lines}"
    )
    (root / "submission").mkdir()
    for name, text in submission.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    (root / "submission_metadata.json").write_text(json.dumps({"id": 1, "users": [{"name": "Ann"}]}))
    shutil.copy(root / "source/run_autograder", root / "run_autograder")
    env = {**run_tutor_env(root / "home"), "AUTOGRADER_ROOT": str(root), "TUTOR_PYTHON": sys.executable}
    return subprocess.run(
        ["bash", str(root / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def test_run_autograder_writes_gradescopes_results_json(lessons, tmp_path):
    out = autograder(tmp_path / "autograder", lessons, {"probe.py": WRONG, "notes.py": "x = 1\n"})
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "autograder/results/results.json").read_text(encoding="utf-8"))
    assert set(results) == TOP and results["visibility"] == "visible"
    assert results["score"] == 7.5  # 3 of 4, as the assignment's 10 points
    assert [t["name"] for t in results["tests"]] == ["adds", "joins", "scales", "last"]
    assert (results["output_format"], results["test_output_format"]) == ("text", "text")
    for test in results["tests"]:
        assert set(test) == TEST and isinstance(test["score"], float) and test["max_score"] == 2.5
    assert sum(t["max_score"] for t in results["tests"]) == 10  # the tests on the scale of the total
    assert results["tests"][3]["status"] == "failed" and "expected" in results["tests"][3]["output"]
    report = json.loads((tmp_path / "autograder/results/report.json").read_text(encoding="utf-8"))
    assert {r["file"] for r in report["results"]} == {"probe.py", "notes.py"}


def test_an_empty_submission_gets_zero_and_says_what_to_upload(lessons, tmp_path):
    out = autograder(tmp_path / "autograder", lessons, {})
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "autograder/results/results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and results["output"] == "No Python file was handed in: upload probe.py."
    assert [t["status"] for t in results["tests"]] == ["failed"] * 4
    assert sum(t["max_score"] for t in results["tests"]) == 10 and results["output_format"] == "text"


def test_every_setting_of_autograder_env_reaches_the_tutor(lessons, tmp_path):
    out = autograder(tmp_path / "autograder", lessons, {"probe.py": WRONG}, "TUTOR_LANG=de\n")
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "autograder/results/results.json").read_text(encoding="utf-8"))
    assert results["output"] == "NICHT BESTANDEN 3/4" and results["score"] == 7.5
    assert "erwartet 3, erhalten 1" in results["tests"][3]["output"]


def test_setup_installs_a_python_the_tutor_accepts_and_a_cpu_torch():
    text = (RECIPE / "setup.sh").read_text(encoding="utf-8")
    python = re.search(r"^PYTHON=python(\d+)\.(\d+)$", text, re.M)
    assert python is not None, "setup.sh names its Python as PYTHON=python3.N"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    needed = re.fullmatch(r">=(\d+)\.(\d+)", pyproject["project"]["requires-python"])
    assert needed is not None and (int(python[1]), int(python[2])) >= (int(needed[1]), int(needed[2]))
    assert "add-apt-repository -y ppa:deadsnakes/ppa" in text  # Ubuntu 22.04's own python3 is 3.10
    assert re.search(r'^"\$PYTHON" -m venv "\$ROOT/venv"$', text, re.M)
    torch = [line for line in text.splitlines() if "torch" in line and "pip" in line]
    assert len(torch) == 1 and torch[0].endswith(
        "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    )


def test_the_recipes_scripts_are_valid_bash():
    for name in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", str(RECIPE / name)], capture_output=True).returncode == 0, name
