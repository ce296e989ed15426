"""Where things live: shipped lessons and checkpoints, and the learner's home (progress, workspace)."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

APP_NAME = "attention-tutor"


def shipped_lessons_dir() -> Path:
    """The `lessons/` folder shipped with the package (works from a checkout and from a wheel)."""
    return Path(str(files("lessons")))


def models_dir() -> Path:
    return Path(str(files("models")))


LEARNED_CHECKPOINT = "gpt-learned.pt"  # the course GPT: default config, learned positions
ROPE_SHORT_CHECKPOINT = "gpt-rope-short.pt"  # RoPE at block_size 32, for context scaling


def checkpoints_dir() -> Path:
    """The shipped checkpoints; `TUTOR_CHECKPOINTS` points at another folder (tests, development)."""
    env = os.environ.get("TUTOR_CHECKPOINTS")
    return Path(env).expanduser() if env else models_dir() / "checkpoints"


def default_checkpoint() -> Path:
    """The trained course GPT shipped in the repository (learned positions, default config)."""
    return checkpoints_dir() / LEARNED_CHECKPOINT


def tutor_child_env() -> dict[str, str]:
    """Environment for a `python -m tutor ...` child process: this checkout's tutor/ and models/ first
    on the path (also when not installed), UTF-8 output, unbuffered so progress lines arrive at once."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])  # the folder holding tutor/ and models/
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def default_home() -> Path:
    """`TUTOR_HOME`, else the platform's user-data directory."""
    env = os.environ.get("TUTOR_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)
