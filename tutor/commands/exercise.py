"""`python -m tutor exercise list|start|reset|show|solution|train [ID]`: the learner's exercise files.

start copies the starter, in the learner's language (--lang), into HOME/workspace/ID/ and never
overwrites; reset asks first (or --yes), puts the starter in that language back and keeps the old file
as a .bak beside it; solution shows the reference only after a pass. train
(exercises with a `[train]` table, e.g. rope) grades the file and, once it passes, trains the model it
builds in the grading box for `--steps` steps beside the course GPT with a learned position table, on
the same batches, and prints both validation losses as they go (exit 1 while the file does not pass).
list shows a pass that exists only in imported progress (progress --import) as "passed (imported)";
with --json its state is "passed" and "imported" is true.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tutor.errors import TutorError

ACTIONS = ("list", "start", "reset", "show", "solution", "train")


def add_arguments(parser, t) -> None:
    parser.add_argument("action", choices=ACTIONS, help=t("cli.opt.exercise.action"))
    parser.add_argument("id", nargs="?", metavar="ID", help=t("cli.opt.exercise.id"))
    parser.add_argument("--yes", "-y", action="store_true", help=t("cli.opt.exercise.yes"))
    parser.add_argument("--json", action="store_true", help=t("cli.opt.exercise.json"))
    parser.add_argument("--steps", type=int, metavar="N", help=t("cli.opt.exercise.steps"))


def _store(ctx):
    from tutor.progress.store import Store

    return Store(ctx.home)


def run(args, ctx) -> int:
    from tutor.course import open_course
    from tutor.grading import workspace
    from tutor.texts import say

    course = open_course(ctx.lessons_dir)
    if args.action == "list":
        return _list(course, ctx, args.json)
    if not args.id:
        raise TutorError(say("cli.exercise.needs_id", ctx.lang, action=args.action))
    ex = course.exercise(args.id)
    path = workspace.workspace_file(ctx.home, ex)
    if args.action == "train":
        return _train(ex, path, args.steps, ctx)
    action = {"start": _start, "reset": _reset, "show": _show, "solution": _solution}[args.action]
    return action(ex, path, args, ctx)


def _start(ex, path, args, ctx) -> int:
    from tutor.grading import workspace
    from tutor.texts import say

    try:
        path, created = workspace.start_exercise(ctx.home, ex, ctx.lang)
    except OSError as err:  # an unwritable home, or a file where a folder should be
        raise TutorError(
            say("cli.exercise.cannot_create", ctx.lang, path=path, why=err.strerror or err)
        ) from None
    print(say("ex.cli.created" if created else "ex.cli.already", ctx.lang, path=path))
    print(say("ex.cli.next", ctx.lang, id=ex.id))
    return 0


def _reset(ex, path, args, ctx) -> int:
    from tutor.grading import workspace
    from tutor.texts import say, typed

    lang = ctx.lang
    if not path.exists():
        raise TutorError(say("cli.exercise.not_started", lang, id=ex.id))
    if not args.yes:
        if not sys.stdin.isatty():
            raise TutorError(say("cli.exercise.confirm_with_yes", lang))
        reply = input(say("ex.cli.confirm_reset", lang, path=path))
        if reply.strip().casefold() not in typed("typed.yes"):
            print(say("ex.cli.nothing_changed", lang))
            return 1
    try:
        path, backup = workspace.reset_exercise(ctx.home, ex, lang)
    except OSError as err:
        raise TutorError(
            say("cli.exercise.cannot_restore", lang, path=path, why=err.strerror or err)
        ) from None
    kept = say("ex.cli.backup", lang, path=backup) if backup else ""
    print(say("ex.cli.restored", lang, path=path) + kept)
    return 0


def _show(ex, path, args, ctx) -> int:
    from tutor.i18n import pick
    from tutor.texts import say

    lang = ctx.lang
    print(f"{ex.id} — {pick(ex.title, lang)}\n")
    print(pick(ex.task, lang).strip())
    started = "" if path.exists() else say("ex.cli.not_started", lang, id=ex.id)
    print(f"\n{say('ex.file', lang)}: {path}{started}")
    if ex.hints:
        print(say("ex.cli.hints", lang, n=len(ex.hints), id=ex.id))
    return 0


def _solution(ex, path, args, ctx) -> int:
    from tutor.grading import workspace

    with _store(ctx) as store:
        code = workspace.solution_text(store, ex, ctx.lang)
    if sys.stdout.isatty() and ex.kind == "code":  # a terminal would wrap long lines to column 0
        import shutil

        from tutor.wrap import wrap_code

        code = wrap_code(code, shutil.get_terminal_size().columns)
    print(code, end="")
    return 0


def _train(ex, path, steps: int | None, ctx) -> int:
    """Grade the file; once it passes, train the model it builds, printing progress as it comes."""
    from tutor.grading.judges import WarmJudge
    from tutor.grading.submissions import grade_file, train_own_model
    from tutor.grading.text import own_training_line, training_end
    from tutor.texts import say

    lang = ctx.lang
    if ex.train is None:
        raise TutorError(say("train.own.none", lang, id=ex.id))
    if steps is not None and not 1 <= steps <= 5000:
        raise TutorError(say("train.own.steps", lang, got=steps))
    if not path.exists():
        raise TutorError(say("cli.exercise.not_started", lang, id=ex.id))
    compare = say(f"term.pos.{ex.train.compare}", lang)
    with WarmJudge() as warm, _store(ctx) as store:
        result = grade_file(ex, path, lang=lang, store=store, warm=warm)
        if result.status != "pass":
            print(
                say(
                    "train.own.must_pass",
                    lang,
                    id=ex.id,
                    score=result.score,
                    max=result.max_score,
                    status=say(f"grade.status.{result.status}", lang),
                )
            )
            return 1

        def show(event: dict) -> None:
            line = own_training_line(event, lang, compare)
            if line is not None:
                print(line, flush=True)

        print(say("train.own.start", lang, steps=steps or ex.train.steps, compare=compare), flush=True)
        run = train_own_model(ex, path, steps=steps, lang=lang, on_event=show, warm=warm)
    print(training_end(run, lang, compare))
    return 1 if run.stop is not None or not run.curve else 0


def _list(course, ctx, as_json: bool) -> int:
    from tutor.grading import workspace
    from tutor.i18n import pick
    from tutor.progress.exercise_status import difficulty_marks, exercise_statuses
    from tutor.texts import number, say

    with _store(ctx) as store:
        statuses = exercise_statuses(
            store, course.lessons, lambda ex: workspace.workspace_file(ctx.home, ex).exists()
        )
    rows: list[dict[str, Any]] = [
        {
            "id": s.id,
            "lesson": s.lesson,
            "title": pick(s.title, ctx.lang),
            "kind": s.kind,
            "state": s.state,
            "best_score": s.best,
            "max_score": s.max_score,
            "latest_status": s.latest_status,
            "latest_score": s.latest_score,
            "minutes": s.minutes,
            "difficulty": s.difficulty,
            "file": str(workspace.workspace_file(ctx.home, course.exercise(s.id))),
            "imported": s.imported,
        }
        for s in statuses
    ]
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    lang = ctx.lang
    columns = ("exercise", "state", "best", "latest", "time", "level", "lesson", "title")
    print(_line([say(f"ex.cli.col.{c}", lang) for c in columns]))
    for r in rows:
        top = number(r["max_score"], lang)
        best_score = f"{number(r['best_score'], lang)}/{top}" if r["best_score"] is not None else f"-/{top}"
        status = say(f"grade.verdict.{r['latest_status']}", lang) if r["latest_status"] else ""
        last = f"{status} {number(r['latest_score'], lang)}/{top}" if status else "-"
        state = say(f"ex.cli.state.{r['state']}", lang)
        state = say("ex.cli.imported", lang, state=state) if r["imported"] else state
        time = say("ex.effort.minutes", lang, n=r["minutes"]) if r["minutes"] else "-"
        level = difficulty_marks(r["difficulty"]) or "-"
        print(_line([r["id"], state, best_score, last, time, level, r["lesson"], r["title"]]))
    return 0


def _line(cells: list[str]) -> str:
    """One row of the exercise list; widths in terminal cells, so Chinese lines up too."""
    from rich.cells import cell_len

    out = ""
    widths = ((16, 0), (8, 0), (7, 1), (13, 0), (13, 0), (5, 0), (14, 0), (0, 0))
    for text, (width, right) in zip(cells, widths, strict=True):
        pad = " " * max(width - cell_len(text), 0)
        out += (pad + text if right else text + pad) + (" " if width != 7 else "  ")
    return out.rstrip()
