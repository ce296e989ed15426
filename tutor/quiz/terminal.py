"""Driving a QuizSession in a plain terminal with Rich: prompts in, feedback out.

Reads one line per answer from stdin through `console.input`, so it works over ssh and with a
pipe (no TTY). When stdin is not a terminal the answers are echoed, so a transcript reads well.
"""

from __future__ import annotations

import sys
from datetime import datetime

from rich.console import Console
from rich.markup import escape

from tutor.content.schema import MultipleChoice, OpenQuestion, SingleChoice, pick
from tutor.quiz.check import AnswerError, parse_rating
from tutor.quiz.schedule import end_of_today
from tutor.quiz.session import Feedback, Item, QuizSession


class _Stop(Exception):
    """End of input: stop the sitting; everything answered is already saved."""


def _ask(console: Console, prompt: str) -> str:
    try:
        line = console.input(f"[bold]{prompt}[/]")
    except EOFError:
        raise _Stop from None
    if not sys.stdin.isatty():
        console.print(escape(line))
    return line.strip()


def _days(due: datetime, now: datetime) -> str:
    days = (due.date() - now.date()).days
    return "tomorrow" if days == 1 else f"in {days} days" if days > 1 else "today"


def _show_question(console: Console, session: QuizSession, item: Item, number: int) -> None:
    q, lang = item.question, session.lang
    label = "again" if session.is_repeat(item) else f"{number}/{len(session.items)}"
    console.print()
    console.print(f"[bold cyan]{escape(f'[{label}]')}[/] {escape(pick(q.prompt, lang))}")
    if isinstance(q, SingleChoice | MultipleChoice):
        for i, choice in enumerate(q.choices, 1):
            console.print(f"  {i}) {escape(pick(choice.text, lang))}")
    if getattr(q, "unit", None):
        console.print(f"  [dim](unit: {escape(pick(q.unit, lang))})[/]")


def _prompt_for(item: Item) -> str:
    q = item.question
    if isinstance(q, MultipleChoice):
        return "answers (numbers, e.g. 1, 3)> "
    if isinstance(q, SingleChoice):
        return "answer (number)> "
    return "answer> "


def _ask_answer(console: Console, session: QuizSession, item: Item) -> Feedback:
    q, lang = item.question, session.lang
    used_hint = False
    while True:
        prompt = "your answer (Enter to skip)> " if isinstance(q, OpenQuestion) else _prompt_for(item)
        text = _ask(console, prompt)
        if text == "?":
            if q.hint:
                console.print(f"  [yellow]hint:[/] {escape(pick(q.hint, lang))}")
                used_hint = True
            else:
                console.print("  [dim]no hint for this one[/]")
            continue
        if isinstance(q, OpenQuestion):
            console.print(f"  [green]model answer:[/] {escape(pick(q.model_answer, lang))}")
            while True:
                rating = _ask(console, "how did you do? again / hard / good / easy (1-4)> ")
                try:
                    parse_rating(rating)
                except AnswerError as err:
                    console.print(f"  [red]{escape(str(err))}[/]")
                    continue
                return session.answer(rating, note=text or None)
        try:
            return session.answer(text, used_hint=used_hint)
        except AnswerError as err:
            console.print(f"  [red]{escape(str(err))}[/] — type ? for a hint")


def _show_feedback(console: Console, session: QuizSession, fb: Feedback) -> None:
    if fb.correct is None:
        rated = {1: "again", 2: "hard", 3: "good", 4: "easy"}.get(fb.rating or 0, "")
        verdict = "[yellow]rated again: it comes back soon[/]" if fb.missed else f"[green]rated {rated}[/]"
    elif fb.correct:
        verdict = "[bold green]✓ right[/]"
    else:
        verdict = "[bold red]✗ not right[/]"
    read = f" [dim](read as {escape(fb.understood)})[/]" if fb.understood and fb.correct is not None else ""
    console.print(f"  {verdict}{read}")
    if fb.correct is False and fb.expected:
        console.print(f"  the answer: {escape(fb.expected)}")
    for choice in fb.choices:
        if choice.picked and choice.why:
            console.print(f"  [magenta]why not “{escape(choice.text)}”:[/] {escape(choice.why)}")
    if fb.explanation:
        console.print(f"  {escape(fb.explanation)}")
    elif fb.missed:
        console.print("  [dim]try again: the explanation comes with the right answer[/]")
    if fb.go_back:
        console.print(
            f"  [bold yellow]missed {fb.misses_in_row} times in a row: re-read “{escape(fb.go_back.title)}”[/]"
            f" [dim](lesson {fb.go_back.lesson}"
            + (f", section {fb.go_back.section})" if fb.go_back.section else ")")
        )
    elif fb.again_later:
        console.print("  [dim]this one comes back later in this sitting[/]")
    if fb.due:
        console.print(f"  [dim]next review {_days(fb.due, session.now())} ({fb.due.date().isoformat()})[/]")


def _show_end(console: Console, session: QuizSession, stopped: bool) -> None:
    score = session.score()
    console.print()
    if stopped:
        console.print(f"Stopped. {score.answered} of {score.total} answered; every answer so far is saved.")
    elif session.mode == "predict":
        console.print("[bold green]All predictions answered: the coding task is open.[/]")
    if score.answered and session.mode != "predict":
        console.print(
            f"[bold]Score: {score.correct}/{score.total} right at the first attempt ({score.percent:.0f}%)[/]"
        )
    for pointer in score.go_back:
        console.print(f"  re-read: “{escape(pointer.title)}” (lesson {pointer.lesson})")
    now = session.now()
    due = session.store.due_reviews(end_of_today(now))
    if due:
        console.print(f"[dim]{len(due)} review(s) due today: python -m tutor quiz --review[/]")


def run_session(session: QuizSession, console: Console, title: str) -> int:
    """Ask until the session is done or input ends; exit code 0 either way."""
    console.print(f"[bold]{escape(title)}[/]")
    if session.finished:
        if session.mode == "predict":
            console.print("All predictions are answered already: the coding task is open.")
        else:
            upcoming = session.store.review_states()
            nxt = f" Next review: {upcoming[0].due.date().isoformat()}." if upcoming else ""
            console.print(f"Nothing to review today.{nxt}")
        return 0
    console.print(
        f"[dim]{len(session.items)} question(s). Type ? for a hint; Ctrl-D stops (answers are saved).[/]"
    )
    number, round_two = 0, False
    try:
        while (item := session.next_question()) is not None:
            number += 0 if session.is_repeat(item) else 1
            if session.mode == "lesson" and session.is_repeat(item) and not round_two:
                round_two = True
                console.print("\n[bold]Once more, the ones you missed (not scored):[/]")
            _show_question(console, session, item, number)
            _show_feedback(console, session, _ask_answer(console, session, item))
    except _Stop:
        _show_end(console, session, stopped=True)
        return 0
    _show_end(console, session, stopped=False)
    return 0
