"""Reviews like Anki's (issue 31): a daily cap on new questions (a setting), reviews before new ones,
statistics and a 7-day forecast (quiz screen, `progress`), FSRS fitted to the learner's own history."""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from fsrs import Rating

from tests.conftest import tutor_here
from tests.ui_helpers import make_app, until
from tutor.course import open_course
from tutor.progress.db import local_now
from tutor.progress.quiz_status import NEW_PER_DAY_KEY, review_plan
from tutor.progress.review_stats import review_stats
from tutor.progress.store import Store
from tutor.quiz.schedule import review
from tutor.quiz.session import QuizSession
from tutor.settings import shipped_lessons_dir

COURSE = open_course(shipped_lessons_dir())
KEYS = [(lesson.id, q.id) for lesson in COURSE.lessons for q in lesson.quiz]


def _answer(store, key, correct, at, rating=None, parameters=None):
    rating = rating or (Rating.Good if correct else Rating.Again)

    def schedule(state):
        if (
            state is not None
            and state.last_review
            and state.last_review.astimezone(at.tzinfo).date() == at.date()
        ):
            return None
        return review(state.card if state else None, rating, at, parameters)

    store.record_answer(
        *key, "x", correct, rating=int(rating), session=f"s{at.date()}", schedule=schedule, at=at
    )


def test_a_review_asks_new_questions_up_to_the_days_allowance_and_the_cap_is_a_setting(home):
    now = local_now()
    with Store(home) as store:
        for key in KEYS[:3]:  # yesterday's first answers do not count against today
            _answer(store, key, True, now - timedelta(days=1))
        for key in KEYS[3:11]:  # eight seen first today, in the lesson's quiz
            _answer(store, key, True, now)
        assert len(review_plan(store, COURSE.lessons, now).new) == 2  # 10 a day by default
        store.set_value(NEW_PER_DAY_KEY, 15)
        assert len(review_plan(store, COURSE.lessons, now).new) == 6  # all that lesson 1 has left
        store.set_value(NEW_PER_DAY_KEY, 5)
        assert review_plan(store, COURSE.lessons, now).new == []
        assert len(review_plan(store, COURSE.lessons, now, new_limit=4).new) == 4  # quiz --review --new 4


def test_a_missed_review_comes_back_before_the_new_questions(home):
    now = local_now()
    with Store(home) as store:
        for key in KEYS[:2]:
            _answer(store, key, True, now - timedelta(days=30))
        session = QuizSession.for_review(store, COURSE.lessons, now=lambda: now, lang="en")
        assert len(session.plan.due) == 2 and len(session.plan.new) > 3
        first = session.next_question()
        from tests.ui_helpers import wrong_answer

        question = first.question
        wrong = "(9, 9)" if getattr(question, "kind", "") == "shape" else wrong_answer(question)
        session.answer("again" if question.type == "open" else wrong)
        asked = [session.next_question() for _ in range(2)]
        keys = [(i.lesson.id, i.question.id) for i in asked]
        assert keys[1] == (first.lesson.id, first.question.id)  # after the other review, before any new one
        assert keys[0] in session.plan.due


def test_the_statistics_count_today_retention_stages_and_the_next_seven_days(home):
    now = local_now()
    with Store(home) as store:
        for key in KEYS[:6]:
            _answer(store, key, True, now - timedelta(days=10))
        for key in KEYS[:4]:  # reviews on a later day: three right, one missed
            _answer(store, key, key != KEYS[0], now - timedelta(days=2))
        _answer(store, KEYS[10], True, now)  # a new one today
        stats = review_stats(store, COURSE.lessons, now)
        assert stats.retention == pytest.approx(0.75) and stats.reviews_30d == 4
        assert stats.new_today == 1 and stats.reviewed_today == 0
        assert stats.unseen == len(KEYS) - 7 and stats.learning + stats.young + stats.mature == 7
        assert len(stats.forecast) == 7 and stats.forecast[0][0] == now.date()
        due_this_week = sum(
            now.date()
            <= max(s.due.astimezone(now.tzinfo).date(), now.date())
            < now.date() + timedelta(days=7)
            for s in store.review_states()
        )
        assert sum(n for _, n in stats.forecast) == due_this_week


