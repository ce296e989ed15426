"""`python -m tutor exercise list|start|reset|show|solution [ID]`: the learner's exercise files.

start copies the starter into HOME/workspace/ID/ and never overwrites; reset asks first (or --yes)
and keeps the old file as a .bak beside it; solution shows the reference only after a pass.
list shows a pass that exists only in imported progress (progress --import) as "passed (imported)";
with --json its state is "passed" and "imported" is true.
"""

from __future__ import annotations

import json
import sys

from tutor.errors import TutorError

HELP = "exercise files: list, start ID, reset ID, show ID, solution ID"
ACTIONS = ("list", "start", "reset", "show", "solution")


def add_arguments(parser) -> None:
    parser.add_argument("action", choices=ACTIONS, help="what to do")
    parser.add_argument("id", nargs="?", metavar="ID", help="exercise id (see: exercise list)")
    parser.add_argument("--yes", "-y", action="store_true", help="reset without asking")
    parser.add_argument("--json", action="store_true", help="list: machine-readable output")


def _store(ctx):
    from tutor.progress.store import Store

    return Store(ctx.home)


def run(args, ctx) -> int:
    from tutor.content.schema import pick
    from tutor.course import open_course
    from tutor.grading import service

    course = open_course(ctx.lessons_dir)
    if args.action == "list":
        return _list(course, ctx, args.json)
    if not args.id:
        raise TutorError(f"exercise {args.action} needs an exercise id; see: python -m tutor exercise list")
    ex = course.exercise(args.id)
    path = service.workspace_file(ctx.home, ex)
    if args.action == "start":
        try:
            path, created = service.start_exercise(ctx.home, ex)
        except OSError as err:  # an unwritable home, or a file where a folder should be
            raise TutorError(f"cannot create {path}: {err.strerror or err}") from None
        if created:
            print(f"Created {path}")
        else:
            print(f"Already started: {path} (your work is kept, nothing was overwritten)")
        print(f"Edit it in your editor, then: python -m tutor grade {ex.id}   (--watch re-grades on save)")
        return 0
    if args.action == "reset":
        if not path.exists():
            raise TutorError(f"{ex.id!r} has not been started; python -m tutor exercise start {ex.id}")
        if not args.yes:
            if not sys.stdin.isatty():
                raise TutorError("reset replaces your file with the starter; confirm with --yes")
            reply = input(f"Replace {path} with the starter? Your file is kept as a .bak copy. [y/N] ")
            if reply.strip().lower() not in ("y", "yes", "j", "ja", "是"):
                print("Nothing changed.")
                return 1
        try:
            path, backup = service.reset_exercise(ctx.home, ex)
        except OSError as err:
            raise TutorError(f"cannot restore the starter in {path}: {err.strerror or err}") from None
        print(f"Restored the starter in {path}" + (f"; your previous file: {backup}" if backup else ""))
        return 0
    if args.action == "show":
        print(f"{ex.id} — {pick(ex.title, ctx.lang)}\n")
        print(pick(ex.task, ctx.lang).strip())
        print(
            f"\nYour file: {path}"
            + ("" if path.exists() else f" (not started: python -m tutor exercise start {ex.id})")
        )
        if ex.hints:
            print(f"Hints: {len(ex.hints)} (python -m tutor grade {ex.id} --hint)")
        return 0
    with _store(ctx) as store:  # solution
        print(service.solution_text(store, ex), end="")
    return 0


def _list(course, ctx, as_json: bool) -> int:
    from tutor.content.schema import pick
    from tutor.grading import service

    with _store(ctx) as store:
        passed = store.passed_exercises()
        passed_here = store.passed_exercises(imported=False)
        best, latest = {}, {}
        for s in store.submissions():  # oldest first: the last one seen is the latest
            best[s.exercise] = max(best.get(s.exercise, 0), s.score)
            latest[s.exercise] = s
    rows = []
    for lesson in course.lessons:
        for ex in lesson.exercises:
            path = service.workspace_file(ctx.home, ex)
            state = "passed" if ex.id in passed else ("started" if path.exists() else "new")
            rows.append(
                {"id": ex.id, "lesson": lesson.id, "title": pick(ex.title, ctx.lang), "kind": ex.kind,
                 "state": state, "best_score": best.get(ex.id), "max_score": sum(c.points for c in ex.checks),
                 "latest_status": latest[ex.id].status if ex.id in latest else None,
                 "latest_score": latest[ex.id].score if ex.id in latest else None,
                 "file": str(path), "imported": ex.id in passed - passed_here}
            )  # fmt: skip
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    print(f"{'exercise':<16} {'state':<8} {'best':>7}  {'latest':<13} {'lesson':<14} title")
    for r in rows:
        top = f"{r['max_score']:g}"
        best_score = f"{r['best_score']:g}/{top}" if r["best_score"] is not None else f"-/{top}"
        last = f"{r['latest_status']} {r['latest_score']:g}/{top}" if r["latest_status"] else "-"
        state = f"{r['state']} (imported)" if r["imported"] else r["state"]
        print(f"{r['id']:<16} {state:<8} {best_score:>7}  {last:<13} {r['lesson']:<14} {r['title']}")
    return 0
