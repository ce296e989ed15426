"""`python -m tutor class DIR [--json] [--grade [--jobs N] [--export OUT]]`: the instructor's view of a
class served by `python -m tutor serve --roster CSV --dir DIR`.

    python -m tutor class DIR                  each learner (id, name, language): sections read, quiz
                                               answered, right and due today (all lessons together),
                                               then the best recorded grade per exercise
    python -m tutor class DIR --json           the same for other tools (below)
    python -m tutor class DIR --grade          and every learner's current workspace file graded, one
        [--jobs N]                             batch per code exercise (N files at once; default: the
                                               number of cores); not recorded in anyone's progress
        [--export OUT]                         OUT/EXERCISE/checks.csv, gradebook.csv and feedback/, as
                                               `grade --batch --export` writes them, with the learners'
                                               ids and names from class.json

The learners are those of DIR/class.json (written by `serve --roster`); their homes are
DIR/learners/ID. Stores are read read-only (tutor.serve.classroom); a learner who has not opened their
link yet stands at zero. A learner whose progress cannot be read is shown with "?", and the command
then ends with exit 2 after showing everyone else; class.json missing or malformed is exit 2 at once.

JSON: {"folder", "lessons": [{"id", "sections", "questions", "exercises": [ID]}],
"learners": [{"id", "name", "language", "home", "state": "ok"|"new"|"unreadable", "problem",
"sections_read", "sections_total", "quiz": {"questions", "answered", "correct", "due"},
"lessons": [{"id", "sections_read", "sections_total", "quiz": {...}}],
"exercises": {ID: {"status", "score", "max_score", "attempts", "passed"} or null}}],
and with --grade "graded": [{"exercise", "results": [{"learner", "file", "sha256", "grade"}]}]}.
"state" "new": no folder yet (zeros); "unreadable": "problem" says why, and the counts are null.
"exercises" has every exercise of the course, null where the learner has no recorded grade; "grade"
is the grade JSON of `grade --json`. A learner without a workspace file of an exercise has no row
in its "results".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tutor.errors import TutorError
from tutor.texts import number, say

MARK_PASSED = "✓"
UNREADABLE = "?"


def add_arguments(parser, t) -> None:
    parser.add_argument("folder", type=Path, metavar="DIR", help=t("cli.opt.class.dir"))
    parser.add_argument("--json", action="store_true", help=t("cli.opt.class.json"))
    parser.add_argument("--grade", action="store_true", help=t("cli.opt.class.grade"))
    parser.add_argument("--jobs", type=int, metavar="N", help=t("cli.opt.class.jobs"))
    parser.add_argument("--export", type=Path, metavar="OUT", help=t("cli.opt.class.export"))
    parser.add_argument("--force", action="store_true", help=t("cli.opt.class.force"))
    parser.add_argument("--before", metavar="TIME", help=t("cli.opt.class.before"))


def run(args, ctx) -> int:
    from tutor.course import open_course
    from tutor.progress.db import local_now
    from tutor.serve.classroom import read_class, read_standing

    lang = ctx.lang
    if (args.export is not None or args.jobs is not None) and not args.grade:
        raise TutorError("err.class.grade_options")
    jobs = args.jobs if args.jobs is not None else os.cpu_count() or 1
    if jobs < 1:
        raise TutorError(say("cli.train.at_least_1", lang, option="--jobs", got=str(jobs)))
    from tutor.grading.instructor.deadlines import parse_when

    before = parse_when(args.before, "--before", lang) if args.before is not None else None
    folder = args.folder.expanduser()
    members = read_class(folder)  # a bad class.json stops here, before anything is read or graded
    course = open_course(ctx.lessons_dir)
    for skipped in course.skipped:
        print(say("cli.left_out", lang, name=skipped.name), file=sys.stderr)
    now = local_now()
    standings = [read_standing(folder, member, course.lessons, now, before) for member in members]
    for standing in standings:
        _note(standing, lang)
    graded = _grade(folder, members, course, args, lang, jobs) if args.grade else None
    if args.json:
        data = _as_json(folder, course, standings, graded, lang) | {
            "before": before.isoformat() if before else None
        }
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        _print_tables(folder, course, standings, graded, lang, args.before)
    unreadable = sum(s.state == "unreadable" for s in standings)
    if unreadable:
        raise TutorError(say("class.unreadable", lang, n=unreadable))
    return 0


def _note(standing, lang: str) -> None:
    """A line on stderr for a learner shown at zero (no folder yet) or with "?" (unreadable)."""
    if standing.state == "new":
        text = say("class.note.new", lang, id=standing.member.id, path=standing.home)
    elif standing.state == "unreadable":
        text = say("class.note.unreadable", lang, id=standing.member.id, reason=standing.problem)
    else:
        return
    print(say("cli.note", lang, text=text), file=sys.stderr)


def _grade(folder: Path, members, course, args, lang: str, jobs: int) -> list[tuple]:
    """[(exercise, batch rows)] for every code exercise, in course order; with --export, each
    exercise's files written to OUT/EXERCISE."""
    from tutor.serve.classroom import grade_class

    def starting(ex) -> None:
        print(say("class.grading", lang, id=ex.id, n=len(members)), file=sys.stderr, flush=True)

    exercises = [ex for lesson in course.lessons for ex in lesson.exercises if ex.kind == "code"]
    graded = grade_class(folder, members, exercises, lang=lang, jobs=jobs, on_exercise=starting)
    if args.export is not None:
        for ex, rows in graded:
            _export(ex, rows, members, args.export / ex.id, lang, args.force)
    return graded


