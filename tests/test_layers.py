"""Layering rules that keep start-up fast and the logic testable without a terminal."""

import subprocess

import pytest
from conftest import PYTHON, run_tutor_env

LOGIC = [
    "tutor.content",
    "tutor.experiments",
    "tutor.grading",
    "tutor.quiz",
    "tutor.progress",
    "tutor.cli",
    "tutor.commands",
    "models.corpus",
]


# Every module of the package, not just its __init__ (the packages export lazily, so importing the
# package alone would load almost nothing).
IMPORT_ALL = """
import importlib, pkgutil, sys
top = importlib.import_module({module!r})
names = [m.name for m in pkgutil.walk_packages(getattr(top, "__path__", []), top.__name__ + ".")]
for name in names:
    importlib.import_module(name)
print(len(names), sorted(m for m in ("textual", "torch") if m in sys.modules))
"""


@pytest.mark.parametrize("module", LOGIC)
def test_logic_packages_import_neither_textual_nor_torch(module):
    code = IMPORT_ALL.format(module=module)
    out = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, env=run_tutor_env(), check=True
    )
    count, heavy = out.stdout.strip().split(" ", 1)
    assert heavy == "[]"
    assert module in ("tutor.cli", "models.corpus") or int(count) >= 3  # the walk found the package's modules


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
