"""`python -m tutor read [LESSON]` (and `python -m tutor --plain`): a lesson as plain text, then its quiz.

    python -m tutor read multi-head                  the whole lesson, its experiments' results, then its quiz
    python -m tutor read 2 --section shuffle         one section
    python -m tutor read rope-alibi --no-run --no-quiz | less

For a screen reader or a pipe: no full-screen interface, no colour, no boxes. The lesson's prose in the
learner's language (tutor.content.plain_text), each experiment the lesson embeds run with the lesson's
parameters and its result as lines of text (tutor.experiments.plain); one that trains models is not
run here: the command that runs it is given instead, as with --no-run for every experiment. Then the
lesson's quiz, answered line by line from stdin as `python -m tutor quiz LESSON` takes it (at the end
of input the reading stops; every answer given is saved). With no LESSON, the lesson the learner was
last in (else the first). Each section printed counts as read in the learner's progress, as in the app.
Lines are broken at the terminal's width on a terminal; into a pipe, a paragraph is one line.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any


def add_arguments(parser, t) -> None:
    parser.add_argument("lesson", nargs="?", metavar="LESSON", help=t("cli.opt.read.lesson"))
    parser.add_argument("--section", metavar="ID", help=t("cli.opt.read.section"))
    parser.add_argument("--no-run", action="store_true", help=t("cli.opt.read.no_run"))
    parser.add_argument("--no-quiz", action="store_true", help=t("cli.opt.read.no_quiz"))


def _word(text: str) -> str:
    """`text` quoted for a POSIX shell, on one line: a line break as bash's $'\\n'."""
    if "\n" not in text:
        return shlex.quote(text)
    return "$'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def _command(name: str, params: dict[str, Any]) -> str:
    """The command line that runs an experiment with a lesson's parameters."""
    sets = []
    for key, value in params.items():
        shown = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        sets += ["--set", _word(f"{key}={shown}")]
    return " ".join(["python -m tutor experiment", shlex.quote(name), *sets])


class _Reader:
    def __init__(self, ctx, width: int | None, run_experiments: bool):
        self.ctx, self.lang, self.width, self.run_experiments = ctx, ctx.lang, width, run_experiments
        self.blank = True  # the last line printed was blank (or nothing is printed yet)

    def out(self, lines: list[str] | str = "") -> None:
        """Lines to stdout; never two blank lines in a row."""
        for line in [lines] if isinstance(lines, str) else lines:
            if line or not self.blank:
                print(line)
            self.blank = not line
        sys.stdout.flush()

    def _say(self, key: str, **values: Any) -> list[str]:
        from tutor.texts import say
        from tutor.wrap import wrap

        text = say(key, self.lang, **values)
        return wrap(text, self.width) if self.width else [text]

    def section(self, section) -> None:
        from tutor.content.markdown import blocks
        from tutor.content.plain_text import code_lines, prose_lines
        from tutor.i18n import pick

        self.out(["", pick(section.title, self.lang), ""])
        refs = iter(section.experiments)
        for block in blocks(pick(section.body, self.lang)):
            if block.kind == "prose":
                self.out(prose_lines("\n".join(block.lines), self.lang, self.width))
            elif block.experiment():
                ref = next(refs, None)
                if ref is not None:
                    self.experiment(ref)
            else:
                self.out(code_lines(block.body))
            self.out()

    def experiment(self, ref) -> None:
        from tutor.errors import TutorError
        from tutor.experiments.errors import Cancelled
        from tutor.experiments.registry import get_spec
        from tutor.experiments.result import Msg

        command = _command(ref.name, ref.params)
        try:
            spec = get_spec(ref.name)
        except TutorError as err:
            self.out(self._say("read.failed", name=ref.name, error=err.in_lang(self.lang)))
            return
        self.out(self._say("read.experiment", title=Msg(f"exp.{ref.name}.title"), name=ref.name))
        if spec.long:
            self.out(self._say("read.trains", command=command))
            return
        if not self.run_experiments:
            self.out(self._say("read.not_run", command=command))
            return
        from functools import partial

        from tutor.commands.experiment import print_measuring
        from tutor.experiments import runner
        from tutor.experiments.plain import result_lines

        try:
            result = runner.run_quick(ref.name, ref.params, on_event=partial(print_measuring, self.lang, {}))
        except (TutorError, Cancelled) as err:
            detail = err.in_lang(self.lang) if isinstance(err, TutorError) else type(err).__name__
            self.out(self._say("read.failed", name=ref.name, error=detail))
            return
        self.out(result_lines(result, self.lang))


def _lesson(course, store, key: str | None):
    from tutor.commands.quiz import find_lesson

    if key:
        return find_lesson(course, key)
    last = (store.last_location() or {}).get("lesson")
    return next((lesson for lesson in course.lessons if lesson.id == last), course.lessons[0])


def run(args, ctx) -> int:
    import shutil

    from rich.console import Console

    from tutor.course import open_course
    from tutor.errors import TutorError
    from tutor.i18n import pick
    from tutor.progress.store import Store
    from tutor.quiz.session import QuizSession
    from tutor.quiz.terminal import run_session
    from tutor.texts import say
    from tutor.wrap import MAX_WIDTH

    course = open_course(ctx.lessons_dir)
    for folder in course.skipped:
        print(say("cli.left_out", ctx.lang, name=folder.name), file=sys.stderr)
    if not course.lessons:
        raise TutorError("cli.lessons.none")
    width = min(shutil.get_terminal_size().columns, MAX_WIDTH) if sys.stdout.isatty() else None
    store = Store(ctx.home)
    try:
        for notice in store.notices:
            print(say("cli.note", ctx.lang, text=notice), file=sys.stderr)
        lesson = _lesson(course, store, getattr(args, "lesson", None))
        sections = lesson.sections
        if getattr(args, "section", None):
            sections = [s for s in lesson.sections if s.id == args.section]
            if not sections:
                known = ", ".join(s.id for s in lesson.sections)
                raise TutorError("read.no_section", id=args.section, lesson=lesson.id, known=known)
        reader = _Reader(ctx, width, run_experiments=not getattr(args, "no_run", False))
        reader.out(pick(lesson.title, ctx.lang))
        for section in sections:
            reader.section(section)
            store.mark_read(lesson.id, section.id)
            store.set_last_location({"screen": "lesson", "lesson": lesson.id, "section": section.id})
        if getattr(args, "no_quiz", False) or getattr(args, "section", None) or not lesson.quiz:
            return 0
        reader.out()
        session = QuizSession.for_lesson(store, lesson, lang=ctx.lang)
        store.set_last_location({"screen": "quiz", "lesson": lesson.id})
        console = Console(highlight=False, soft_wrap=True, color_system=None)
        title = say("quiz.title", ctx.lang, title=pick(lesson.title, ctx.lang))
        return run_session(session, console, title, course.lessons)
    finally:
        store.close()