@pytest.mark.parametrize(
    ("lang", "due", "intervals"),
    [
        ("en", "Due: today", "Intervals: FSRS's defaults"),
        ("de", "Fällig: heute", "Abstände: Standardwerte"),
        ("zh", "到期：今天", "间隔：FSRS 的默认参数"),
    ],
)
def test_progress_shows_the_review_statistics_and_forecast(home, lang, due, intervals):
    now = local_now()
    with Store(home) as store:
        _answer(store, KEYS[0], True, now - timedelta(days=3))
    out = " ".join(tutor_here("progress", "--lang", lang, home=home).stdout.split())
    assert due in out and intervals in out
    data = json.loads(tutor_here("progress", "--json", home=home).stdout)
    assert [d["date"] for d in data["reviews"]["forecast"]][0] == now.date().isoformat()
    assert len(data["reviews"]["forecast"]) == 7 and data["reviews"]["new_per_day"] == 10
    assert tutor_here("progress", "--new-per-day", "20", home=home).returncode == 0
    assert json.loads(tutor_here("progress", "--json", home=home).stdout)["reviews"]["new_per_day"] == 20


def _history(store, days: int = 90) -> None:
    """A learner's reviews over `days` days: each due question answered, right with a chance that falls
    with the time since it was last seen (a forgetting curve), as FSRS schedules them."""
    rng = random.Random(7)
    start = local_now() - timedelta(days=days)
    for day in range(days):
        now = start + timedelta(days=day)
        states = {(s.lesson, s.question): s for s in store.review_states()}
        for key in KEYS[:24]:
            state = states.get(key)
            if state is None and day % 3:
                continue  # new questions come in a few at a time
            if state is not None and state.due > now:
                continue
            gap = (now - state.last_review).days if state is not None and state.last_review else 0
            _answer(store, key, rng.random() < 0.97**gap, now)


def test_the_fit_waits_for_enough_reviews_and_says_how_many_are_missing(home):
    from tutor.quiz.fit import MIN_REVIEWS, fitted_parameters, learnable, log_loss, review_logs

    with Store(home) as store:
        _history(store, 40)
        n = learnable(review_logs(store))
        assert 0 < n < MIN_REVIEWS and log_loss(review_logs(store)) > 0
        assert fitted_parameters(store) is None
    out = tutor_here("progress", "--fit", home=home)
    assert out.returncode == 1 and f"{n} on a later day" in out.stderr
    shown = " ".join(tutor_here("progress", home=home).stdout.split())
    assert f"{MIN_REVIEWS - n} more reviews" in shown


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
async def test_the_review_screen_shows_the_statistics_and_the_forecast(home, lang):
    from tutor.texts import say

    now = local_now()
    with Store(home) as store:
        _answer(store, KEYS[0], True, now - timedelta(days=30))
    app = make_app(home, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_quiz(None)
        await until(pilot, lambda: bool(app.screen.query("#quiz-stats")))
        from tests.ui_helpers import drawn_text

        text = drawn_text(app.screen.query_one("#quiz-stats"))
        day = say("quiz.stats.day", lang, day=say("quiz.today", lang), n=1)
        assert " ".join(say("quiz.stats.forecast", lang, days=day).split()) in text
        assert say("quiz.stats.today", lang, reviewed=0, new=0, cap=10) in text


async def test_the_review_statistics_follow_each_answer_of_the_sitting(home):
    """Today's work under a review moves with every answer, not only on the Done screen."""
    from tests.ui_helpers import drawn_text
    from tutor.texts import say
    from tutor.ui.widgets.quiz_panel import QuizPanel

    now = local_now()
    single = [(lesson.id, q.id) for lesson in COURSE.lessons for q in lesson.quiz if q.type == "single"]
    with Store(home) as store:
        for key in single[:2]:
            _answer(store, key, True, now - timedelta(days=30))
    app = make_app(home, "en")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_quiz(None)
        await until(
            pilot, lambda: bool(app.screen.query("#quiz-stats")) and bool(app.screen.query(QuizPanel))
        )
        quiz = app.screen.query_one(QuizPanel)
        await until(pilot, lambda: quiz.item is not None)

        def today() -> tuple[int, str]:
            stats = review_stats(app.tutor.store, app.tutor.lessons, app.tutor.store.now())
            said = say(
                "quiz.stats.today",
                "en",
                reviewed=stats.reviewed_today,
                new=stats.new_today,
                cap=stats.new_per_day,
            )
            return stats.reviewed_today + stats.new_today, said

        def shown() -> str:
            return " ".join(drawn_text(app.screen.query_one("#quiz-stats")).split())

        assert today()[0] == 0 and today()[1] in shown()
        for n in (1, 2):
            assert quiz.item is not None and quiz.item.question.type == "single"  # the due ones come first
            await quiz.submit("1")
            await until(pilot, lambda: quiz.state == "feedback")
            await until(pilot, lambda: today()[1] in shown())
            assert today()[0] == n
            await quiz.submit("")
