"""`python -m tutor experiment`: list the live experiments or run one.

    python -m tutor experiment --list
    python -m tutor experiment heads --set n_head=8 --set text=床前明月光
    python -m tutor experiment params --set heads=1,2,4 --json
    python -m tutor experiment train-compare --set steps=200 --jsonl   # the app's child-process protocol

--jsonl prints one JSON object per line: progress events, then {"event": "result", "result": {...}},
or {"event": "cancelled"} (exit 1) / {"event": "error", "message", "said"} (exit 2; `said`: the error's
catalogue key and values, tutor.experiments.runner). SIGTERM and SIGINT stop a
training run after its current step.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from tutor.errors import TutorError


def add_arguments(p, t) -> None:
    p.add_argument("name", nargs="?", metavar="NAME", help=t("cli.opt.experiment.name"))
    p.add_argument("--list", action="store_true", help=t("cli.opt.experiment.list"))
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=t("cli.opt.experiment.set"),
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=t("cli.opt.experiment.json"))
    out.add_argument("--jsonl", action="store_true", help=t("cli.opt.experiment.jsonl"))


def stop_on_signals() -> threading.Event:
    """SIGINT/SIGTERM set the returned event, so a run stops after its current step instead of dying
    mid-write. Shared with `python -m tutor train`."""
    stop = threading.Event()

    def handler(signum, frame) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)
    return stop


def emit_json_line(event: dict[str, Any]) -> None:
    """One event as one JSON line on stdout, flushed at once (the --jsonl protocols of experiment and train)."""
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()


@contextmanager
def kept_runs(home: Path, forward: Callable[[dict[str, Any]], None]) -> Iterator[tuple[Callable, Callable]]:
    """The caller's half of a training experiment: runs kept in the learner's progress store.

    Yields (stored_run, on_event): `stored_run(key)` is a finished run kept earlier, or None;
    `on_event` records each "trained" event as a finished run and passes every other event on."""
    from tutor.progress.store import Store

    with Store(home) as store:

        def stored_run(key: str):
            run = store.training_run(key)
            return run if run is not None and run.status == "done" else None

        def on_event(event: dict[str, Any]) -> None:
            if event.get("event") != "trained":
                forward(event)
                return
            store.record_training_run(
                event["key"],
                config=event["config"],
                status="done",
                final_val_loss=event["final_val_loss"],
                params=event["params"],
                seconds=event["seconds"],
                curve=event["curve"],
            )

        yield stored_run, on_event


def _list(args, ctx) -> int:
    from tutor.experiments.registry import get_registry

    reg = get_registry()
    if args.json:
        out = [
            {
                "name": s.name,
                "title": s.title,
                "summary": s.summary,
                "long": s.long,
                "metrics": list(s.metrics),
                "params": s.params_model.model_json_schema()["properties"],
            }
            for s in reg.values()
        ]
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    from tutor.texts import say

    lang = ctx.lang
    table = Table(
        title=say("cli.experiment.title", lang), title_justify="left", header_style="bold", show_lines=True
    )
    table.add_column(say("cli.experiment.name", lang), no_wrap=True)
    table.add_column(
        say("cli.experiment.what", lang), overflow="fold", ratio=3
    )  # fold: Chinese has no spaces
    table.add_column(say("cli.experiment.params", lang), overflow="fold", ratio=2)
    for s in reg.values():
        defaults = "\n".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in s.defaults().items())
        what = f"{say(f'exp.{s.name}.title', lang)}\n{say(f'exp.{s.name}.summary', lang)}"
        table.add_row(s.name + ("\n" + say("cli.experiment.trains", lang) if s.long else ""), what, defaults)
    Console().print(table)
    print(say("cli.experiment.help", lang))
    return 0


def run(args, ctx) -> int:
    from tutor.experiments.errors import Cancelled
    from tutor.experiments.registry import get_registry, get_spec, validate_params
    from tutor.experiments.values import parse_assignments
    from tutor.texts import say

    if args.list:
        return _list(args, ctx)
    if not args.name:
        raise TutorError(say("cli.experiment.name_one", ctx.lang, names=list(get_registry())))
    spec = get_spec(args.name)
    params = validate_params(spec, parse_assignments(spec, args.set))
    if args.jsonl:
        return _run_jsonl(spec, params, ctx)

    from tutor.experiments import runner

    try:
        if spec.long:
            stop = stop_on_signals()
            with kept_runs(ctx.home, partial(_print_progress, ctx.lang)) as (stored_run, on_event):
                result = runner.run_here(
                    spec.name, params, should_stop=stop.is_set, on_event=on_event, stored_run=stored_run
                )
        else:
            result = runner.run_quick(spec.name, params, on_event=partial(print_measuring, ctx.lang, {}))
    except Cancelled:
        print(say("run.cancelled", ctx.lang), file=sys.stderr)
        return 1
    if args.json:
        print(result.shown(ctx.lang).model_dump_json())
        return 0
    from tutor.experiments.render import print_result

    print_result(result, ctx.lang)
    return 0


def _run_jsonl(spec, params, ctx) -> int:
    from tutor.proc.spawn import die_with_parent

    die_with_parent()  # a child of the app (run_in_child): it ends with its parent
    from tutor.experiments import runner
    from tutor.experiments.errors import Cancelled, ExperimentError

    stop = stop_on_signals()
    emit_json_line(
        {
            "event": "start",
            "experiment": spec.name,
            "pid": os.getpid(),
            "params": params.model_dump(mode="json"),
        }
    )
    try:
        if spec.long:
            with kept_runs(ctx.home, emit_json_line) as (stored_run, on_event):
                result = runner.run_here(
                    spec.name, params, should_stop=stop.is_set, on_event=on_event, stored_run=stored_run
                )
        else:
            result = runner.run_quick(spec.name, params, should_stop=stop.is_set)
    except Cancelled:
        emit_json_line({"event": "cancelled"})
        return 1
    except ExperimentError as err:
        emit_json_line({"event": "error", "message": str(err), "said": _said(err)})
        return 2
    except Exception as err:  # the protocol reports every failure as a line, never as a traceback
        emit_json_line({"event": "error", "message": f"{type(err).__name__}: {err}"})
        return 1
    emit_json_line({"event": "result", "result": result.model_dump(mode="json")})
    return 0


def _said(err: TutorError) -> dict[str, Any] | None:
    """The error's key and values as a Msg's JSON, for the parent to word; None for a text that is
    not the catalogue's (then `message` is all there is)."""
    from pydantic import ValidationError

    from tutor.experiments.result import Msg
    from tutor.texts import has

    if not has(err.key):
        return None
    try:
        return Msg(err.key, **err.values).model_dump(mode="json")
    except ValidationError:  # a value JSON cannot carry: the English message is sent
        return None


