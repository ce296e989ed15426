"""Training loop for the course GPT: AdamW, warm-up + cosine schedule, periodic validation,
early stopping, progress callbacks, cancellation, seeding, atomic checkpoints and resume.

`train()` is a plain function so the CLI (`python -m tutor train`), the experiments' child
processes and the tests all drive the same loop.
"""

from __future__ import annotations

import ctypes
import math
import platform
import random
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from tutor.model.baselines import Baselines, ngram_baselines
from tutor.model.checkpoint import load_checkpoint, save_checkpoint
from tutor.model.gpt import GPT, GPTConfig
from tutor.model.step import eval_loss, step_loss
from tutor.model.tokenizer import CharTokenizer


@dataclass
class TrainConfig:
    steps: int = 2000
    batch_size: int = 16
    context: int | None = None  # training window; default the model's block_size
    lr: float = 2e-3
    min_lr: float | None = None  # default lr / 10
    warmup: int | None = None  # default a tenth of the steps, at most 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_interval: int = 100
    eval_batches: int = 8
    seed: int = 1337
    device: str = "cpu"
    threads: int | None = None  # torch intra-op threads; None leaves torch's default
    # where windows start: "poem" (at the newline before a poem: position 0 is the poem-start mark, 1 its
    # first character), "line" (at any line) or "any" position
    windows: str = "poem"
    # "fp32", "bf16" (autocast; weights stay fp32) or "auto": bf16 where the CPU has it
    precision: str = "auto"

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "eval_interval", "eval_batches"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.threads is not None and self.threads < 0:
            raise ValueError(f"threads must be at least 1 (0 or unset: torch's default), got {self.threads}")
        if self.windows not in WINDOWS:
            raise ValueError(f"windows must be one of {', '.join(WINDOWS)}, got {self.windows!r}")
        if self.precision not in ("auto", "fp32", "bf16"):
            raise ValueError(f"precision must be auto, fp32 or bf16, got {self.precision!r}")
        if self.min_lr is None:
            self.min_lr = self.lr / 10
        if self.warmup is None:
            self.warmup = min(100, max(1, self.steps // 10))
        if self.warmup < 1:
            raise ValueError(f"warmup must be at least 1 step, got {self.warmup}")
        if self.lr <= 0 or self.min_lr < 0 or self.min_lr > self.lr:
            raise ValueError(f"need 0 ≤ min_lr ≤ lr and lr > 0, got lr={self.lr}, min_lr={self.min_lr}")


@dataclass
class Progress:
    step: int
    steps: int
    loss: float
    lr: float
    tokens_per_s: float
    elapsed_s: float
    eta_s: float
    val_loss: float | None = None


@dataclass
class TrainResult:
    steps_done: int
    final_val_loss: float | None
    seconds: float
    cancelled: bool
    num_params: int
    baselines: Baselines  # count-based losses on the same validation windows
    curve: list[dict] = field(default_factory=list)  # {"step", "loss", "val_loss"} at each evaluation
    best_val_loss: float | None = None
    best_step: int | None = None
    stopped_early: bool = False


def check_device(device: str) -> str:
    if device == "cpu":
        return device
    if device == "cuda" and torch.cuda.is_available():
        return device
    if device == "mps" and getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return device
    raise ValueError(f"device {device!r} is not available here; use cpu")


def use_bf16(precision: str, device: str) -> bool:
    """bf16 autocast runs the matmuls at about 1.4× the fp32 speed on CPUs with native bf16 (AVX512-BF16 or
    AMX); elsewhere it is emulated and slower, so "auto" turns it on only where the hardware has it."""
    if precision != "auto":
        return precision == "bf16"
    if device == "cpu":
        return bool(getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)())
    return device == "cuda" and torch.cuda.is_bf16_supported()


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to lr, then cosine decay to min_lr at the last step."""
    assert cfg.warmup is not None and cfg.min_lr is not None  # TrainConfig.__post_init__ sets both
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * min(progress, 1.0)))


def line_starts(text: str) -> torch.Tensor:
    """Indices where a line of text begins (not blank lines)."""
    starts = [0] + [m.start() + 1 for m in re.finditer(r"\n(?=[^\n])", text)]
    return torch.tensor(starts, dtype=torch.long)


def poem_starts(text: str) -> torch.Tensor:
    """Indices of the newline that opens each poem: the second of the blank line before it. A window
    starting there reads a poem whole from its first character at position 1, and learns how long poems
    are; the poems after it in the window start wherever the one before ended."""
    starts = [m.start() + 1 for m in re.finditer(r"\n(?=\n[^\n])", text)]
    return torch.tensor(starts, dtype=torch.long)


WINDOWS = {"poem": poem_starts, "line": line_starts, "any": None}


class Batches:
    """Random training windows and a fixed set of validation windows from encoded text.

    With `train_starts`/`val_starts` (e.g. line starts) every window begins at one of those
    positions, so position m of a window is the m-th character of a line: a learned position
    table can then tie "the sixth character" to the comma of a five-character line.
    """

    def __init__(
        self,
        train_ids: torch.Tensor,
        val_ids: torch.Tensor,
        context: int,
        batch_size: int,
        seed: int,
        train_starts: torch.Tensor | None = None,
        val_starts: torch.Tensor | None = None,
    ):
        shortest = min(len(train_ids), len(val_ids)) - 1
        if shortest < 2:
            raise ValueError("the corpus is too small to cut training and validation windows from")
        self.context = min(context, shortest)
        self.batch_size = batch_size
        self.train_ids, self.val_ids = train_ids, val_ids
        self.train_starts = self._usable(train_starts, len(train_ids))
        self.val_starts = self._usable(val_starts, len(val_ids))
        self.gen = torch.Generator().manual_seed(seed)

    def _usable(self, starts: torch.Tensor | None, n: int) -> torch.Tensor:
        last = n - self.context - 1
        if starts is None:
            return torch.arange(max(last, 1))
        starts = starts[starts < last]
        return starts if len(starts) else torch.arange(max(last, 1))

    def _windows(self, ids: torch.Tensor, starts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        offsets = torch.arange(self.context + 1)
        w = ids[starts[:, None] + offsets[None, :]]
        return w[:, :-1], w[:, 1:]

    def train_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        pick = torch.randint(len(self.train_starts), (self.batch_size,), generator=self.gen)
        return self._windows(self.train_ids, self.train_starts[pick])

    def val_batches(self, n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        # the same windows every time, so validation losses are comparable across steps and runs
        gen = torch.Generator().manual_seed(0)
        picks = [torch.randint(len(self.val_starts), (self.batch_size,), generator=gen) for _ in range(n)]
        return [self._windows(self.val_ids, self.val_starts[pick]) for pick in picks]


def make_batches(
    tokenizer: CharTokenizer,
    train_text: str,
    val_text: str,
    cfg: TrainConfig,
    context: int,
    start_step: int = 0,
) -> Batches:
    """The windows a run with `cfg` trains and validates on (resuming at `start_step` reseeds the sampler)."""
    corpus = _corpus(tokenizer, train_text, val_text, cfg.windows)
    return Batches(
        corpus.train_ids,
        corpus.val_ids,
        context,
        cfg.batch_size,
        cfg.seed + start_step,
        corpus.train_starts,
        corpus.val_starts,
    )


@dataclass
class _Corpus:
    """A text pair encoded for training, and the baselines scored on it (by validation windows)."""

    train_ids: torch.Tensor
    val_ids: torch.Tensor
    train_starts: torch.Tensor | None
    val_starts: torch.Tensor | None
    baselines: dict[tuple, Baselines] = field(default_factory=dict)


_CORPORA: dict[tuple, _Corpus] = {}  # the last few encoded: every run of a job trains on the same text


def _corpus(tokenizer: CharTokenizer, train_text: str, val_text: str, windows: str) -> _Corpus:
    """The text pair encoded with `tokenizer` and its window starts (2.7M characters: 1-2 s), kept for the
    next run on the same text in this process."""
    key = (
        "".join(tokenizer.chars),
        windows,
        len(train_text),
        hash(train_text),
        len(val_text),
        hash(val_text),
    )
    if key not in _CORPORA:
        starts = WINDOWS[windows]
        if len(_CORPORA) >= 4:
            _CORPORA.pop(next(iter(_CORPORA)))
        _CORPORA[key] = _Corpus(
            encoded(tokenizer, train_text),
            encoded(tokenizer, val_text),
            starts(train_text) if starts else None,
            starts(val_text) if starts else None,
        )
    return _CORPORA[key]


def encoded(tokenizer: CharTokenizer, text: str) -> torch.Tensor:
    """tokenizer.encode(text, unknown="unk") as a tensor, looked up at C speed (a list of 2.7M ids takes
    seconds to build)."""
    if not text:
        return torch.zeros(0, dtype=torch.long)
    points = torch.frombuffer(bytearray(text.encode("utf-32-le")), dtype=torch.int32).long()
    table = torch.zeros(max(int(points.max()), *map(ord, tokenizer.chars)) + 1, dtype=torch.long)
    table[torch.tensor([ord(c) for c in tokenizer.chars])] = torch.arange(tokenizer.vocab_size)
    table[ord(tokenizer.chars[0])] = (
        0  # the unknown mark, which every character not in the vocabulary becomes
    )
    return table[points]


@torch.no_grad()
def evaluate(
    model: GPT, batches: list[tuple[torch.Tensor, torch.Tensor]], device: str = "cpu", bf16: bool = False
) -> float:
    """The mean loss of `model` over `batches`, in eval mode; with `bf16`, as the training step computes it
    (tutor.model.step.eval_loss: what `train` validates with when it trains in bf16), the batches as one when
    they have one shape (fewer, larger matmuls: a head-count validation of 8 × 10 windows of 64 in 200 ms
    against 230 ms one batch at a time)."""
    was_training = model.training
    model.eval()
    if bf16 and len({x.shape for x, _ in batches}) == 1:
        batches = [(torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches]))]
    try:
        losses = [eval_loss(model, x.to(device), y.to(device), bf16).item() for x, y in batches]
    finally:
        model.train(was_training)  # as in GPT.generate: the caller gets its mode back even after an error
    return sum(losses) / len(losses)


def make_optimizer(model: GPT, cfg: TrainConfig, state: dict | None = None) -> torch.optim.AdamW:
    """AdamW for `model`, with a saved `state` loaded when resuming."""
    # decay the matrices (Linear weights and the tied token/position tables); biases and LayerNorm
    # gains are 1-D and stay undecayed
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), fused=True)
    if state is not None:
        optimizer.load_state_dict(state)
    return optimizer


def warm_up_optimizers() -> None:
    """A process's first optimizer imports torch's compiler front end (seconds): paid here, before a timing."""
    torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))])


def _resumed(out: Path, model_cfg: GPTConfig) -> tuple[GPT, CharTokenizer, int, list, dict | None]:
    """Model, tokenizer, step, curve and optimizer state of the run saved in `out`, with its RNG restored;
    ValueError when it was trained with other settings than `model_cfg`."""
    ck = load_checkpoint(out)
    saved, asked = ck.model.cfg.to_dict(), model_cfg.to_dict()
    differ = [
        f"{k}={saved[k]!r} (asked {asked[k]!r})" for k in saved if k != "vocab_size" and saved[k] != asked[k]
    ]
    if differ:
        raise ValueError(
            f"cannot resume {out}: it was trained with {', '.join(differ)}; pass the same settings"
        )
    if "rng" in ck.meta:
        torch.set_rng_state(torch.tensor(ck.meta["rng"], dtype=torch.uint8))
    step = int(ck.meta.get("step", 0))
    return ck.model, ck.tokenizer, step, list(ck.meta.get("curve", [])), ck.optimizer_state


def optimizer_step(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, cfg: TrainConfig, lr: float
) -> None:
    """Clip the gradients `model` holds and take one optimizer step at learning rate `lr`."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    optimizer.step()


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
_heap_kept = False


def keep_freed_memory() -> bool:
    """Keep the memory a step frees for the next one (glibc only; once a process, the first step calls it).

    A step allocates and frees the same few dozen buffers every time, several of them megabytes (the output
    layer's logits, the activations). With glibc's defaults a freed block at the top of the heap goes back to
    the system once more than 128 KiB are free there, and the next step's allocation faults every page of it
    in again, zeroed by the kernel: 5,000-6,000 page faults and 9-14 ms of system time a step at batch 10 ×
    context 64 (about a sixth of the step; benchmarks/bench_train.py). Here the heap is trimmed only past
    1 GiB, and blocks up to 32 MiB come from the heap, not from a fresh mapping each. Nothing the step
    computes changes: only where its buffers live. True when set here (or before)."""
    global _heap_kept
    if _heap_kept:
        return True
    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own C library
        ok = libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30) == 1 and libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20) == 1
    except (OSError, AttributeError):
        return False
    _heap_kept = ok
    return ok


