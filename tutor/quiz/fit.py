"""FSRS parameters fitted to the learner's own reviews (Anki's "optimize"), with fsrs's optimiser.

The optimiser is the optional extra `fsrs[optimizer]` (torch, pandas, tqdm; docs/learner.md); without it the
scheduler keeps FSRS's defaults and `python -m tutor progress --fit` says how to get it. A fit needs
MIN_REVIEWS reviews the optimiser learns from (answers on a later day than the question's last one); it is
judged by the log loss of the recall it predicts on those same reviews, before (defaults) and after, and
kept in the store (FIT_KEY) with both; the scheduler uses it only where it predicts better (`used`).

    result = fit(store)            # raises TutorError: too few reviews, or no optimiser
    params = fitted_parameters(store)   # None: FSRS's defaults
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from datetime import UTC
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from tutor.errors import TutorError
from tutor.progress.review_stats import FIT_KEY

if TYPE_CHECKING:
    from fsrs import ReviewLog

    from tutor.progress.store import Store

MIN_REVIEWS = 512  # fsrs's optimiser keeps its defaults below one mini-batch of reviews


def review_logs(store: Store) -> list[ReviewLog]:
    """Every answer that moved a question's schedule, as fsrs ReviewLogs (a card per question)."""
    from fsrs import Rating, ReviewLog

    return [
        ReviewLog(
            card_id=zlib.crc32(f"{a.lesson}/{a.question}".encode()),
            rating=Rating(int(a.rating)),
            review_datetime=a.at.astimezone(UTC),
            review_duration=None,
        )
        for a in store.answers()
        if a.counted and a.rating is not None
    ]


def _by_card(logs: Sequence[ReviewLog]) -> list[list[ReviewLog]]:
    cards: dict[int, list[ReviewLog]] = {}
    for log in sorted(logs, key=lambda r: r.review_datetime):
        cards.setdefault(log.card_id, []).append(log)
    return list(cards.values())


def learnable(logs: Sequence[ReviewLog]) -> int:
    """The reviews the optimiser learns from: those on a later day than the card's review before."""
    return sum(
        (b.review_datetime - a.review_datetime).days > 0 for card in _by_card(logs) for a, b in pairwise(card)
    )


def log_loss(logs: Sequence[ReviewLog], parameters: Sequence[float] | None = None) -> float:
    """Mean log loss of the recall FSRS predicts (with `parameters`, else its defaults) at each learnable
    review: the smaller, the better the intervals fit this learner."""
    from fsrs import Card, Rating, Scheduler

    kw: dict[str, Any] = {"parameters": tuple(parameters)} if parameters is not None else {}
    scheduler = Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False, **kw)
    total, n = 0.0, 0
    for card_logs in _by_card(logs):
        card = Card(card_id=card_logs[0].card_id, due=card_logs[0].review_datetime)
        for log in card_logs:
            if card.last_review is not None and (log.review_datetime - card.last_review).days > 0:
                p = min(max(scheduler.get_card_retrievability(card, log.review_datetime), 1e-6), 1 - 1e-6)
                recalled = log.rating != Rating.Again
                total -= math.log(p if recalled else 1 - p)
                n += 1
            card, _ = scheduler.review_card(card, log.rating, log.review_datetime)
    return total / n if n else float("nan")


def fit(store: Store, lang: str = "en") -> dict:
    """Fit the parameters to the store's reviews, keep the result there, and return it."""
    logs = review_logs(store)
    n = learnable(logs)
    if n < MIN_REVIEWS:
        raise TutorError("progress.fit.too_few", n=n, need=MIN_REVIEWS)
    try:
        from fsrs import Optimizer

        parameters = [float(p) for p in Optimizer(logs).compute_optimal_parameters()]
    except ImportError:
        raise TutorError("progress.fit.no_optimizer") from None
    before, after = log_loss(logs), log_loss(logs, parameters)
    result = {
        "parameters": parameters,
        "loss_before": before,
        "loss_after": after,
        "reviews": n,
        "date": store.now().date().isoformat(),
        "used": after < before,  # never intervals that predict this learner worse than the defaults
    }
    store.set_value(FIT_KEY, result)
    return result


def fitted_parameters(store: Store) -> tuple[float, ...] | None:
    """The parameters the scheduler uses for this learner: a fit that predicts better, else None."""
    kept = store.get_value(FIT_KEY)
    if isinstance(kept, dict) and kept.get("used") and isinstance(kept.get("parameters"), list):
        return tuple(float(p) for p in kept["parameters"])
    return None


def fit_note(store: Store, lang: str) -> str:
    """What the review screen and `progress` say about the intervals: the fit kept, or how far from one."""
    from tutor.progress.review_stats import fit_text
    from tutor.texts import say

    kept = store.get_value(FIT_KEY)
    if isinstance(kept, dict):
        return fit_text(kept, lang)
    n = learnable(review_logs(store))
    if n < MIN_REVIEWS:
        return say("quiz.stats.fit_later", lang, n=MIN_REVIEWS - n)
    return say("quiz.stats.fit_ready", lang, n=n)
