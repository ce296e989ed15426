"""Driving a QuizSession in a plain terminal with Rich: prompts in, feedback out.

Reads one line per answer from stdin through `console.input`, so it works over ssh and with a
pipe (no TTY). When stdin is not a terminal the answers are echoed, so a transcript reads well.
All of the quiz's own words come from tutor.quiz.texts in the session's language.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.markup import escape

from tutor.content.schema import Lesson, MultipleChoice, OpenQuestion, SingleChoice, pick
from tutor.quiz.check import AnswerError, parse_rating
from tutor.quiz.session import Feedback, Item, QuizSession, due_items
from tutor.quiz.texts import say


class _Stop(Exception):
    """End of input: stop the sitting; everything answered is already saved."""


class _Terminal:
    def __init__(self, session: QuizSession, console: Console, lessons: Sequence[Lesson]):
        self.session, self.console, self.lang = session, console, session.lang
        self.lessons = lessons  # the course: review counts leave out items it no longer has

    def t(self, key: str, **values: object) -> str:
        """A quiz text, escaped for Rich markup (it may carry content such as titles)."""
        return escape(say(key, self.lang, **values))

    def out(self, text: str = "") -> None:
        self.console.print(text)

    def ask(self, key: str) -> str:
        try:
            line = self.console.input(f"[bold]{self.t(key)}[/]")
        except EOFError:
            raise _Stop from None
        if not sys.stdin.isatty():
            self.out(escape(line))
        return line.strip()

    # --- one question --------------------------------------------------------------------

    def question(self, item: Item, number: int) -> None:
        q = item.question
        label = (
            say("again_label", self.lang)
            if self.session.is_repeat(item)
            else f"{number}/{len(self.session.items)}"
        )
        self.out()
        self.out(f"[bold cyan]{escape(f'[{label}]')}[/] {escape(pick(q.prompt, self.lang))}")
        if isinstance(q, SingleChoice | MultipleChoice):
            for i, choice in enumerate(q.choices, 1):
                self.out(f"  {i}) {escape(pick(choice.text, self.lang))}")
        if getattr(q, "unit", None):
            self.out(f"  [dim]{self.t('unit', unit=pick(q.unit, self.lang))}[/]")

    def answer(self, item: Item) -> Feedback:
        q = item.question
        key = {"multiple": "prompt.multiple", "single": "prompt.single", "open": "prompt.open"}.get(
            q.type, "prompt.text"
        )
        used_hint = False
        while True:
            text = self.ask(key)
            if text == "?":
                if q.hint:
                    self.out(f"  [yellow]{self.t('hint')}[/] {escape(pick(q.hint, self.lang))}")
                    used_hint = True
                else:
                    self.out(f"  [dim]{self.t('no_hint')}[/]")
                continue
            if isinstance(q, OpenQuestion):
                self.out(f"  [green]{self.t('model_answer')}[/] {escape(pick(q.model_answer, self.lang))}")
                while True:
                    rating = self.ask("prompt.rating")
                    try:
                        parse_rating(rating)
                    except AnswerError as err:
                        self.out(f"  [red]{escape(err.text(self.lang))}[/]")
                        continue
                    return self.session.answer(rating, note=text or None)
            try:
                return self.session.answer(text, used_hint=used_hint)
            except AnswerError as err:
                self.out(f"  [red]{escape(err.text(self.lang))}[/] — {self.t('try_hint')}")

    def feedback(self, fb: Feedback) -> None:
        if fb.correct is None:
            rating = say(f"rating.{fb.rating}", self.lang)
            verdict = (
                f"[yellow]{self.t('rated_again')}[/]"
                if fb.missed
                else f"[green]{self.t('rated', rating=rating)}[/]"
            )
        elif fb.correct:
            verdict = f"[bold green]{self.t('right')}[/]"
        else:
            verdict = f"[bold red]{self.t('wrong')}[/]"
        read = (
            f" [dim]{self.t('read_as', value=fb.understood)}[/]"
            if fb.understood and fb.correct is not None
            else ""
        )
        self.out(f"  {verdict}{read}")
        if fb.correct is False and fb.expected:
            self.out(f"  {self.t('the_answer', answer=fb.expected)}")
        for choice in fb.choices:
            if choice.picked and choice.why:
                self.out(f"  [magenta]{self.t('why_not', choice=choice.text)}[/] {escape(choice.why)}")
        if fb.explanation:
            self.out(f"  {escape(fb.explanation)}")
        elif fb.missed:
            self.out(f"  [dim]{self.t('held_back')}[/]")
        if fb.go_back:
            where = fb.go_back.lesson + (f"#{fb.go_back.section}" if fb.go_back.section else "")
            self.out(
                f"  [bold yellow]{self.t('go_back', n=fb.misses_in_row, title=fb.go_back.title)}[/] [dim]({where})[/]"
            )
        elif fb.again_later:
            self.out(f"  [dim]{self.t('comes_back')}[/]")
        if fb.due:
            when = self._days(fb.due, self.session.now())
            self.out(f"  [dim]{self.t('next_review', when=when, date=fb.due.date().isoformat())}[/]")

    def _days(self, due: datetime, now: datetime) -> str:
        days = (due.date() - now.date()).days
        if days <= 0:
            return say("today", self.lang)
        return say("tomorrow", self.lang) if days == 1 else say("in_days", self.lang, n=days)

    # --- the sitting ---------------------------------------------------------------------

    def end(self, stopped: bool) -> None:
        session, score = self.session, self.session.score()
        self.out()
        if stopped:
            self.out(self.t("stopped", answered=score.answered, total=score.total))
        elif session.mode == "predict":
            self.out(f"[bold green]{self.t('unlocked')}[/]")
        if score.answered and session.mode != "predict":
            percent = f"{score.percent:.0f}"
            self.out(f"[bold]{self.t('score', correct=score.correct, total=score.total, percent=percent)}[/]")
        for pointer in score.go_back:
            self.out(f"  {self.t('reread', title=pointer.title, lesson=pointer.lesson)}")
        due = due_items(session.store, self.lessons, session.now())
        if due:
            self.out(f"[dim]{self.t('due_today', n=len(due))}[/]")

    def run(self, title: str) -> int:
        session = self.session
        self.out(f"[bold]{escape(title)}[/]")
        if session.finished:
            if session.mode == "predict":
                self.out(self.t("already_unlocked"))
            else:
                known = {(lesson.id, q.id) for lesson in self.lessons for q in lesson.quiz}
                upcoming = [s for s in session.store.review_states() if (s.lesson, s.question) in known]
                nxt = " " + self.t("next_due", date=upcoming[0].due.date().isoformat()) if upcoming else ""
                self.out(self.t("nothing_due") + nxt)
            return 0
        self.out(f"[dim]{self.t('intro', n=len(session.items))}[/]")
        number, round_two = 0, False
        try:
            while (item := session.next_question()) is not None:
                repeat = session.is_repeat(item)
                number += 0 if repeat else 1
                if session.mode == "lesson" and repeat and not round_two:
                    round_two = True
                    self.out(f"\n[bold]{self.t('second_round')}[/]")
                self.question(item, number)
                self.feedback(self.answer(item))
        except _Stop:
            self.end(stopped=True)
            return 0
        self.end(stopped=False)
        return 0


def run_session(session: QuizSession, console: Console, title: str, lessons: Sequence[Lesson]) -> int:
    """Ask until the session is done or input ends; exit code 0 either way. `lessons`: the course."""
    return _Terminal(session, console, lessons).run(title)