def train_step(
    model: GPT,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    cfg: TrainConfig,
    lr: float,
    device: str = "cpu",
    bf16: bool = False,
) -> torch.Tensor:
    """One optimizer step at learning rate `lr` on the batch (x, y); returns its loss. The course GPT's loss
    is computed without its full table of logits (tutor.model.step)."""
    if not _heap_kept:
        keep_freed_memory()
    with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=bf16):
        loss = step_loss(model, x.to(device), y.to(device), bf16)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer_step(model, optimizer, cfg, lr)
    return loss


def _check_patience(patience: int | None) -> None:
    if patience is not None and patience < 1:
        raise ValueError(f"patience must be at least 1 evaluation, got {patience}")


def train(
    model_cfg: GPTConfig,
    cfg: TrainConfig,
    train_text: str,
    val_text: str,
    out: Path | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: bool = False,
    tokenizer: CharTokenizer | None = None,
    meta: dict | None = None,
    patience: int | None = None,
    init: GPT | None = None,
) -> TrainResult:
    """Train a GPT on `train_text`, validating on `val_text`; write `out` atomically.

    With `resume=True` and an existing `out`, continue from its step, weights and optimizer.
    `should_stop()` is polled every step: a cancelled run returns `cancelled=True` and leaves
    `out` as it was at its last complete save. Early stopping: with `patience` (an argument, as stored
    train-compare runs are keyed by TrainConfig), `out` is written only at a new low of the validation
    loss, and training stops after `patience` evaluations without one. The count-based baselines
    (tutor.model.baselines) are scored on the same validation windows and stored in the checkpoint's meta.
    With `init` (and its `tokenizer`): a fine-tune of that model, with a fresh optimizer and schedule.
    """
    device = check_device(cfg.device)
    _check_patience(patience)
    _seed(cfg)
    out = Path(out) if out is not None else None
    model, tokenizer, start_step, curve, opt_state = _starting_point(
        model_cfg, train_text, val_text, out if resume else None, tokenizer, init
    )
    model.to(device).train()
    batches = make_batches(
        tokenizer, train_text, val_text, cfg, cfg.context or model.cfg.block_size, start_step
    )
    val_set = batches.val_batches(cfg.eval_batches)
    baselines = fit_baselines(batches, val_set, model.cfg.vocab_size)
    optimizer = make_optimizer(model, cfg, opt_state)
    record = _Record(curve)
    save = _Saver(out, model, tokenizer, optimizer, cfg, meta, baselines, record)
    bf16 = use_bf16(cfg.precision, device)
    pace = _Pace(cfg, start_step, cfg.batch_size * batches.context)
    step, cancelled, stopped_early = start_step, False, False
    while step < cfg.steps and not stopped_early:
        if should_stop is not None and should_stop():
            cancelled = True
            break
        lr = lr_at(step, cfg)
        loss = train_step(model, optimizer, *batches.train_batch(), cfg, lr, device, bf16)
        step += 1
        val_loss = None
        if step % cfg.eval_interval == 0 or step == cfg.steps:
            val_loss = evaluate(model, val_set, device, bf16)
            if record.add(step, loss.item(), val_loss) or patience is None:
                save(step)
            stopped_early = patience is not None and record.evals_since_best >= patience
        if on_progress is not None:
            on_progress(pace.progress(step, loss.item(), lr, val_loss))
    model.eval()
    return record.result(step, pace.seconds(), cancelled, stopped_early, model.num_params(), baselines)


