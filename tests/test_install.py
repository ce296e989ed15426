"""The installed package (not the checkout) finds its lessons and checkpoints from any directory."""

import json
import os
import subprocess
from pathlib import Path

from conftest import PYTHON


def installed_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUTOR_") and k != "PYTHONPATH"}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def test_installed_package_runs_from_any_directory(tmp_path):
    code = (
        "import json, tutor.settings as p; "
        "print(json.dumps([str(p.shipped_lessons_dir()), str(p.default_checkpoint())]))"
    )
    out = subprocess.run(
        [PYTHON, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=installed_env()
    )
    assert out.returncode == 0, out.stderr
    lessons, checkpoint = map(Path, json.loads(out.stdout))
    assert (lessons / "02-positions" / "lesson.toml").is_file()
    assert os.path.getsize(checkpoint) > 1_000_000
    listed = subprocess.run(
        [PYTHON, "-m", "tutor", "lessons", "--json", "--home", str(tmp_path / "home")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=installed_env(),
    )
    assert listed.returncode == 0, listed.stderr
    assert [lesson["id"] for lesson in json.loads(listed.stdout)] == ["multi-head", "positions", "rope-alibi"]


def test_installed_package_ships_the_tang_corpus_and_the_rope_models_tables(tmp_path):
    code = (
        "import json; from models.corpus import load_tang; from tutor.experiments.runner import run_quick; "
        "m = run_quick('context-scaling').metrics; print(json.dumps([len(load_tang()), m['stored']]))"
    )
    out = subprocess.run(
        [PYTHON, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=installed_env()
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [47_497, 1]  # the corpus and the stored tables, not a measurement
