"""What the learner is told about a question and an answer, built once for both front ends.

The plain-terminal quiz (tutor.quiz.terminal) and the app's quiz panel (tutor.ui.widgets.quiz_panel)
render the same lines; each line carries a tone, which each front end styles in its own way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, NamedTuple

from tutor.content.schema import OpenQuestion
from tutor.i18n import pick
from tutor.quiz.session import Feedback, Item, QuizSession
from tutor.texts import say
from tutor.wrap import reflow

Tone = Literal["right", "wrong", "rated", "warn", "why", "quiet", "plain"]

# Rich styles per tone (the terminal prints with them; the app has its own markup).
STYLE: dict[Tone, str] = {
    "right": "bold green",
    "wrong": "bold red",
    "rated": "green",
    "warn": "bold yellow",
    "why": "magenta",
    "quiet": "dim",
    "plain": "",
}


class Line(NamedTuple):
    tone: Tone
    text: str  # one paragraph or more, its source line breaks reflowed (tutor.wrap.reflow)


def counter(session: QuizSession, item: Item, lang: str, again: bool | None = None) -> str:
    """'3/6' for a question's first asking, 'again · 3/6' when a missed one comes back. `again`: whether
    it was a repeat when it was asked (once answered, every item is one: a redraw passes what it was)."""
    n, total = session.number(item), len(session.items)
    repeat = session.is_repeat(item) if again is None else again
    return say("quiz.counter_again", lang, n=n, total=total) if repeat else f"{n}/{total}"


def review_when(due: datetime, now: datetime, lang: str) -> str:
    days = (due.date() - now.date()).days
    if days <= 0:
        return say("quiz.today", lang)
    return say("quiz.tomorrow", lang) if days == 1 else say("quiz.in_days", lang, n=days)


def open_answer_lines(question: OpenQuestion, given: str | None, lang: str) -> list[Line]:
    """Before the self-rating: the learner's own answer beside the model answer."""
    model = Line("plain", reflow(say("quiz.model_answer", lang, answer=pick(question.model_answer, lang))))
    return [Line("plain", reflow(say("quiz.your_answer", lang, answer=given))), model] if given else [model]


def _verdict(fb: Feedback, lang: str) -> Line:
    if fb.correct is None:
        rated = say("quiz.rated", lang, rating=say(f"quiz.rating.{fb.rating}", lang))
        return Line("warn" if fb.missed else "rated", rated)
    return Line("right", say("quiz.right", lang)) if fb.correct else Line("wrong", say("quiz.wrong", lang))


def feedback_lines(fb: Feedback, lang: str, now: datetime) -> list[Line]:
    """The verdict, how the answer was read, the right answer and why, what happens next.
    (An open question's own and model answers are `open_answer_lines`, shown before the rating.)"""
    lines = [_verdict(fb, lang)]
    if fb.understood:
        lines.append(Line("quiet", say("quiz.read_as", lang, value=fb.understood)))
    if fb.correct is False:
        lines.append(Line("plain", reflow(say("quiz.the_answer", lang, answer=fb.expected))))
    lines += [
        Line("why", reflow(say("quiz.why_not", lang, choice=c.text, why=c.why)))
        for c in fb.choices
        if c.picked and c.why
    ]
    if fb.explanation:
        lines.append(Line("plain", reflow(fb.explanation)))
    if fb.go_back:
        lines.append(Line("warn", say("quiz.go_back", lang, n=fb.misses_in_row, title=fb.go_back.title)))
    elif fb.again_later:
        lines.append(Line("quiet", say("quiz.comes_back", lang)))
    if fb.due:
        when = review_when(fb.due, now, lang)
        lines.append(Line("quiet", say("quiz.next_review", lang, when=when, date=fb.due.date().isoformat())))
    return lines
