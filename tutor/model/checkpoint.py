"""Saving and loading the course GPT: weights, config, tokenizer and training metadata in one file.

Writes are atomic (a temp file beside the target, then os.replace), so an interrupted save never
leaves a half-written checkpoint. Files load with `torch.load(weights_only=True)`.

The output layer shares its matrix with the token embedding (weight tying), and the file stores that
matrix once. Shipped checkpoints (`strip_training_state`) keep their weights in float16, half the bytes;
loading casts them back to the model's float32 (on the course model the validation loss moves by less
than 0.0005).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from tutor.atomicio import atomic_write
from tutor.model.gpt import GPT, GPTConfig
from tutor.model.tokenizer import CharTokenizer

FORMAT = 1


@dataclass
class Checkpoint:
    model: GPT
    tokenizer: CharTokenizer
    meta: dict[str, Any] = field(default_factory=dict)
    optimizer_state: dict | None = None
    path: Path | None = None


def atomic_torch_save(obj: Any, path: Path) -> None:
    atomic_write(path, lambda fh: torch.save(obj, fh))


def _weights(model: GPT, dtype: torch.dtype | None = None) -> dict[str, torch.Tensor]:
    """A copy of the state dict in which tensors that share storage (the tied embedding and output layer)
    still share it, so torch.save writes them once; floating tensors cast to `dtype` when given."""
    copies: dict[int, torch.Tensor] = {}
    out = {}
    for name, tensor in model.state_dict().items():
        key = tensor.data_ptr()
        if key not in copies:
            t = tensor.detach()
            copies[key] = t.to(dtype) if dtype is not None and t.is_floating_point() else t.clone()
        out[name] = copies[key]
    return out


def save_checkpoint(
    path: Path,
    model: GPT,
    tokenizer: CharTokenizer,
    meta: dict | None = None,
    optimizer_state: dict | None = None,
    dtype: torch.dtype | None = None,
) -> None:
    payload = {
        "format": FORMAT,
        "config": model.cfg.to_dict(),
        "tokenizer": tokenizer.to_dict(),
        "model": _weights(model, dtype),
        "meta": meta or {},
    }
    if optimizer_state is not None:
        payload["optimizer"] = optimizer_state
    atomic_torch_save(payload, path)


def load_checkpoint(path: Path, **overrides: Any) -> Checkpoint:
    """Load a checkpoint; `overrides` change config fields that do not alter the weights' shapes
    (e.g. rope_scaling, rope_scale, dropout)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # pickle, zip and version errors all mean the same to the user
        # torch's own message runs to paragraphs and suggests weights_only=False, which is unsafe
        # advice for a file of unknown origin: name the kind of failure only
        raise ValueError(f"{path} is not a readable checkpoint ({type(err).__name__})") from err
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path} is not a course GPT checkpoint (format {FORMAT})")
    cfg = GPTConfig(**{**payload["config"], **overrides})
    model = GPT(cfg)
    model.load_state_dict(payload["model"])
    model.eval()
    return Checkpoint(
        model=model,
        tokenizer=CharTokenizer.from_dict(payload["tokenizer"]),
        meta=payload.get("meta", {}),
        optimizer_state=payload.get("optimizer"),
        path=path,
    )


def strip_training_state(path: Path) -> None:
    """Rewrite a checkpoint with weights (float16), config, tokenizer and metadata only: no optimizer moments
    and no RNG state. A sixth of the size, for shipping; it can be loaded and fine-tuned, not resumed exactly."""
    ck = load_checkpoint(path)
    meta = {k: v for k, v in ck.meta.items() if k != "rng"}
    save_checkpoint(path, ck.model, ck.tokenizer, meta, dtype=torch.float16)


def keep_in_meta(path: Path, ck: Checkpoint, key: str, value: Any) -> None:
    """Rewrite the checkpoint `ck` loaded from `path` with `value` under meta[key] (measured figures that
    experiments read back). A shipped file, without optimizer state, stays in float16 as it was written."""
    dtype = torch.float16 if ck.optimizer_state is None else None
    save_checkpoint(path, ck.model, ck.tokenizer, {**ck.meta, key: value}, ck.optimizer_state, dtype)
