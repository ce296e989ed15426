"""`python -m tutor check [--lessons DIR]`: validate the course content and list every problem.

Problems come first from loading the lessons (`tutor.course.open_course`), then from each function in
`EXTRA_CHECKERS` (Course -> problems), e.g. the grading side's "every starter fails, every
solution passes, each broken file fails the check it names". Output: `FILE:LINE: field: message`, errors then warnings, grouped by file,
then a summary line. Exit 2 if there is any error, else 0.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.content.loader import Course
    from tutor.content.problems import Problem

Checker = Callable[["Course"], Iterable["Problem"]]  # the names imported for the type checker only


def _terms_checker(course):
    """The glossary: no text uses a word glossary.toml refuses (tutor/content/glossary.py)."""
    from tutor.content.glossary import check_terms

    return check_terms(course)


def _exercises_checker(course):
    """The grading side: starters fail, references pass, broken files fail the check they name
    (tutor/grading/authoring.py)."""
    from tutor.grading.authoring import check_exercises

    return check_exercises(course)


# Further checks run after loading, in order. Each gets the loaded Course and returns problems.
EXTRA_CHECKERS: list[Checker] = [_terms_checker, _exercises_checker]


def add_arguments(parser, t) -> None:
    parser.add_argument("--quiet", "-q", action="store_true", help=t("cli.opt.check.quiet"))


def collect_problems(lessons_dir: Path):
    """(course, problems): the loader's problems, then every extra checker's."""
    from tutor.course import open_course

    course = open_course(lessons_dir)
    problems = list(course.problems)
    for checker in EXTRA_CHECKERS:
        problems.extend(checker(course))
    return course, problems


def run(args, ctx) -> int:
    course, problems = collect_problems(ctx.lessons_dir)
    base = Path.cwd()
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity == "warning"]
    for title, group in (("errors", errors), ("warnings", [] if args.quiet else warnings)):
        if not group:
            continue
        print(f"{title}:")
        by_file: dict[Path, list] = {}
        for p in group:
            by_file.setdefault(p.file, []).append(p)
        for items in by_file.values():
            for p in sorted(items, key=lambda p: p.line or 0):
                print("  " + p.format(base))
    loaded = len(course.lessons)
    skipped = ", ".join(f.name for f in course.skipped)
    summary = (
        f"lessons loaded: {loaded}"
        + (f", skipped: {len(course.skipped)} ({skipped})" if course.skipped else "")
        + f"; errors: {len(errors)}, warnings: {len(warnings)}"
    )
    print(summary, file=sys.stdout)
    return 2 if errors else 0
