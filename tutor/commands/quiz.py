"""`python -m tutor quiz LESSON [--review] [--predict EXERCISE]`: a quiz in a plain terminal.

    python -m tutor quiz multi-head          the lesson's quiz straight through, score at the end
    python -m tutor quiz --review            what is due today across all lessons, then a few new questions
    python -m tutor quiz --predict rope      an exercise's predict-before-you-code questions

LESSON is a lesson id, its folder name or its order number. Works without a TTY: answers are read
line by line from stdin, so a test (or a script) can pipe them in. Choices are answered by their
numbers as shown ("2", "1, 3"; the order changes from sitting to sitting); numbers may be written as
calculations ("2^-8", "128²", "2π", German "128 : 8"); a shape is whole numbers ("(1, 4, 5, 8)"); a
name from the code may have spaces for its underscores ("rotate half"); "?" shows the hint where there
is one (a right answer after a hint is scheduled as "hard"); open questions ask for your own answer,
show the model answer beside it, then ask you to rate yourself. The score counts the questions answered; a lesson's quiz left
unfinished says how many are left and resumes where it stopped.
End of input (Ctrl-D) or Ctrl-C stops cleanly: every answer given so far is already saved.
"""

from __future__ import annotations


def add_arguments(parser, t) -> None:
    parser.add_argument("lesson", nargs="?", metavar="LESSON", help=t("cli.opt.quiz.lesson"))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--review", action="store_true", help=t("cli.opt.quiz.review"))
    mode.add_argument("--predict", metavar="EXERCISE", help=t("cli.opt.quiz.predict"))
    parser.add_argument(
        "--new",
        type=int,
        metavar="N",
        help=t("cli.opt.quiz.new"),
    )


def find_lesson(course, key: str):
    """A lesson by id, folder name ("01-multi-head") or order number ("1")."""
    for lesson in course.lessons:
        if key in (lesson.id, str(lesson.order)) or (lesson.folder and lesson.folder.name == key):
            return lesson
    return course.lesson(key)  # raises with the list of known lessons


def run(args, ctx) -> int:
    import sys

    from rich.console import Console

    from tutor.course import open_course
    from tutor.errors import TutorError
    from tutor.i18n import pick
    from tutor.progress.store import Store
    from tutor.quiz.session import QuizSession
    from tutor.quiz.terminal import run_session
    from tutor.texts import say

    new_limit = args.new  # None: what is left of the day's allowance of new questions
    if new_limit is not None and new_limit < 0:
        raise TutorError(say("cli.quiz.new_negative", ctx.lang))
    if not args.review and not args.predict and not args.lesson:
        raise TutorError(say("cli.quiz.what", ctx.lang))
    if (args.review or args.predict) and args.lesson:
        raise TutorError(say("cli.quiz.both", ctx.lang))
    course = open_course(ctx.lessons_dir)
    for folder in course.skipped:
        print(say("cli.left_out", ctx.lang, name=folder.name), file=sys.stderr)
    console = Console(highlight=False, soft_wrap=True)
    store = Store(ctx.home)
    try:
        for notice in store.notices:
            print(say("cli.note", ctx.lang, text=notice), file=sys.stderr)
        if args.review:
            session = QuizSession.for_review(store, course.lessons, new_limit=new_limit, lang=ctx.lang)
            title = say("quiz.review", ctx.lang)
        elif args.predict:
            exercise = course.exercise(args.predict)
            lesson = next(l for l in course.lessons if exercise in l.exercises)  # noqa: E741
            session = QuizSession.for_predictions(store, lesson, exercise, lang=ctx.lang)
            title = say("quiz.predict", ctx.lang, exercise=args.predict)
        else:
            lesson = find_lesson(course, args.lesson)
            if not lesson.quiz:
                raise TutorError(say("cli.quiz.no_questions", ctx.lang, id=lesson.id))
            session = QuizSession.for_lesson(store, lesson, lang=ctx.lang)
            store.set_last_location({"screen": "quiz", "lesson": lesson.id})
            title = say("quiz.title", ctx.lang, title=pick(lesson.title, ctx.lang))
        return run_session(session, console, title, course.lessons)
    finally:
        store.close()
