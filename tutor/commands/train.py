"""`python -m tutor train`: train the course GPT on the shipped Tang poems or a corpus of your own."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.commands.experiment import emit_json_line, stop_on_signals
from tutor.errors import TutorError
from tutor.texts import say

if TYPE_CHECKING:
    from tutor.model.gpt import GPTConfig
    from tutor.model.train import TrainConfig


def add_arguments(p, t) -> None:
    p.add_argument("--heads", type=int, default=4, help=t("cli.opt.train.heads"))
    p.add_argument("--layers", type=int, default=4, help=t("cli.opt.train.layers"))
    p.add_argument("--embd", type=int, default=128, help=t("cli.opt.train.embd"))
    p.add_argument("--block", type=int, default=128, help=t("cli.opt.train.block"))
    p.add_argument(
        "--pos", choices=("learned", "none", "rope", "alibi"), default="learned", help=t("cli.opt.train.pos")
    )
    p.add_argument("--dropout", type=float, default=0.1, help=t("cli.opt.train.dropout"))
    p.add_argument("--steps", type=int, default=2000, help=t("cli.opt.train.steps"))
    p.add_argument("--batch", type=int, default=16, help=t("cli.opt.train.batch"))
    p.add_argument("--context", type=int, default=None, help=t("cli.opt.train.context"))
    p.add_argument("--lr", type=float, default=2e-3, help=t("cli.opt.train.lr"))
    p.add_argument(
        "--windows", choices=("poem", "line", "any"), default="poem", help=t("cli.opt.train.windows")
    )
    p.add_argument("--eval-interval", type=int, default=100, help=t("cli.opt.train.eval_interval"))
    p.add_argument("--early-stop", type=int, default=None, metavar="N", help=t("cli.opt.train.early_stop"))
    p.add_argument("--seed", type=int, default=1337, help=t("cli.opt.train.seed"))
    p.add_argument("--device", default="cpu", help=t("cli.opt.train.device"))
    p.add_argument("--threads", type=int, default=None, help=t("cli.opt.train.threads"))
    p.add_argument(
        "--corpus", type=Path, nargs="+", default=None, metavar="FILE", help=t("cli.opt.train.corpus")
    )
    p.add_argument("--min-count", type=int, default=None, metavar="N", help=t("cli.opt.train.min_count"))
    p.add_argument("--keep-script", action="store_true", help=t("cli.opt.train.keep_script"))
    p.add_argument("--out", type=Path, default=None, help=t("cli.opt.train.out"))
    p.add_argument("--resume", action="store_true", help=t("cli.opt.train.resume"))
    p.add_argument("--weights-only", action="store_true", help=t("cli.opt.train.weights_only"))
    p.add_argument("--jsonl", action="store_true", help=t("cli.opt.train.jsonl"))


def run(args, ctx) -> int:
    from tutor.model.tokenizer import CharTokenizer

    model_cfg, cfg = _configs(args)
    min_count = _min_count(args, ctx.lang)
    emit = emit_json_line if args.jsonl else _printer(ctx.lang)
    train_text, val_text, corpus = _corpus_texts(args)
    out = _checkpoint_path(args, ctx, model_cfg, cfg)
    start = {"event": "start", "out": str(out), **corpus}
    tokenizer = None  # a resumed run keeps its checkpoint's tokenizer
    if not (args.resume and out.is_file()):
        tokenizer = CharTokenizer.for_training(
            train_text, min_count
        )  # the policy in tutor/model/tokenizer.py
        start |= {
            "vocab_size": tokenizer.vocab_size,
            "vocab_min_count": min_count,
            "unknown_share": _unknown_share(tokenizer, train_text),
        }
    stop = stop_on_signals()
    emit(start)
    result = _train(
        args, ctx, (model_cfg, cfg), (train_text, val_text), out, tokenizer, min_count, emit, stop
    )
    done = {**result.__dict__, "baselines": result.baselines.to_dict()}
    kind = "cancelled" if result.cancelled else "done"
    emit({"event": kind, "out": str(out), "early_stop": args.early_stop, **done})
    return 1 if result.cancelled else 0


def _min_count(args, lang: str) -> int:
    """The tokenizer's minimum count (its default unless given); it and --early-stop must be at least 1."""
    from tutor.model.tokenizer import MIN_COUNT

    min_count = MIN_COUNT if args.min_count is None else args.min_count
    for option, value in (("--min-count", min_count), ("--early-stop", args.early_stop)):
        if value is not None and value < 1:
            raise TutorError(say("cli.train.at_least_1", lang, option=option, got=value))
    return min_count


