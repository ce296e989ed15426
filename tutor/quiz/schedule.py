"""Spaced repetition with FSRS (the `fsrs` package, v6), in whole days.

Rules:
- a wrong answer is Again, a right one Good; Hard only for a right answer given after a hint;
  open questions take the learner's own rating (the only way to reach Easy);
- only the first answer of an item on a given (local) day moves its long-term schedule;
- FSRS's minute-scale learning steps are switched off: the quiz session itself re-asks a missed
  item later in the same sitting, and the long-term schedule is kept in days;
- fuzzing is off, so a schedule is reproducible (and testable) from the answers and the clock;
- FSRS's default parameters, or the learner's own once fitted to their reviews (tutor.quiz.fit).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from fsrs import Card, Rating, Scheduler

if TYPE_CHECKING:
    from fsrs.card import CardDict  # what Card.to_dict() made: the card is one, kept as JSON

from tutor.progress.records import ReviewState

SCHEDULER = Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


@cache
def scheduler(parameters: tuple[float, ...] | None = None) -> Scheduler:
    """The scheduler with `parameters` (a learner's fit), else FSRS's defaults; the rules above either way."""
    if parameters is None:
        return SCHEDULER
    return Scheduler(parameters=parameters, learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def rating_for(correct: bool | None, *, used_hint: bool = False, own: int | Rating | None = None) -> Rating:
    """The FSRS rating an answer earns (see the module docstring)."""
    if correct is None:
        if own is None:
            raise ValueError("an open question needs the learner's own rating")
        return Rating(int(own))
    if not correct:
        return Rating.Again
    return Rating.Hard if used_hint else Rating.Good


def review(
    card: Mapping[str, Any] | None, rating: Rating, now: datetime, parameters: tuple[float, ...] | None = None
) -> dict[str, Any]:
    """The card (as a dict) after one review at `now`; `card=None` starts a new one. `parameters`: the
    learner's fitted ones (tutor.quiz.fit.fitted_parameters), else FSRS's defaults."""
    when = now.astimezone(UTC)
    current = (
        Card.from_dict(cast("CardDict", card))
        if card
        else Card(card_id=int(when.timestamp() * 1000), due=when)
    )
    updated, _log = scheduler(parameters).review_card(current, rating, when)
    return dict(updated.to_dict())


def local_day(moment: datetime, like: datetime) -> Any:
    """The calendar date of `moment` in the time zone of `like` (the learner's clock)."""
    return moment.astimezone(like.tzinfo).date()


def counts_today(state: ReviewState | None, now: datetime) -> bool:
    """True if an answer now should move the schedule: the item was not reviewed earlier today."""
    return state is None or state.last_review is None or local_day(state.last_review, now) != now.date()
