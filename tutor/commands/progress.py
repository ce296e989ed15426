"""`python -m tutor progress`: what the learner has done, and moving or resetting it.

    python -m tutor progress                 per lesson: sections read, quiz, reviews due, exercises passed
    python -m tutor progress --json          the same as JSON (see below)
    python -m tutor progress --export FILE   every record, as JSON, to take to another machine
    python -m tutor progress --import FILE   merge such a file in (importing twice changes nothing)
    python -m tutor progress --reset         delete all progress, after asking (a backup is kept)
    python -m tutor progress --new-per-day N at most N new questions a day in a review (Anki's cap)
    python -m tutor progress --fit           fit FSRS's parameters to your own reviews (fsrs[optimizer])

The table is followed by the review statistics: today's reviews and new questions, retention over 30
days, the questions by stage, the next seven days' load, and the intervals (fitted or FSRS's defaults);
--json has them as "reviews" (tutor.progress.review_stats).

JSON: {"home", "store", "lessons": [{"id", "title", "sections_read", "sections_total",
"quiz": {"questions", "answered", "correct", "due"}, "exercises": {"total", "attempted", "passed"}}],
"reviews_due", "training_runs", "experiment_runs", "last_location", "notices",
"imported": {"lessons": {ID: {"sections_read", "answered", "passed"}}, "reviews_due", "training_runs",
"experiment_runs", "last_location"}}: "imported" counts what came only from --import, not from this machine.

An import is checked whole first: any bad row, and nothing is imported (exit 2, each bad table[row].field named).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.progress.summary import ImportedProgress

# Progress that came from --import is marked with MARK in the table and listed under it.
MARK = "*"


def add_arguments(parser, t) -> None:
    parser.add_argument("--json", action="store_true", help=t("cli.opt.progress.json"))
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--export", type=Path, metavar="FILE", help=t("cli.opt.progress.export"))
    action.add_argument(
        "--import", dest="import_file", type=Path, metavar="FILE", help=t("cli.opt.progress.import")
    )
    action.add_argument("--reset", action="store_true", help=t("cli.opt.progress.reset"))
    # a second group only so that the usage line fits 80 columns: run() refuses one of each group together
    setting = parser.add_mutually_exclusive_group()
    setting.add_argument("--new-per-day", type=int, metavar="N", help=t("cli.opt.progress.new_per_day"))
    setting.add_argument("--fit", action="store_true", help=t("cli.opt.progress.fit"))
    parser.add_argument("--yes", action="store_true", help=t("cli.opt.progress.yes"))


def _confirm(store_path: Path, lang: str) -> bool:
    from tutor.texts import say, typed

    print(say("progress.confirm", lang, path=store_path), end="", flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        answer = ""
    if not sys.stdin.isatty():
        print(answer.strip())
    return answer.strip().casefold() in typed("typed.yes")


def run(args, ctx) -> int:
    from tutor.errors import TutorError
    from tutor.progress import transfer
    from tutor.progress.store import Store
    from tutor.texts import say

    if args.yes and not args.reset:
        raise TutorError(say("cli.progress.yes_alone", ctx.lang))
    given = [args.export, args.import_file, args.reset or None, args.new_per_day, args.fit or None]
    if sum(option is not None for option in given) > 1:
        raise TutorError(say("cli.progress.one_action", ctx.lang))
    store = Store(ctx.home)
    try:
        for notice in store.notices:
            print(say("cli.note", ctx.lang, text=notice), file=sys.stderr)
        if args.export:
            rows = transfer.export_file(store, args.export)
            print(say("progress.exported", ctx.lang, n=rows, path=args.export))
            return 0
        if args.import_file:
            data = transfer.read_export(args.import_file)
            changed = transfer.import_data(store, data, source=str(args.import_file))
            print(say("progress.imported_rows", ctx.lang, n=changed, path=args.import_file))
            return 0
        if args.new_per_day is not None:
            from tutor.progress.quiz_status import NEW_PER_DAY_KEY

            if not 0 <= args.new_per_day <= 1000:
                raise TutorError(say("cli.quiz.new_negative", ctx.lang))
            store.set_value(NEW_PER_DAY_KEY, args.new_per_day)
            print(say("progress.new_per_day_set", ctx.lang, n=args.new_per_day))
            return 0
        if args.fit:
            return _fit(store, ctx.lang)
        if args.reset:
            if not args.yes and not _confirm(store.path, ctx.lang):
                print(say("progress.nothing_deleted", ctx.lang))
                return 1
            backup = transfer.reset(store)
            print(say("progress.deleted", ctx.lang, backup=backup))
            return 0
        return _show(store, ctx, args.json)
    finally:
        store.close()


def _show(store, ctx, as_json: bool) -> int:
    from tutor.course import open_course
    from tutor.progress.summary import summarise
    from tutor.texts import say

    course = open_course(ctx.lessons_dir)
    for folder in course.skipped:
        print(say("cli.left_out", ctx.lang, name=folder.name), file=sys.stderr)
    summary = summarise(store, course.lessons, ctx.lang)
    from tutor.progress.review_stats import review_stats, stats_lines

    stats = review_stats(store, course.lessons, store.now())
    if as_json:
        import json

        print(
            json.dumps(
                {**summary.model_dump(mode="json"), "reviews": stats.as_json()}, indent=2, ensure_ascii=False
            )
        )
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    lang = ctx.lang
    table = Table(title=escape(say("progress.title", lang, path=store.path)), title_justify="left")
    for key in ("lesson", "sections", "quiz", "due", "exercises"):
        table.add_column(say(f"progress.{key}", lang), justify="left" if key == "lesson" else "right")
    for lesson in summary.lessons:
        imported = summary.imported.lessons[lesson.id]
        table.add_row(
            escape(lesson.title),
            f"{lesson.sections_read}/{lesson.sections_total}" + MARK * bool(imported.sections_read),
            f"{lesson.quiz.correct}/{lesson.quiz.questions}" + MARK * bool(imported.answered),
            str(lesson.quiz.due),
            f"{lesson.exercises.passed}/{lesson.exercises.total}" + MARK * bool(imported.passed),
        )
    console = Console(highlight=False)
    console.print(table)
    note = _imported_note(summary.imported, lang)
    if note:
        console.print(escape(note))
    console.print(escape(say("progress.footer", lang, due=summary.reviews_due, runs=summary.training_runs)))
    from tutor.quiz.fit import fit_note

    for line in stats_lines(stats, lang, fit_note(store, lang)):
        console.print(escape(line))
    if summary.last_location and (where := place_text(summary.last_location, course, lang)) is not None:
        console.print(escape(say("progress.last_place", lang, where=where)))
    return 0


def _fit(store, lang: str) -> int:
    """Fit FSRS to the learner's reviews and say what it gained (exit 1 when there are too few)."""
    from tutor.errors import TutorError
    from tutor.quiz.fit import fit
    from tutor.texts import number, say

    try:
        result = fit(store, lang)
    except TutorError as err:
        print(err.in_lang(lang), file=sys.stderr)
        return 1
    key = "progress.fit.done" if result["used"] else "progress.fit.kept_defaults"
    print(
        say(
            key,
            lang,
            n=result["reviews"],
            before=number(result["loss_before"], lang, decimals=3),
            after=number(result["loss_after"], lang, decimals=3),
        )
    )
    return 0