def _corpus_texts(args) -> tuple[str, str, dict]:
    """The training and validation text, and what the start event says of the corpus."""
    from tutor.model.corpus import corpus_text, split_poems
    from tutor.model.errors import ModelError

    try:
        poems, corpus = _read_corpus(args)
        train_poems, val_poems = split_poems(poems)
    except ModelError as err:  # the corpus's own words (tutor/model/ speaks English), framed in the learner's
        raise TutorError("err.train.corpus", detail=str(err)) from err
    counts = {"poems_train": len(train_poems), "poems_val": len(val_poems)}
    return corpus_text(train_poems), corpus_text(val_poems), {"corpus": corpus, **counts}


def _train(
    args,
    ctx,
    configs: tuple[GPTConfig, TrainConfig],
    texts: tuple[str, str],
    out: Path,
    tokenizer,
    min_count: int,
    emit,
    stop,
):
    """tutor.model.train.train with the command's settings, progress emitted; a failure is a TutorError."""
    from tutor.model.train import train

    try:
        result = train(
            *configs,
            *texts,
            out=out,
            on_progress=lambda p: emit({"event": "progress", **p.__dict__}),
            should_stop=stop.is_set,
            resume=args.resume,
            tokenizer=tokenizer,
            meta={"corpus": _corpus_label(args), "vocab_min_count": min_count},
            patience=args.early_stop,
        )
        if args.weights_only and not result.cancelled:
            from tutor.model.checkpoint import strip_training_state

            strip_training_state(out)
    except ValueError as err:
        raise TutorError("err.train.failed", detail=str(err)) from err
    except OSError as err:  # e.g. the disk filled up or the folder became read-only mid-run
        raise TutorError(say("cli.train.cannot_write", ctx.lang, out=out, why=err.strerror or err)) from err
    return result


def _checkpoint_path(args, ctx, model_cfg, cfg) -> Path:
    out = args.out or ctx.home / "runs" / _default_name(args, model_cfg, cfg)
    if out.is_dir():
        raise TutorError(say("cli.train.out_is_folder", ctx.lang, out=out, example=out / "model.pt"))
    try:  # an unwritable place fails now, not at the first save minutes into training
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(say("cli.train.cannot_create", ctx.lang, out=out, why=err.strerror or err)) from err
    return out


def _unknown_share(tokenizer, train_text: str) -> float:
    """The fraction of the training text that the vocabulary maps to the unknown id."""
    counts = Counter(train_text)
    return sum(n for c, n in counts.items() if tokenizer.stoi.get(c, 0) == 0) / len(train_text)


# the options that set each config's fields: {field: option}
MODEL_OPTIONS = {
    "block_size": "block",
    "n_layer": "layers",
    "n_head": "heads",
    "n_embd": "embd",
    "dropout": "dropout",
    "pos": "pos",
}
TRAIN_OPTIONS = {
    "steps": "steps",
    "batch_size": "batch",
    "context": "context",
    "lr": "lr",
    "eval_interval": "eval_interval",
    "seed": "seed",
    "device": "device",
    "threads": "threads",
    "windows": "windows",
}


def _configs(args):
    from tutor.model.gpt import GPTConfig
    from tutor.model.train import TrainConfig

    try:
        model_cfg = GPTConfig(**{name: getattr(args, option) for name, option in MODEL_OPTIONS.items()})
        cfg = TrainConfig(**{name: getattr(args, option) for name, option in TRAIN_OPTIONS.items()})
    except ValueError as err:
        raise TutorError("err.train.settings", detail=str(err)) from err
    return model_cfg, cfg


def _read_corpus(args):
    """The poems to train on and a description of them (for an import: what it read and skipped)."""
    from tutor.model.corpus import load_tang
    from tutor.model.corpus_import import import_corpus

    if not args.corpus:
        poems = load_tang()
        return poems, {"source": "shipped Tang corpus", "poems": len(poems)}
    poems, report = import_corpus(args.corpus, keep_script=args.keep_script)
    return poems, {
        "source": _corpus_label(args),
        "poems": report.poems,
        "characters": report.characters,
        "vocabulary": report.vocabulary,
        "converted": report.converted,
        "skipped": dict(report.skipped),
        "first_skipped": report.first_skipped,
    }