def print_measuring(lang: str, shown: dict[str, int], event: dict[str, Any]) -> None:
    """A quick experiment's long measurement on stderr: its length and offer first, then at each tenth of it
    (`shown` keeps the last tenth printed)."""
    from tutor.experiments.jobs import measuring_line

    if event.get("event") != "measuring":
        return
    tenth = int(event.get("done", 0)) * 10 // max(1, int(event.get("total", 1)))
    if tenth > shown.get("tenth", -1):
        shown["tenth"] = tenth
        print(measuring_line(event, lang), file=sys.stderr, flush=True)


def _print_progress(lang: str, event: dict[str, Any]) -> None:
    from tutor.experiments.result import about, words
    from tutor.texts import number, say

    kind = event.get("event")
    run = {"run": event.get("run"), "runs": event.get("runs"), "label": words(event.get("label"), lang)}
    if kind == "stored":
        print(say("run.stored", lang, **run), file=sys.stderr)
    elif kind == "estimate":  # the job's length: at once from its size, then as timed before its first step
        key = "run.estimate_rough" if event.get("rough") else "run.estimate"
        seconds = float(event.get("seconds") or 0)
        print(say(key, lang, runs=int(event.get("runs", 1)), time=about(seconds)), file=sys.stderr)
    elif kind == "progress" and (event.get("val_loss") is not None or event["step"] == event["steps"]):
        val = (
            say("run.val", lang, loss=number(event["val_loss"], lang, decimals=3))
            if event.get("val_loss") is not None
            else ""
        )
        line = say(
            "run.progress",
            lang,
            **run,
            step=event["step"],
            steps=event["steps"],
            loss=number(event["loss"], lang, decimals=3),
            val=val,
            speed=round(event["tokens_per_s"]),
            eta=round(event["eta_s"]),
        )
        print(line, file=sys.stderr, flush=True)