def _seed(cfg: TrainConfig) -> None:
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)


def _starting_point(
    model_cfg: GPTConfig,
    train_text: str,
    val_text: str,
    resume_from: Path | None,
    tokenizer: CharTokenizer | None,
    init: GPT | None,
) -> tuple[GPT, CharTokenizer, int, list, dict | None]:
    """Model, tokenizer, first step, curve so far and optimizer state: those of the run saved in
    `resume_from` if it exists, else `init` to fine-tune, else a new model for `model_cfg`."""
    if resume_from is not None and resume_from.is_file():
        return _resumed(resume_from, model_cfg)
    if init is not None:
        if tokenizer is None:
            raise ValueError("fine-tuning (init) needs the model's own tokenizer")
        return init, tokenizer, 0, [], None
    tokenizer = tokenizer or CharTokenizer.from_text(train_text + val_text)
    model = GPT(GPTConfig(**{**model_cfg.to_dict(), "vocab_size": tokenizer.vocab_size}))
    return model, tokenizer, 0, [], None


def fit_baselines(
    batches: Batches, val_set: list[tuple[torch.Tensor, torch.Tensor]], vocab_size: int
) -> Baselines:
    """The count-based models, fitted on the training text and scored on the model's validation windows (kept
    with the encoded text: the same windows give the same figures)."""
    corpus = next(
        (c for c in _CORPORA.values() if c.train_ids is batches.train_ids and c.val_ids is batches.val_ids),
        None,
    )
    key = (batches.context, batches.batch_size, len(val_set), vocab_size)
    if corpus is not None and key in corpus.baselines:
        return corpus.baselines[key]
    inputs = torch.cat([x for x, _ in val_set])
    targets = torch.cat([y for _, y in val_set])
    baselines = ngram_baselines(batches.train_ids, inputs, targets, vocab_size)
    if corpus is not None:
        corpus.baselines[key] = baselines
    return baselines


