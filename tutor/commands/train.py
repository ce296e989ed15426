"""`python -m tutor train`: train the course GPT on the shipped poems or a corpus of your own."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tutor.commands.experiment import emit_json_line, stop_on_signals
from tutor.errors import TutorError

HELP = "train the shared GPT (heads, layers, position mode, steps, corpus...)"


def add_arguments(p) -> None:
    p.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--layers", type=int, default=4, help="blocks (default 4)")
    p.add_argument("--embd", type=int, default=128, help="n_embd (default 128)")
    p.add_argument("--block", type=int, default=128, help="block_size: longest context (default 128)")
    p.add_argument("--pos", choices=("learned", "none", "rope", "alibi"), default="learned")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch", type=int, default=16, help="batch size (default 16)")
    p.add_argument("--context", type=int, default=None, help="training window (default: block)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument(
        "--windows",
        choices=("line", "any"),
        default="line",
        help="training windows start at a line start (default) or anywhere",
    )
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or mps when present")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    p.add_argument(
        "--corpus", type=Path, default=None, help="your own corpus: poetry JSON or plain UTF-8 text"
    )
    p.add_argument(
        "--out", type=Path, default=None, help="checkpoint to write (default: HOME/runs/<settings>.pt)"
    )
    p.add_argument("--resume", action="store_true", help="continue from --out if it exists")
    p.add_argument(
        "--weights-only",
        action="store_true",
        help="drop optimizer state at the end (3x smaller; not resumable)",
    )
    p.add_argument("--jsonl", action="store_true", help="stream progress as JSON lines (for programs)")


def run(args, ctx) -> int:
    from models.corpus import corpus_text, import_corpus, load_poems, split_poems
    from models.gpt import GPTConfig
    from models.train import TrainConfig, train

    try:
        model_cfg = GPTConfig(
            block_size=args.block,
            n_layer=args.layers,
            n_head=args.heads,
            n_embd=args.embd,
            dropout=args.dropout,
            pos=args.pos,
        )
        cfg = TrainConfig(
            steps=args.steps,
            batch_size=args.batch,
            context=args.context,
            lr=args.lr,
            eval_interval=args.eval_interval,
            seed=args.seed,
            device=args.device,
            threads=args.threads,
            windows=args.windows,
        )
    except ValueError as err:
        raise TutorError(str(err)) from err
    poems = import_corpus(args.corpus) if args.corpus else load_poems()
    train_poems, val_poems = split_poems(poems)
    out = args.out or ctx.home / "runs" / _default_name(args, model_cfg, cfg)
    if out.is_dir():
        raise TutorError(f"--out {out} is a folder; name the checkpoint file, e.g. {out / 'model.pt'}")
    try:  # an unwritable place fails now, not at the first save minutes into training
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot create the folder for the checkpoint {out}: {err.strerror or err}") from err
    stop = stop_on_signals()
    emit = emit_json_line if args.jsonl else _print_event
    emit({"event": "start", "out": str(out), "poems_train": len(train_poems), "poems_val": len(val_poems)})
    try:
        result = train(
            model_cfg,
            cfg,
            corpus_text(train_poems),
            corpus_text(val_poems),
            out=out,
            on_progress=lambda p: emit({"event": "progress", **p.__dict__}),
            should_stop=stop.is_set,
            resume=args.resume,
            meta={"corpus": str(args.corpus) if args.corpus else "shipped"},
        )
        if args.weights_only and not result.cancelled:
            from models.checkpoint import strip_training_state

            strip_training_state(out)
    except ValueError as err:
        raise TutorError(str(err)) from err
    except OSError as err:  # e.g. the disk filled up or the folder became read-only mid-run
        raise TutorError(f"cannot write the checkpoint {out}: {err.strerror or err}") from err
    emit({"event": "cancelled" if result.cancelled else "done", "out": str(out), **result.__dict__})
    return 1 if result.cancelled else 0


def _default_name(args, model_cfg, cfg) -> str:
    """Readable settings plus a digest of all of them, so runs that differ only in batch, learning rate,
    seed or corpus do not overwrite (or resume) each other."""
    settings = {"model": model_cfg.to_dict(), "train": cfg.__dict__, "corpus": str(args.corpus or "shipped")}
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{args.pos}-h{args.heads}-l{args.layers}-e{args.embd}-s{args.steps}-{digest}.pt"


def _print_event(event: dict) -> None:
    kind = event["event"]
    if kind == "start":
        print(
            f"training on {event['poems_train']} poems, validating on {event['poems_val']} -> {event['out']}"
        )
    elif kind == "progress" and (event["val_loss"] is not None or event["step"] == 1):
        val = f"  val {event['val_loss']:.3f}" if event["val_loss"] is not None else ""
        print(
            f"step {event['step']:>5}/{event['steps']}  loss {event['loss']:.3f}{val}  "
            f"{event['tokens_per_s']:,.0f} tok/s  eta {event['eta_s']:.0f}s",
            flush=True,
        )
    elif kind in ("done", "cancelled"):
        val = event["final_val_loss"]
        print(
            f"{kind}: {event['steps_done']} steps in {event['seconds']:.1f}s, val loss {val:.4f}"
            if val is not None
            else f"{kind}: no validation yet",
        )
        print(f"checkpoint: {event['out']}")
