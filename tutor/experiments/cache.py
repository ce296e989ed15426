"""Models loaded once per process: the shipped checkpoints, their re-configured variants and
fresh seeded models. Thread-safe (the UI runs experiments in worker threads).

Checkpoints come from `tutor.settings.checkpoints_dir()` (`TUTOR_CHECKPOINTS` or the shipped folder).
"""

from __future__ import annotations

import threading
from typing import Any

from tutor.experiments.errors import ExperimentError
from tutor.settings import LEARNED_CHECKPOINT, ROPE_SHORT_CHECKPOINT, checkpoints_dir

LEARNED = LEARNED_CHECKPOINT
ROPE_SHORT = ROPE_SHORT_CHECKPOINT

_lock = threading.RLock()
_checkpoints: dict[tuple, Any] = {}
_fresh: dict[tuple, Any] = {}


def checkpoint(name: str = LEARNED, **overrides: Any):
    """The shipped checkpoint `name` (eval mode), with config overrides such as rope_scaling."""
    path = checkpoints_dir() / name
    key = (str(path), tuple(sorted(overrides.items())))
    with _lock:
        if key not in _checkpoints:
            if not path.is_file():
                raise ExperimentError("err.experiment.no_checkpoint_train", path=str(path))
            from tutor.model.checkpoint import load_checkpoint

            try:
                _checkpoints[key] = load_checkpoint(path, **overrides)
            except ValueError as err:
                raise ExperimentError("err.experiment.bad_checkpoint", detail=str(err)) from err
        return _checkpoints[key]


def fresh_model(seed: int, **config: Any):
    """A freshly initialised GPT in eval mode, the same for the same seed and config."""
    key = (seed, tuple(sorted(config.items())))
    with _lock:
        if key not in _fresh:
            import torch

            from tutor.model.gpt import GPT, GPTConfig

            gen_state = torch.random.get_rng_state()
            torch.manual_seed(seed)
            try:
                model = GPT(GPTConfig(**config)).eval()
            finally:
                torch.random.set_rng_state(gen_state)  # do not disturb other users of the global RNG
            _fresh[key] = model
        return _fresh[key]