def _corpus_label(args) -> str:
    return " ".join(str(p) for p in args.corpus) if args.corpus else "tang"


def _default_name(args, model_cfg, cfg) -> str:
    """Readable settings plus a digest of all of them, so runs that differ only in batch, learning rate,
    seed or corpus do not overwrite (or resume) each other."""
    settings = {
        "model": model_cfg.to_dict(),
        "train": cfg.__dict__,
        "corpus": _corpus_label(args),
        "keep_script": args.keep_script,
        "min_count": args.min_count,
        "early_stop": args.early_stop,
    }
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{args.pos}-h{args.heads}-l{args.layers}-e{args.embd}-s{args.steps}-{digest}.pt"


def _printer(lang: str) -> Callable[[dict], None]:
    """Training events as lines for a person, in `lang`."""

    def show(e: dict) -> None:
        kind = e["event"]
        if kind == "start":
            _show_start(e, lang)
        elif kind == "progress" and (e["val_loss"] is not None or e["step"] == 1):
            val = say("cli.train.val", lang, loss=e["val_loss"]) if e["val_loss"] is not None else ""
            _line(
                lang,
                "cli.train.step",
                step=f"{e['step']:>5}",
                steps=e["steps"],
                loss=e["loss"],
                val=val,
                speed=e["tokens_per_s"],
                eta=e["eta_s"],
            )
        elif kind in ("done", "cancelled"):
            _show_end(e, lang)

    return show


def _line(lang: str, key: str, **values) -> None:
    print(say(key, lang, **values), flush=True)


def _show_start(e: dict, lang: str) -> None:
    _show_corpus(e["corpus"], lang)
    if "vocab_size" in e:
        vocab = say(
            "cli.train.vocabulary",
            lang,
            n=e["vocab_size"],
            min_count=e["vocab_min_count"],
            share=e["unknown_share"],
        )
    else:
        vocab = say("cli.train.vocabulary_resumed", lang)
    _line(lang, "cli.train.start", train=e["poems_train"], val=e["poems_val"], vocab=vocab, out=e["out"])


def _show_corpus(c: dict, lang: str) -> None:
    from tutor.model.corpus_import import SKIP_DUPLICATE, SKIP_LOST_GLYPHS, SKIP_MALFORMED, SKIP_NO_TEXT

    if "characters" not in c:
        _line(lang, "cli.train.corpus_shipped", poems=c["poems"])
        return
    script = say("cli.train.converted" if c["converted"] else "cli.train.script_kept", lang)
    _line(
        lang,
        "cli.train.corpus",
        source=c["source"],
        poems=c["poems"],
        characters=c["characters"],
        distinct=c["vocabulary"],
        script=script,
    )
    skip_keys = {
        SKIP_NO_TEXT: "no_text",
        SKIP_DUPLICATE: "duplicate",
        SKIP_LOST_GLYPHS: "lost_glyphs",
        SKIP_MALFORMED: "malformed",
    }
    for reason, count in sorted(c["skipped"].items(), key=lambda kv: -kv[1]):
        why = say(f"cli.train.skip.{skip_keys[reason]}", lang) if reason in skip_keys else reason
        _line(lang, "cli.train.skipped", n=count, reason=why, first=c["first_skipped"][reason])


def _show_end(e: dict, lang: str) -> None:
    stopped = say("cli.train.stopped_early", lang) if e["stopped_early"] else ""
    key = "cli.train.done" if e["event"] == "done" else "cli.train.cancelled"
    _line(lang, key, steps=e["steps_done"], s=e["seconds"], stopped=stopped)
    if e["final_val_loss"] is None:
        _line(lang, "cli.train.no_checkpoint")
        return
    base = e["baselines"]
    _line(
        lang,
        "cli.train.losses",
        last=e["final_val_loss"],
        best=e["best_val_loss"],
        step=e["best_step"],
        bigram=base["bigram"],
        lam=base["bigram_lambda"],
        unigram=base["unigram"],
        uniform=base["uniform"],
    )
    kept = (
        say("cli.train.kept_best", lang, step=e["best_step"])
        if e["early_stop"]
        else say("cli.train.kept_last", lang)
    )
    _line(lang, "cli.train.checkpoint", out=e["out"], kept=kept)
