"""Review statistics as Anki shows them, for the review screen and `python -m tutor progress`: today's
work against the daily cap, how often reviews come back right, the questions by stage, the next seven days'
load, and whether the intervals are fitted to the learner (tutor.quiz.fit).

- **reviewed today**: answers today to questions first answered on an earlier day;
- **retention**: of the answers in the last 30 days to questions seen before that day, the share right
  (Anki's "true retention"; a hint or a second try in a sitting is not a review of its own day);
- **stages**: not seen yet, learning (FSRS's learning or relearning state), young (an interval under 21
  days), mature (21 days or more), as Anki names them;
- **forecast**: questions due on each of the next 7 days, today counting everything overdue.

Plain data, standard library only: the store's reads, the cards' own fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from tutor.progress.quiz_status import is_miss, new_per_day, new_today
from tutor.texts import number, say

if TYPE_CHECKING:
    from tutor.content.schema import Lesson
    from tutor.progress.store import Store

MATURE_DAYS = 21  # Anki's line between a young and a mature card
FORECAST_DAYS = 7
RETENTION_DAYS = 30
FIT_KEY = "fsrs.fit"  # the store's kv entry of the fitted parameters (tutor.quiz.fit)


class ReviewStats(NamedTuple):
    due_today: int
    new_today: int
    new_per_day: int
    reviewed_today: int
    retention: float | None  # None: no review in the last 30 days
    reviews_30d: int
    unseen: int
    learning: int
    young: int
    mature: int
    forecast: tuple[tuple[date, int], ...]
    fit: dict | None  # tutor.quiz.fit's record: parameters, losses, reviews, date

    def as_json(self) -> dict:
        out = self._asdict()
        out["forecast"] = [{"date": d.isoformat(), "due": n} for d, n in self.forecast]
        return out


def review_stats(store: Store, lessons: Sequence[Lesson], now: datetime) -> ReviewStats:
    known = {(lesson.id, q.id) for lesson in lessons for q in lesson.quiz}
    today = now.date()
    answers = store.answers()
    first_day: dict[tuple[str, str], date] = {}
    for a in answers:
        first_day.setdefault((a.lesson, a.question), a.at.astimezone(now.tzinfo).date())
    since = today - timedelta(days=RETENTION_DAYS - 1)
    reviews = right = reviewed_today = 0
    seen_today: set[tuple[tuple[str, str], date]] = set()
    for a in answers:
        key, day = (a.lesson, a.question), a.at.astimezone(now.tzinfo).date()
        if key not in known or day <= first_day[key] or (key, day) in seen_today:
            continue  # a first sight, or a second answer the same day
        seen_today.add((key, day))
        if day >= since:
            reviews += 1
            right += not is_miss(a.correct, a.rating)
        reviewed_today += day == today
    states = [s for s in store.review_states() if (s.lesson, s.question) in known]
    stage = {"learning": 0, "young": 0, "mature": 0}
    load = dict.fromkeys(today + timedelta(days=d) for d in range(FORECAST_DAYS))
    for s in states:
        if int(s.card.get("state", 2)) in (1, 3):
            stage["learning"] += 1
        elif s.last_review is not None and (s.due - s.last_review).days >= MATURE_DAYS:
            stage["mature"] += 1
        else:
            stage["young"] += 1
        day = max(s.due.astimezone(now.tzinfo).date(), today)
        if day in load:
            load[day] = (load[day] or 0) + 1
    fit = store.get_value(FIT_KEY)
    return ReviewStats(
        due_today=load[today] or 0,
        new_today=new_today(store, now),
        new_per_day=new_per_day(store),
        reviewed_today=reviewed_today,
        retention=right / reviews if reviews else None,
        reviews_30d=reviews,
        unseen=len(known - set(first_day)),
        forecast=tuple((d, n or 0) for d, n in load.items()),
        fit=fit if isinstance(fit, dict) else None,
        **stage,
    )


def stats_lines(stats: ReviewStats, lang: str, fit_note: str | None = None) -> list[str]:
    """The statistics in the learner's words, a line each: today, retention and stages, the forecast,
    the intervals (`fit_note`: what tutor.quiz.fit says about fitting them, else the fit on record)."""
    days = [
        say(
            "quiz.stats.day",
            lang,
            day=say("quiz.today", lang) if i == 0 else say(f"quiz.weekday.{d.weekday()}", lang),
            n=n,
        )
        for i, (d, n) in enumerate(stats.forecast)
    ]
    retention = (
        say(
            "quiz.stats.retention",
            lang,
            percent=number(round(100 * stats.retention), lang),
            n=stats.reviews_30d,
        )
        if stats.retention is not None
        else say("quiz.stats.no_retention", lang)
    )
    lines = [
        say(
            "quiz.stats.today",
            lang,
            reviewed=stats.reviewed_today,
            new=stats.new_today,
            cap=stats.new_per_day,
        ),
        retention,
        say(
            "quiz.stats.stages",
            lang,
            unseen=stats.unseen,
            learning=stats.learning,
            young=stats.young,
            mature=stats.mature,
        ),
        say("quiz.stats.forecast", lang, days=" · ".join(days)),
    ]
    if fit_note is not None:
        lines.append(fit_note)
    elif stats.fit is not None:
        lines.append(fit_text(stats.fit, lang))
    return lines


def fit_text(fit: dict, lang: str) -> str:
    """A fit on record, in words: how many reviews, when, and its gain (log loss before → after)."""
    before, after = float(fit.get("loss_before", 0)), float(fit.get("loss_after", 0))
    key = "quiz.stats.fitted" if fit.get("used") else "quiz.stats.fitted_unused"
    return say(
        key,
        lang,
        n=int(fit.get("reviews", 0)),
        date=str(fit.get("date", "")),
        before=number(before, lang, decimals=3),
        after=number(after, lang, decimals=3),
    )