def _export(ex, rows, members, out: Path, lang: str, force: bool) -> None:
    """checks.csv, gradebook.csv and feedback/ of one exercise in `out`, each row under the id and
    name its learner has in class.json."""
    from tutor.grading.instructor.batch import shown_name
    from tutor.grading.instructor.export import write_exports
    from tutor.grading.instructor.roster import Roster, Student
    from tutor.serve.classroom import file_name

    whose = {file_name(m, ex): m for m in members}
    roster = Roster.of_files(
        {row.file: Student(whose[row.file].id, shown_name(whose[row.file].name), True) for row in rows}
    )
    for warning in write_exports(ex, rows, out, lang, roster, force=force):
        print(say("grade.merge.warning", lang, message=warning), file=sys.stderr)
    print(say("grade.export.done", lang, n=len(rows), folder=shown_name(str(out))), file=sys.stderr)


# --- JSON ----------------------------------------------------------------------------------------


def _as_json(folder: Path, course, standings, graded, lang: str) -> dict:
    exercises = [ex.id for lesson in course.lessons for ex in lesson.exercises]
    data = {
        "folder": str(folder),
        "lessons": [
            {
                "id": lesson.id,
                "sections": len(lesson.sections),
                "questions": len(lesson.quiz),
                "exercises": [ex.id for ex in lesson.exercises],
            }
            for lesson in course.lessons
        ],
        "learners": [_learner_json(s, exercises, lang) for s in standings],
    }
    if graded is not None:
        data["graded"] = [
            {
                "exercise": ex.id,
                "results": [
                    {
                        "learner": row.file.split("/", 1)[0],
                        "file": row.file,
                        "sha256": row.sha256,
                        "grade": row.result.to_json(),
                    }
                    for row in rows
                ],
            }
            for ex, rows in graded
        ]
    return data


def _quiz(lessons) -> dict:
    return {key: sum(getattr(x, key) for x in lessons) for key in ("questions", "answered", "correct", "due")}


