"""What one run may ask for in a served session: the parameter forms bounded by the learner's caps.

The experiments' own models (tutor.experiments.params) keep the ranges every run has, on the command line
too; a served session adds its learner's caps on top, as a separate check the form makes before a run
starts: no more threads than the learner's cores, no more memory than their cap allows (less a margin
for the app itself), and no training job longer than MAX_STEPS steps in all. `need_bytes` estimates a
run's peak memory beyond the warm process it is forked from, from the tensors it makes (the formulas
below; benchmarks/bench_serve.py's notes give the peaks measured beside them).
"""

from __future__ import annotations

import math
from typing import Any

from tutor.experiments.result import Msg

APP_MARGIN = 256 * 2**20  # the app and its fork's own pages, beyond the warm process's shared ones
MAX_STEPS = 40_000  # a training job's steps in all: about an hour of one core at the defaults
FLOAT = 4
VOCAB = 8200  # the Tang corpus's characters, and a few the tokenizer adds: the output layer's width
TRAINING_BASE = 200 * 2**20  # a training run's corpus, tokenizer and evaluation, whatever its shape
CONTEXT_SCALING = 512 * 2**20  # measured 310-470 MiB at scales 16-64 (the stored figures: almost none)


def training_bytes(batch: int, context: int, n_embd: int, n_layer: int, n_head: int) -> int:
    """A training step's peak: weights with their gradients and Adam's two moments, the activations kept
    for backward, the output layer's logits. Fitted to peaks measured with 2 steps of train-compare (peak
    beyond the process's own 150 MiB; the estimate in brackets): defaults 287 MiB (272), batch 256
    1388 (1391), context 512 548 (569), n_embd 512 530 (546), 12 layers 326 (326), batch 64 and context
    256 1370 (1361); batch 256 and context 512 passed 6 GiB."""
    weights = 12 * n_layer * n_embd**2 + 2 * VOCAB * n_embd + context * n_embd
    tokens = batch * context
    floats = (
        1.5 * tokens * VOCAB + 16 * n_layer * tokens * n_embd + 0.5 * n_layer * batch * n_head * context**2
    )
    return TRAINING_BASE + int(FLOAT * (floats + 4 * weights))


def need_bytes(name: str, p: Any) -> int:
    """About how much memory a run of `name` with parameters `p` makes (0: little, whatever is asked).
    Measured beside the estimates: dk-scaling d_k 4096 with 50,000 samples 2356 MiB (2470), d_k 1024 with
    200,000 and T 512 2604 (3364); rope-relative d 1024 at 8192 positions in float64 787 (804)."""
    if name == "dk-scaling":
        d = max(set(p.dims) | {64})
        return FLOAT * (3 * p.samples * d + 2 * 256 * p.T * d)
    if name == "rope-relative":
        size = 8 if p.dtype == "float64" else FLOAT
        return size * (p.max_pos**2 + 4 * p.max_pos * p.d)
    if name == "train-compare":
        heads = max(h for _, h, _ in p.runs())
        return training_bytes(p.batch, p.context, p.n_embd, p.n_layer, heads)
    if name == "context-finetune":  # measured 574 MiB at the defaults, 1644 at batch 128
        length = math.ceil(p.scale * 32)  # the RoPE model's trained length is 32
        return training_bytes(p.batch, length, 128, 4, 4) + FLOAT * p.windows * length * VOCAB // 4
    if name == "context-scaling":  # scales 2, 4 and 8 at 2048 windows are stored with the model
        return 0 if p.scale in (2.0, 4.0, 8.0) and p.windows == 2048 else CONTEXT_SCALING
    return 0


def over_cap(name: str, p: Any, served: Any) -> Msg | None:
    """Why a served session may not run `name` with `p` (a text for the form), or None."""
    threads = getattr(p, "threads", None)
    cores = max(1, math.floor(served.cpu_cores))
    if threads is not None and threads > cores:
        return Msg("run.served_threads", cores=served.cpu_cores, most=cores)
    room = served.memory_bytes - APP_MARGIN
    need = need_bytes(name, p)
    if need > room:
        return Msg("run.served_memory", mib=served.memory_bytes >> 20, need=need >> 20)
    if name == "train-compare" and (asked := p.steps * len(p.runs()) * p.seeds) > MAX_STEPS:
        return Msg("run.served_work", most=MAX_STEPS, asked=asked)
    if name == "context-finetune" and (asked := p.steps * len(p.methods)) > MAX_STEPS:
        return Msg("run.served_work", most=MAX_STEPS, asked=asked)
    return None
