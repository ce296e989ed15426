"""The installed package (not the checkout) finds its lessons, checkpoints and corpus from any directory."""

import json
import os
import subprocess
import zipfile
from pathlib import Path

from conftest import PYTHON


def installed_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUTOR_") and k != "PYTHONPATH"}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _installed_json(cwd: Path, *args: str):
    """What `python ARGS` prints as JSON when run outside the checkout, with the checkout off the path."""
    out = subprocess.run([PYTHON, *args], cwd=cwd, capture_output=True, text=True, env=installed_env())
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_installed_package_runs_from_any_directory(tmp_path):
    code = (
        "import json, tutor.settings as p; "
        "print(json.dumps([str(p.shipped_lessons_dir()), str(p.default_checkpoint())]))"
    )
    lessons, checkpoint = map(Path, _installed_json(tmp_path, "-c", code))
    assert (lessons / "02-positions" / "lesson.toml").is_file()
    assert os.path.getsize(checkpoint) > 1_000_000
    listed = _installed_json(tmp_path, "-m", "tutor", "lessons", "--json", "--home", str(tmp_path / "home"))
    assert [lesson["id"] for lesson in listed] == ["multi-head", "positions", "rope-alibi"]


def test_installed_package_ships_the_tang_corpus_and_the_rope_models_tables(tmp_path):
    code = (
        "import json; from tutor.model.corpus import load_tang; from tutor.experiments.runner import run_quick; "
        "m = run_quick('context-scaling').metrics; print(json.dumps([len(load_tang()), m['stored']]))"
    )
    # the corpus and the stored tables, not a measurement
    assert _installed_json(tmp_path, "-c", code) == [47_497, 1]


def test_installed_package_ships_the_served_page():
    """`python -m tutor serve` reads its page from the package: it must be installed with it."""
    code = "import json, tutor.serve.server as s; print(json.dumps([s.PAGE.is_file(), s.STATIC.is_dir()]))"
    assert _installed_json(Path("/"), "-c", code) == [True, True]


def test_the_wheel_installs_one_top_level_name_and_no_cache(tmp_path):
    """`pip wheel .` holds `tutor` and its metadata only: no `models` or `lessons` beside it to collide with
    another package's in a shared environment, and no parse kept at run time (those go to the user's cache)."""
    root = Path(__file__).resolve().parents[1]
    built = subprocess.run(
        [
            PYTHON,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(root),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("attention_tutor-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"tutor", wheel.name.split("-py3")[0] + ".dist-info"}
    assert "tutor/model/checkpoints/gpt-learned.pt" in names and "tutor/lessons/course.toml" in names
    assert not [name for name in names if name.endswith(".pickle") or "__pycache__" in name]


def test_a_learner_imports_the_course_gpt_with_the_lessons_line(tmp_path):
    code = (
        "import json, sys; from tutor.model import GPT, GPTConfig; "
        "print(json.dumps([GPT.__module__, GPTConfig().n_head, 'torch' in sys.modules]))"
    )
    module, heads, torch_loaded = _installed_json(tmp_path, "-c", code)
    assert module == "tutor.model.gpt" and heads >= 1 and torch_loaded
    tokenizer_only = "import json, sys, tutor.model.tokenizer; print(json.dumps('torch' in sys.modules))"
    assert _installed_json(tmp_path, "-c", tokenizer_only) is False  # the package's names load on first use
