"""Home's next step (tutor.progress.glance): the one most useful thing to do now, in its order of
priority, read from a real progress store; and home's counts agree with `progress`'s."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from fsrs import Rating

from tutor.content.index import Card, Part
from tutor.progress.db import local_now
from tutor.progress.glance import next_step, read_glance, standing, step_text
from tutor.progress.store import Store
from tutor.quiz.schedule import review

CARDS = [
    Card(
        "one",
        {"en": "Heads", "de": "Köpfe", "zh": "多头"},
        {},
        (
            Part("a", {"en": "Split", "de": "Teilen", "zh": "切分"}),
            Part("b", {"en": "Count", "de": "Zählen", "zh": "计数"}),
        ),
        ("q1", "q2"),
        (Part("ex1", {"en": "Split the heads", "de": "Köpfe teilen", "zh": "切分多头"}, "b"),),
    ),
    Card(
        "two",
        {"en": "Positions", "de": "Positionen", "zh": "位置"},
        {},
        (Part("c", {"en": "Order", "de": "Reihenfolge", "zh": "顺序"}),),
        ("q3",),
        (),
    ),
]


def step(home, training=None):
    glance = read_glance(home)
    assert glance is not None
    return next_step(glance, CARDS, local_now(), training)


def test_the_next_step_follows_its_order_of_priority_on_a_real_store(home):
    assert read_glance(home) is not None and not (home / "progress.sqlite3").exists()  # read, not created
    assert step(home).kind == "read" and (step(home).lesson, step(home).section) == ("one", "a")
    with Store(home) as store:
        store.mark_read("one", "a")
        assert (step(home).kind, step(home).section) == ("read", "b")
        # the learner was in lesson two: reading goes on there
        store.set_last_location({"screen": "lesson", "lesson": "two", "section": "c"})
        assert (step(home).lesson, step(home).section) == ("two", "c")
        store.mark_read(
            "one", "b"
        )  # the exercise's section is read, in another lesson: that one's quiz first
        assert (step(home).kind, step(home).lesson) == ("quiz", "one")
        # back in lesson one, its exercise waits
        store.set_last_location({"screen": "lesson", "lesson": "one", "section": "b"})
        assert (step(home).kind, step(home).exercise) == ("exercise", "ex1")
        # a training run going outranks it
        assert step(home, ("two", "train-compare")) == step(home).__class__(
            "training", lesson="two", experiment="train-compare"
        )
        store.record_submission("ex1", sha256="0" * 64, status="fail", score=0, max_score=1)
        assert step(home).kind == "exercise"  # started, not passed: still waiting
        store.record_submission("ex1", sha256="1" * 64, status="pass", score=1, max_score=1)
        # lesson one is read to its end and its quiz never answered
        assert (step(home).kind, step(home).lesson) == ("quiz", "one")
        past = local_now() - timedelta(days=3)
        store.record_answer("one", "q1", "x", False, card=review(None, Rating.Again, past), at=past)
        assert (step(home).kind, step(home).count) == ("review", 1)  # due today: first of all
        assert step(home, ("two", "train-compare")).kind == "review"
        store.record_answer("one", "q1", "y", True, card=review(None, Rating.Good, local_now()))
        store.record_answer("one", "q2", "y", True, card=review(None, Rating.Good, local_now()))
        assert (step(home).kind, step(home).lesson, step(home).section) == ("read", "two", "c")
        store.mark_read("two", "c")
        assert (step(home).kind, step(home).lesson) == ("quiz", "two")
        store.record_answer("two", "q3", "y", True, card=review(None, Rating.Good, local_now()))
        assert step(home).kind == "done"


LONG = [  # lesson one has a code exercise and one graded from training runs (minutes of training)
    dataclasses.replace(
        CARDS[0], exercises=(*CARDS[0].exercises, Part("count", {"en": "Count the heads"}, "a", "runs"))
    ),
    CARDS[1],
    Card(
        "three",
        {"en": "RoPE"},
        {},
        (Part("d", {"en": "Rotate"}),),
        ("q4",),
        (Part("rope", {"en": "Rotate q and k"}, "d"),),
    ),
]


def long_step(home):
    return next_step(read_glance(home), LONG, local_now())


def test_an_exercise_left_unpassed_in_another_lesson_never_holds_the_step(home):
    """The stuck line: head-count opened once, every exercise of lesson three passed, lesson two half
    read and its quiz untouched, and the step still named head-count, for the rest of the course."""
    with Store(home) as store:
        for section in ("a", "b"):
            store.mark_read("one", section)
        for q in ("q1", "q2"):
            store.record_answer("one", q, "y", True, card=review(None, Rating.Good, local_now()))
        store.record_submission("ex1", sha256="1" * 64, status="pass", score=1, max_score=1)
        store.record_submission("count", sha256="2" * 64, status="fail", score=0, max_score=5)  # opened once
        store.mark_read("three", "d")
        store.record_submission("rope", sha256="3" * 64, status="pass", score=1, max_score=1)
        store.set_last_location({"screen": "lab", "lesson": "three", "exercise": "rope"})
        assert (long_step(home).kind, long_step(home).lesson) == ("quiz", "three")
        store.record_answer("three", "q4", "y", True, card=review(None, Rating.Good, local_now()))
        assert (long_step(home).kind, long_step(home).lesson, long_step(home).section) == ("read", "two", "c")
        store.set_last_location({"screen": "lab", "lesson": "one", "exercise": "count"})  # even from its lab
        assert long_step(home).kind == "read"
        store.mark_read("two", "c")
        assert (long_step(home).kind, long_step(home).lesson) == ("quiz", "two")
        store.record_answer("two", "q3", "y", True, card=review(None, Rating.Good, local_now()))
        # nothing else waits: now it is the run exercise's turn
        assert (long_step(home).kind, long_step(home).exercise) == ("exercise", "count")


def test_a_code_exercise_of_the_lesson_the_learner_is_in_comes_before_reading_on(home):
    with Store(home) as store:
        store.mark_read("one", "a")  # the run exercise's section: it waits behind the reading
        store.set_last_location({"screen": "lesson", "lesson": "one", "section": "a"})
        assert (long_step(home).kind, long_step(home).section) == ("read", "b")
        store.mark_read("one", "b")  # the code exercise's section: it comes first
        assert (long_step(home).kind, long_step(home).exercise) == ("exercise", "ex1")


def test_a_new_question_of_a_started_lesson_comes_after_reading(home):
    with Store(home) as store:
        store.mark_read("two", "c")
        store.record_answer("two", "q3", "y", True, card=review(None, Rating.Good, local_now()))
        store.mark_read("one", "a")
        store.mark_read("one", "b")
        store.record_answer("one", "q1", "y", True, card=review(None, Rating.Good, local_now()))
        store.record_submission("ex1", sha256="1" * 64, status="pass", score=1, max_score=1)
    # lesson one is read, q2 never answered: its quiz
    assert (step(home).kind, step(home).lesson) == ("quiz", "one")
    with Store(home) as store:
        store.set_last_location({"lesson": "one"})
    got = standing(read_glance(home), CARDS, local_now())
    assert (got.due, got.new) == (0, 1)
    assert [(r.id, r.sections_read, r.correct, r.exercises_passed) for r in got.rows] == [
        ("one", 2, 1, 1),
        ("two", 1, 1, 0),
    ]


def test_the_step_is_said_in_the_learners_language_with_its_key(home):
    glance = read_glance(home)
    first = next_step(glance, CARDS, local_now())
    assert step_text(first, CARDS, "en") == "Next: read “Split” in Heads · n opens it"
    assert step_text(first, CARDS, "de") == "Als Nächstes: lies „Teilen“ in Köpfe · n öffnet ihn"
    assert step_text(first, CARDS, "zh") == "下一步：读「多头」的「切分」 · 按 n 打开"


def test_a_file_of_another_program_gives_no_glance(home):
    import sqlite3

    with sqlite3.connect(home / "progress.sqlite3") as conn:
        conn.execute("CREATE TABLE other (x)")
    assert read_glance(home) is None
