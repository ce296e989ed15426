"""Our code as files, for the tests that read it: tutor/ without the course's files (tutor/lessons/: the
learners' starters and the authors' checks are data, not our code) and, where a test reads the app's own
rules, without the course GPT (tutor/model/: it stands alone and speaks English, see tests/test_layers.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTOR = ROOT / "tutor"
COURSE = TUTOR / "lessons"
MODEL = TUTOR / "model"


def code_files(*, model: bool = True) -> list[Path]:
    """Every Python file of ours under tutor/, sorted; the course GPT's only when `model`."""
    skip = (COURSE,) if model else (COURSE, MODEL)
    return sorted(f for f in TUTOR.rglob("*.py") if not any(f.is_relative_to(s) for s in skip))