class _Record:
    """The validation record of a run: its curve ({"step", "loss", "val_loss"} per evaluation) and best point."""

    def __init__(self, curve: list[dict]):
        self.curve = curve
        self.best = min(curve, key=lambda point: point["val_loss"]) if curve else None

    @property
    def last_val_loss(self) -> float | None:
        return self.curve[-1]["val_loss"] if self.curve else None

    @property
    def evals_since_best(self) -> int:
        assert self.best is not None  # asked after the first evaluation
        return len(self.curve) - 1 - self.curve.index(self.best)

    def add(self, step: int, loss: float, val_loss: float) -> bool:
        """Record an evaluation; True when it is a new best."""
        self.curve.append({"step": step, "loss": loss, "val_loss": val_loss})
        if self.best is None or val_loss < self.best["val_loss"]:
            self.best = self.curve[-1]
        return self.best is self.curve[-1]

    def result(
        self,
        step: int,
        seconds: float,
        cancelled: bool,
        stopped_early: bool,
        params: int,
        baselines: Baselines,
    ) -> TrainResult:
        best = self.best
        return TrainResult(
            steps_done=step,
            final_val_loss=self.last_val_loss,
            seconds=seconds,
            cancelled=cancelled,
            num_params=params,
            curve=self.curve,
            best_val_loss=best["val_loss"] if best else None,
            best_step=best["step"] if best else None,
            stopped_early=stopped_early,
            baselines=baselines,
        )


