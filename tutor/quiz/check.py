"""Checking one answer against one question: right or wrong, what we read, and why.

Pure functions over the content schema; no store, no clock. `AnswerError` means the input could
not be taken as an answer at all (empty, a choice that does not exist, a number question answered
with something that is not a number, a shape question with something that is not a shape): the
caller asks again and nothing is recorded. Anything else that is not right is simply wrong.
Choices are typed as their numbers in the order shown; their ids are internal and never asked for.
"""

from __future__ import annotations

import re
from typing import Literal, cast

from fsrs import Rating
from pydantic import BaseModel, ConfigDict

from tutor.content.schema import (
    ExactQuestion,
    MultipleChoice,
    NumberQuestion,
    OpenQuestion,
    Question,
    SingleChoice,
)
from tutor.errors import TutorError
from tutor.i18n import pick
from tutor.quiz.normalise import fold, format_shape, is_integer_shape, shape_tokens, text_matches
from tutor.quiz.numbers import format_number, number_matches, number_readings
from tutor.texts import typed


class AnswerError(TutorError, ValueError):
    """The input is not an answer to this question (say why, ask again; record nothing): a key of
    tutor.texts and its values, worded by `err.in_lang(lang)` (`str(err)` is English)."""


class ChoiceFeedback(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    correct: bool  # this choice is one of the right ones
    picked: bool
    why: str | None = None  # the misconception behind this choice, shown when a wrong one was picked


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)

    correct: bool | None  # None: an open question, the learner rates themselves
    answer_text: str  # what to record: the typed text, or the picked choice ids
    understood: str | None = None  # how we read it ("262,656", "(1, 4, 5, 8)"), when that helps
    expected: str  # the right answer for display (the model answer for open questions)
    choices: list[ChoiceFeedback] = []
    rating: Literal[1, 2, 3, 4] | None = None  # the learner's own rating (open questions)


def answer_kind(question: Question) -> str:
    """What the learner types for `question`: "single", "multiple", "number", "shape", "text" or "open"
    (the prompt and help texts, quiz.prompt.* and quiz.help.*, are per kind)."""
    if isinstance(question, ExactQuestion):
        return question.kind
    return question.type


def parse_choice_ids(question: SingleChoice | MultipleChoice, response: str | list[str]) -> list[str]:
    """Choice ids from typed numbers ("2", "1, 3", "3，1": 1-based, in the order the choices are
    shown) or from a list of ids (a caller that already knows them)."""
    ids = [c.id for c in question.choices]
    if isinstance(response, list):
        tokens = [t.strip().casefold() for t in response if t.strip()]
        unknown = [t for t in tokens if t not in ids]
    else:
        numbers = [t for t in re.split(r"[\s,;/]+", fold(response)) if t]
        unknown = [t for t in numbers if not (t.isdigit() and 1 <= int(t) <= len(ids))]
        tokens = [] if unknown else [ids[int(t) - 1] for t in numbers]
    if unknown:
        raise AnswerError("quiz.err.no_such_choice", token=unknown[0], n=len(ids))
    if not tokens:
        raise AnswerError("quiz.err.pick_one" if question.type == "single" else "quiz.err.pick_some")
    picked = list(dict.fromkeys(tokens))
    if question.type == "single" and len(picked) > 1:
        raise AnswerError("quiz.err.only_one")
    return picked


def parse_rating(response: str | int | Rating) -> Rating:
    if isinstance(response, Rating):
        return response
    word = fold(str(response)).casefold()
    for rating in Rating:  # its accepted spellings in every language: the catalogue's `typed` words
        if word in typed(f"typed.{rating.name.lower()}"):
            return rating
    raise AnswerError("quiz.err.rating")


def expected_text(question: Question, lang: str) -> str:
    """The right answer as the learner should see it."""
    if isinstance(question, SingleChoice | MultipleChoice):
        return "; ".join(pick(c.text, lang) for c in question.choices if c.correct)
    if isinstance(question, NumberQuestion):
        text = format_number(question.answer, lang)
        allowed = max(question.tolerance, question.rel_tolerance * abs(question.answer))
        if allowed:
            text += f" ± {format_number(allowed, lang)}"
        unit = pick(question.unit, lang)
        return f"{text} {unit}" if unit else text
    if isinstance(question, ExactQuestion):
        shape = shape_tokens(question.answer) if question.kind == "shape" else None
        return format_shape(shape) if shape else question.answer  # as the quiz writes shapes: (1, 4, 5, 5)
    return pick(question.model_answer, lang)


def check_answer(question: Question, response: str | list[str] | int | Rating, lang: str = "en") -> Check:
    """Check `response` (typed text, choice ids, or for open questions the self-rating)."""
    expected = expected_text(question, lang)
    if isinstance(question, SingleChoice | MultipleChoice):
        picked = parse_choice_ids(question, response if isinstance(response, list) else str(response))
        right = {c.id for c in question.choices if c.correct}
        feedback = [
            ChoiceFeedback(
                id=c.id,
                text=pick(c.text, lang),
                correct=c.correct,
                picked=c.id in picked,
                why=pick(c.why, lang) or None if (c.id in picked and not c.correct) else None,
            )
            for c in question.choices
        ]
        return Check(
            correct=set(picked) == right, answer_text=",".join(picked), expected=expected, choices=feedback
        )
    if isinstance(question, OpenQuestion):
        rating = parse_rating(response if not isinstance(response, list) else " ".join(response))
        return Check(
            correct=None,
            answer_text=rating.name.lower(),
            expected=expected,
            rating=cast(Literal[1, 2, 3, 4], int(rating)),
        )
    text = str(response).strip()
    if not text:
        raise AnswerError("quiz.err.empty")
    if isinstance(question, NumberQuestion):
        units = list(question.unit.values()) if question.unit else []
        readings = number_readings(text, units)
        if not readings:
            raise AnswerError("quiz.err.not_a_number", token=text)
        hits = [
            r
            for r in readings
            if number_matches(r, question.answer, question.tolerance, question.rel_tolerance)
        ]
        shown = format_number((hits or readings)[0], lang)
        return Check(correct=bool(hits), answer_text=text, understood=shown, expected=expected)
    assert isinstance(question, ExactQuestion)
    accepted = [question.answer, *question.also]
    if question.kind == "shape":
        mine = shape_tokens(text)
        numeric = all(is_integer_shape(shape_tokens(a) or ()) for a in accepted)
        if mine is None or (numeric and not is_integer_shape(mine)):
            raise AnswerError("quiz.err.not_a_shape", token=text)
        ok = any(shape_tokens(a) == mine for a in accepted)
        return Check(correct=ok, answer_text=text, understood=format_shape(mine), expected=expected)
    ok = any(text_matches(text, a) for a in accepted)
    return Check(correct=ok, answer_text=text, expected=expected)