def _learner_json(standing, exercises: list[str], lang: str) -> dict:
    member, lessons = standing.member, standing.lessons
    data = {
        "id": member.id,
        "name": member.name,
        "language": member.lang,
        "home": str(standing.home),
        "state": standing.state,
        "problem": standing.problem.in_lang(lang) if standing.problem else None,
    }
    if standing.state == "unreadable":
        return data | dict.fromkeys(("sections_read", "sections_total", "quiz", "lessons", "exercises"))
    per_lesson = [
        {"id": x.id, "sections_read": x.sections_read, "sections_total": x.sections_total, "quiz": _quiz([x])}
        for x in lessons
    ]
    return data | {
        "sections_read": sum(x.sections_read for x in lessons),
        "sections_total": sum(x.sections_total for x in lessons),
        "quiz": _quiz(lessons),
        "lessons": per_lesson,
        "exercises": {ex: (vars(g).copy() if (g := standing.grades.get(ex)) else None) for ex in exercises},
    }


# --- the tables ----------------------------------------------------------------------------------


def _print_tables(folder: Path, course, standings, graded, lang: str, before: str | None = None) -> None:
    from rich.console import Console

    from tutor.grading.instructor.batch import to_table

    console = Console(highlight=False)
    console.print(_progress_table(folder, course, standings, lang))
    exercises = [ex for lesson in course.lessons for ex in lesson.exercises]
    if exercises:
        console.print(_grades_table(exercises, standings, lang, before))
    for ex, rows in graded or ():  # as `grade --batch` prints it
        print("\n" + say("class.batch_title", lang, id=ex.id))
        print(to_table(ex, rows, lang) if rows else say("class.no_files", lang, id=ex.id))


def _table(title: str):
    """A table without lines between its columns: the course's six exercise ids and a learner's
    fit in 80 columns whole. A cell too wide for the terminal is folded, never cut."""
    from rich import box
    from rich.table import Table

    return Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False
    )


def _progress_table(folder: Path, course, standings, lang: str):
    from rich.markup import escape

    from tutor.grading.instructor.batch import shown_name

    title = say("class.title", lang, n=len(standings), folder=shown_name(str(folder)))
    table = _table(escape(title))
    for key in ("learner", "name", "language", "read", "answered", "correct", "due"):
        justify = "left" if key in ("learner", "name") else "right"
        table.add_column(say(f"class.col.{key}", lang), justify=justify, overflow="fold")
    sections = sum(len(lesson.sections) for lesson in course.lessons)
    questions = sum(len(lesson.quiz) for lesson in course.lessons)
    for s in standings:
        who = [s.member.id, escape(shown_name(s.member.name)), s.member.lang]
        if s.state == "unreadable":
            table.add_row(*who, *[UNREADABLE] * 4)
            continue
        quiz = _quiz(s.lessons)
        read = sum(x.sections_read for x in s.lessons)
        table.add_row(
            *who,
            f"{read}/{sections}",
            f"{quiz['answered']}/{questions}",
            str(quiz["correct"]),
            str(quiz["due"]),
        )
    return table


def _grades_table(exercises, standings, lang: str, before: str | None = None):
    from rich.markup import escape

    from tutor.grading.instructor.batch import shown_name

    title = (
        say("class.grades_title", lang, mark=MARK_PASSED)
        if before is None
        else say("class.grades_before", lang, mark=MARK_PASSED, time=shown_name(before))
    )
    table = _table(escape(title))
    table.add_column(say("class.col.learner", lang), overflow="fold")
    for ex in exercises:  # an id on a line per part ("context-" over "scaling"), so seven fit in 80 columns
        table.add_column(ex.id.replace("-", "-\n"), justify="right", overflow="fold")
    for s in standings:
        table.add_row(s.member.id, *[_grade_cell(s, ex.id, lang) for ex in exercises])
    return table


def _grade_cell(standing, exercise: str, lang: str) -> str:
    if standing.state == "unreadable":
        return UNREADABLE
    best = standing.grades.get(exercise)
    if best is None:
        return "-"
    cell = f"{number(best.score, lang)}/{number(best.max_score, lang)}"
    return f"{cell} {MARK_PASSED}" if best.status == "pass" else cell