@dataclass
class _Saver:
    """Writes the run's checkpoint at a step, with what resuming needs in its metadata; nothing without `out`."""

    out: Path | None
    model: GPT
    tokenizer: CharTokenizer
    optimizer: torch.optim.Optimizer
    cfg: TrainConfig
    meta: dict | None
    baselines: Baselines
    record: _Record

    def __call__(self, step: int) -> None:
        if self.out is None:
            return
        info = {
            **(self.meta or {}),
            "step": step,
            "train": asdict(self.cfg),
            "val_loss": self.record.last_val_loss,
            "baselines": self.baselines.to_dict(),
            "curve": self.record.curve,
            "rng": torch.get_rng_state().tolist(),
        }
        save_checkpoint(self.out, self.model, self.tokenizer, info, self.optimizer.state_dict())


class _Pace:
    """Time and speed of a run since it started (or resumed) at `start_step`, for progress reports."""

    def __init__(self, cfg: TrainConfig, start_step: int, tokens_per_step: int):
        self.steps, self.start_step, self.tokens_per_step = cfg.steps, start_step, tokens_per_step
        self.t0 = time.perf_counter()

    def seconds(self) -> float:
        return time.perf_counter() - self.t0

    def progress(self, step: int, loss: float, lr: float, val_loss: float | None) -> Progress:
        elapsed = self.seconds()
        per_step = elapsed / (step - self.start_step)
        return Progress(
            step=step,
            steps=self.steps,
            loss=loss,
            lr=lr,
            tokens_per_s=self.tokens_per_step / per_step,
            elapsed_s=elapsed,
            eta_s=per_step * (self.steps - step),
            val_loss=val_loss,
        )
