"""`python -m tutor progress`: what the learner has done, and moving or resetting it.

    python -m tutor progress                 per lesson: sections read, quiz, reviews due, exercises passed
    python -m tutor progress --json          the same as JSON (see below)
    python -m tutor progress --export FILE   every record, as JSON, to take to another machine
    python -m tutor progress --import FILE   merge such a file in (importing twice changes nothing)
    python -m tutor progress --reset         delete all progress, after asking (a backup is kept)

JSON: {"home", "store", "lessons": [{"id", "title", "sections_read", "sections_total",
"quiz": {"questions", "answered", "correct", "due"}, "exercises": {"total", "attempted", "passed"}}],
"reviews_due", "training_runs", "experiment_runs", "last_location", "notices"}.
"""

from __future__ import annotations

import sys
from pathlib import Path

HELP = "show progress per lesson; export, import or reset it"


def add_arguments(parser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--export", type=Path, metavar="FILE", help="write all progress to FILE (JSON)")
    action.add_argument(
        "--import", dest="import_file", type=Path, metavar="FILE", help="merge progress from FILE"
    )
    action.add_argument(
        "--reset", action="store_true", help="delete all progress (asks first; keeps a backup)"
    )
    parser.add_argument("--yes", action="store_true", help="with --reset: do not ask")


def _confirm(store_path: Path) -> bool:
    print(
        f"Delete all progress in {store_path}? A backup is written first. Type 'yes' to confirm: ",
        end="",
        flush=True,
    )
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        answer = ""
    if not sys.stdin.isatty():
        print(answer.strip())
    return answer.strip().lower() in ("yes", "y")


def run(args, ctx) -> int:
    from tutor.errors import TutorError
    from tutor.progress import transfer
    from tutor.progress.store import Store

    if args.yes and not args.reset:
        raise TutorError("--yes only goes with --reset")
    store = Store(ctx.home)
    try:
        for notice in store.notices:
            print(f"note: {notice}", file=sys.stderr)
        if args.export:
            rows = transfer.export_file(store, args.export)
            print(f"exported {rows} record(s) to {args.export}")
            return 0
        if args.import_file:
            changed = transfer.import_data(store, transfer.read_export(args.import_file))
            print(f"imported {changed} new or newer record(s) from {args.import_file}")
            return 0
        if args.reset:
            if not args.yes and not _confirm(store.path):
                print("nothing deleted")
                return 1
            backup = transfer.reset(store)
            print(
                f"progress deleted; a backup of it is in {backup} (python -m tutor progress --import to restore)"
            )
            return 0
        return _show(store, ctx, args.json)
    finally:
        store.close()


def _show(store, ctx, as_json: bool) -> int:
    from tutor.content.loader import load_course
    from tutor.progress.summary import summarise

    course = load_course(ctx.lessons_dir)
    for folder in course.skipped:
        print(
            f"note: lesson folder {folder.name} has errors and is left out (python -m tutor check)",
            file=sys.stderr,
        )
    summary = summarise(store, course.lessons, ctx.lang)
    if as_json:
        print(summary.model_dump_json(indent=2))
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from tutor.quiz.texts import say

    lang = ctx.lang
    table = Table(title=escape(say("progress.title", lang, path=store.path)), title_justify="left")
    for key in ("lesson", "sections", "quiz", "due", "exercises"):
        table.add_column(say(f"progress.{key}", lang), justify="left" if key == "lesson" else "right")
    for lesson in summary.lessons:
        table.add_row(
            escape(lesson.title),
            f"{lesson.sections_read}/{lesson.sections_total}",
            f"{lesson.quiz.correct}/{lesson.quiz.questions}",
            str(lesson.quiz.due),
            f"{lesson.exercises.passed}/{lesson.exercises.total}",
        )
    console = Console(highlight=False)
    console.print(table)
    console.print(escape(say("progress.footer", lang, due=summary.reviews_due, runs=summary.training_runs)))
    if summary.last_location:
        where = ", ".join(f"{k}={v}" for k, v in summary.last_location.items())
        console.print(escape(say("progress.last_place", lang, where=where)))
    return 0
