"""Layering rules that keep start-up fast and the logic testable without a terminal."""

import subprocess

import pytest
from conftest import PYTHON, run_tutor_env

LOGIC = ["tutor.content", "tutor.experiments", "tutor.grading", "tutor.quiz", "tutor.progress", "tutor.cli"]


@pytest.mark.parametrize("module", LOGIC)
def test_logic_packages_import_neither_textual_nor_torch(module):
    code = f"import sys, importlib; importlib.import_module({module!r}); print(sorted(m for m in ('textual', 'torch') if m in sys.modules))"
    out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=run_tutor_env(), check=True)
    assert out.stdout.strip() == "[]"


def test_version_needs_neither_torch_nor_textual():
    code = "import sys; from tutor.cli import main; main(['--version'])"
    out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=run_tutor_env())
    assert out.returncode == 0 and out.stdout.startswith("attention-tutor ")


def test_a_closed_pipe_ends_quietly():
    proc = subprocess.Popen(
        [PYTHON, "-m", "tutor", "lessons", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=run_tutor_env(),
    )
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert "Traceback" not in err and "BrokenPipe" not in err
