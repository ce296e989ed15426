"""Driving a QuizSession in a plain terminal with Rich: prompts in, feedback out.

Reads one line per answer from stdin through `console.input`, so it works over ssh and with a
pipe (no TTY). When stdin is not a terminal the answers are echoed, so a transcript reads well.
Every line is broken by tutor.wrap (whole words; Chinese between characters, never before
closing punctuation) at the terminal's width, at most `MAX_WIDTH` columns. Ctrl-D or Ctrl-C stops
the sitting on a fresh line; everything answered is already saved. All of the quiz's own words
come from the catalogue (tutor.texts) in the session's language, its feedback from tutor.quiz.feedback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from tutor.content.schema import Lesson, MultipleChoice, NumberQuestion, OpenQuestion, SingleChoice
from tutor.i18n import pick
from tutor.quiz.check import AnswerError, answer_kind, parse_rating
from tutor.quiz.feedback import STYLE, Line, counter, feedback_lines, open_answer_lines
from tutor.quiz.session import Feedback, Item, QuizSession, due_items
from tutor.texts import say
from tutor.wrap import MAX_WIDTH, reflow, wrap

EXIT_INTERRUPTED = 130  # the shell's code for a program stopped by Ctrl-C


class _Stop(Exception):
    """End of input: stop the sitting; everything answered is already saved."""


class _Terminal:
    def __init__(self, session: QuizSession, console: Console, lessons: Sequence[Lesson]):
        self.session, self.console, self.lang = session, console, session.lang
        self.lessons = lessons  # the course: review counts leave out items it no longer has
        self.width = min(console.width, MAX_WIDTH)

    def say(self, key: str, **values: object) -> str:
        return say(key, self.lang, **values)

    def out(
        self, text: str = "", style: str = "", *, indent: int = 2, label: str = "", label_style: str = ""
    ):
        """`text` wrapped to the line width; `label` starts the first line, the others hang under it."""
        hang = " " * (indent + cell_len(label))
        for i, line in enumerate(wrap(reflow(text), self.width - len(hang))):
            start = (" " * indent, (label, label_style)) if i == 0 else (hang,)
            self.console.print(Text.assemble(*start, (line, style)))

    def lines(self, lines: list[Line]) -> None:
        for line in lines:
            self.out(line.text, STYLE[line.tone])

    def ask(self, key: str) -> str:
        try:
            line = self.console.input(Text(self.say(key), style="bold"))
        except EOFError:
            raise _Stop from None
        if not sys.stdin.isatty():
            self.console.print(Text(line))
        return line.strip()

    # --- one question --------------------------------------------------------------------

    def question(self, item: Item) -> None:
        q = item.question
        self.console.print()
        label = f"[{counter(self.session, item, self.lang)}] "
        self.out(pick(q.prompt, self.lang), indent=0, label=label, label_style="bold cyan")
        if isinstance(q, SingleChoice | MultipleChoice):
            for i, choice in enumerate(q.choices, 1):
                self.out(pick(choice.text, self.lang), label=f"{i}) ")
        if isinstance(q, NumberQuestion) and q.unit:  # the one kind with a unit
            self.out(self.say("quiz.unit", unit=pick(q.unit, self.lang)), "dim")

    def answer(self, item: Item) -> Feedback:
        q = item.question
        key = f"quiz.prompt.{answer_kind(q)}"
        used_hint = False
        while True:
            text = self.ask(key)
            if text == "?":
                if q.hint:
                    self.out(self.say("quiz.hint", hint=pick(q.hint, self.lang)), "yellow")
                    used_hint = True
                else:
                    self.out(self.say("quiz.no_hint"), "dim")
                continue
            if isinstance(q, OpenQuestion):
                self.lines(open_answer_lines(q, text or None, self.lang))
                return self.session.answer(self.rating(), note=text or None, used_hint=used_hint)
            try:
                return self.session.answer(text, used_hint=used_hint)
            except AnswerError as err:
                self.out(
                    err.in_lang(self.lang) + (f" — {self.say('quiz.try_hint')}" if q.hint else ""), "red"
                )

    def rating(self) -> str:
        while True:
            rating = self.ask("quiz.prompt.rating")
            try:
                parse_rating(rating)
            except AnswerError as err:
                self.out(err.in_lang(self.lang), "red")
                continue
            return rating

    # --- the sitting ---------------------------------------------------------------------

    def end(self, stopped: bool) -> None:
        session, score = self.session, self.session.score()
        self.console.print()
        if stopped:
            self.out(self.say("quiz.stopped", answered=score.answered, total=score.total), indent=0)
        elif session.mode == "predict":
            self.out(self.say("quiz.unlocked"), "bold green", indent=0)
        if score.answered and session.mode != "predict":
            percent = f"{score.percent:.0f}"
            self.out(
                self.say("quiz.score", correct=score.correct, answered=score.answered, percent=percent),
                "bold",
                indent=0,
            )
            if score.left:
                self.out(self.say("quiz.left", n=score.left), indent=0)
        for pointer in score.go_back:
            self.out(self.say("quiz.reread", title=pointer.title, lesson=pointer.lesson))
        due = due_items(session.store, self.lessons, session.now())
        if due:
            self.out(self.say("quiz.due_today", n=len(due)), "dim", indent=0)

    def intro(self) -> None:
        session = self.session
        intro = self.say("quiz.intro", n=len(session.items))
        if session.plan is not None:
            intro = f"{self.say('quiz.plan', due=len(session.plan.due), new=len(session.plan.new))}. {intro}"
        self.out(intro, "dim", indent=0)
        if session.answered:
            self.out(self.say("quiz.resumed", answered=session.answered, total=len(session.items)), indent=0)

    def nothing_to_ask(self) -> None:
        session = self.session
        if session.mode == "predict":
            self.out(self.say("quiz.already_unlocked"), indent=0)
            return
        known = {(lesson.id, q.id) for lesson in self.lessons for q in lesson.quiz}
        upcoming = [s for s in session.store.review_states() if (s.lesson, s.question) in known]
        nxt = " " + self.say("quiz.next_due", date=upcoming[0].due.date().isoformat()) if upcoming else ""
        self.out(self.say("quiz.nothing_due") + nxt, indent=0)

    def run(self, title: str) -> int:
        session = self.session
        self.out(title, "bold", indent=0)
        if session.finished:
            self.nothing_to_ask()
            return 0
        self.intro()
        round_two = False
        try:
            while (item := session.next_question()) is not None:
                if session.second_round and not round_two:
                    round_two = True
                    self.console.print()
                    self.out(self.say("quiz.second_round"), "bold", indent=0)
                self.question(item)
                self.lines(feedback_lines(self.answer(item), self.lang, session.now()))
        except _Stop:
            self.end(stopped=True)
            return 0
        except KeyboardInterrupt:
            self.console.print()  # the terminal echoed ^C on the answer line: start a fresh one
            self.end(stopped=True)
            return EXIT_INTERRUPTED
        self.end(stopped=False)
        return 0


def run_session(session: QuizSession, console: Console, title: str, lessons: Sequence[Lesson]) -> int:
    """Ask until the session is done or input ends; exit code 0 (130 after Ctrl-C). `lessons`: the course."""
    return _Terminal(session, console, lessons).run(title)