def place_text(where: dict, course, lang: str) -> str | None:
    """The learner's last place ("continue" goes back there) in words: the lesson and section, the quiz,
    the review or the exercise, by their titles; None for a place this course does not have."""
    from tutor.i18n import pick
    from tutor.texts import say

    lesson = next((x for x in course.lessons if x.id == where.get("lesson")), None)
    title = pick(lesson.title, lang) if lesson is not None else None
    screen = where.get("screen")
    if screen == "quiz":
        return say("progress.place.quiz", lang, lesson=title) if title else say("progress.place.review", lang)
    if title is None:
        return None
    assert lesson is not None  # title is its title
    if screen == "lab":
        ex = next((e for e in lesson.exercises if e.id == where.get("exercise")), None)
        return say("progress.place.lab", lang, exercise=pick(ex.title, lang), lesson=title) if ex else None
    section = next((s for s in lesson.sections if s.id == where.get("section")), None)
    if section is None:
        return say("progress.place.lesson_only", lang, lesson=title)
    experiment = where.get("experiment")
    if experiment and any(r.name == experiment for r in section.experiments):
        name = say(f"exp.{experiment}.title", lang)
        return say(
            "progress.place.experiment",
            lang,
            lesson=title,
            section=pick(section.title, lang),
            experiment=name,
        )
    return say("progress.place.lesson", lang, lesson=title, section=pick(section.title, lang))


def _imported_note(imported: ImportedProgress, lang: str) -> str | None:
    """One line listing what came from an import (the table marks it with MARK), or None."""
    from tutor.texts import say

    lessons = imported.lessons.values()
    counts = {
        "sections_read": sum(x.sections_read for x in lessons),
        "answered": sum(x.answered for x in lessons),
        "passed": sum(x.passed for x in lessons),
        "reviews_due": imported.reviews_due,
        "training_runs": imported.training_runs,
        "experiment_runs": imported.experiment_runs,
        "last_location": int(imported.last_location),
    }
    what = [say(f"progress.imported.{key}", lang, n=n) for key, n in counts.items() if n]
    return f"{MARK} {say('progress.imported.note', lang, what=what)}" if what else None
