"""Quiz sittings on a real SQLite store with an injected clock: scoring, re-asking, FSRS rules,
predictions, the choice order of a sitting, resuming, and what counts as due, new and right."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import run_in_two_threads
from quiz_fixtures import ANSWERS, tiny_lesson

from tutor.progress.quiz_status import is_due, quiz_counts, review_plan
from tutor.progress.store import Store
from tutor.progress.summary import summarise
from tutor.quiz.check import AnswerError
from tutor.quiz.session import Item, QuizSession, predictions_unlocked

RIGHT = {qid: right for qid, right, _ in ANSWERS}
WRONG = {qid: wrong for qid, _, wrong in ANSWERS}


class Clock:
    def __init__(self) -> None:
        self.t = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.t

    def advance(self, **kw) -> None:
        self.t += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(home: Path, clock: Clock) -> Store:
    s = Store(home, now=clock)
    yield s
    s.close()


def one_question(store: Store, lesson, index: int = 0) -> QuizSession:
    """A sitting of just one of the lesson's questions (a whole lesson's sitting would resume)."""
    return QuizSession(store, [Item(lesson, lesson.quiz[index])], mode="lesson")


def sit(session: QuizSession, answers: dict[str, str], **kw) -> list:
    """Answer every question the session asks from `answers`; returns the feedback list."""
    out = []
    while (item := session.next_question()) is not None:
        out.append(session.answer(answers[item.question.id], **kw))
    return out


def test_lesson_straight_through_scores_and_schedules_every_question(store: Store) -> None:
    lesson = tiny_lesson()
    session = QuizSession.for_lesson(store, lesson)
    feedback = sit(session, RIGHT)
    assert [f.question for f in feedback] == [q.id for q in lesson.quiz]
    assert all(f.correct is not False and f.counted for f in feedback)
    assert session.score().correct == session.score().total == 6
    assert len(store.answers("tiny-heads")) == 6
    assert {s.question: s.reviews for s in store.review_states()} == {q.id: 1 for q in lesson.quiz}


def test_missed_question_comes_back_after_the_pass_and_score_counts_first_attempts(store: Store) -> None:
    session = QuizSession.for_lesson(store, tiny_lesson())
    answers = dict(RIGHT, **{"head-shape": WRONG["head-shape"]})
    for _ in range(6):  # the pass
        session.answer(answers[session.next_question().question.id])
    assert session.second_round and not session.finished
    item = session.next_question()  # the missed one, asked again
    assert item is not None and item.question.id == "head-shape"
    fb = session.answer(RIGHT["head-shape"])
    assert fb.correct and not fb.counted  # second answer the same day: schedule untouched
    assert session.next_question() is None
    score = session.score()
    assert (score.correct, score.total, score.missed) == (5, 6, ["head-shape"])
    assert store.review_state("tiny-heads", "head-shape").lapses == 1


def test_wrong_choice_feedback_explains_the_misconception(store: Store) -> None:
    session = QuizSession.for_lesson(store, tiny_lesson())
    session.next_question()
    fb = session.answer(["times8"])
    assert fb.correct is False and fb.rating == 1 and fb.again_later
    assert [c.why for c in fb.choices if c.picked] == [
        "Heads split d_model; they do not add new full-size matrices."
    ]
    assert fb.explanation.startswith("Each head works on a slice")
    assert fb.expected == "stays the same"


def test_ratings_follow_the_rules(store: Store, clock: Clock) -> None:
    lesson = tiny_lesson()
    cases = [
        ("same", False, 3),
        ("same", True, 2),
        ("times8", False, 1),
        ("times8", True, 1),
    ]  # (answer, hint, rating)
    for answer, hint, rating in cases:
        clock.advance(days=30)  # a new day each time, so the answer counts
        session = one_question(store, lesson)
        session.next_question()
        fb = session.answer([answer], used_hint=hint)
        assert (fb.rating, fb.counted) == (rating, True), (answer, hint)


def test_only_the_first_answer_of_a_day_moves_the_schedule(store: Store, clock: Clock) -> None:
    lesson = tiny_lesson()
    first = one_question(store, lesson)
    first.next_question()
    due_after_first = first.answer(["same"]).due
    clock.advance(hours=3)
    again = one_question(store, lesson)
    again.next_question()
    fb = again.answer(["times8"])  # wrong later the same day: recorded, not scheduled
    assert not fb.counted and fb.due is None
    state = store.review_state("tiny-heads", "same-params")
    assert (state.due, state.reviews, state.lapses) == (due_after_first, 1, 0)
    assert [a.counted for a in store.answers("tiny-heads", "same-params")] == [True, False]
    clock.advance(days=1)
    next_day = one_question(store, lesson)
    next_day.next_question()
    assert next_day.answer(["times8"]).counted


def test_again_comes_back_sooner_than_easy(store: Store, clock: Clock) -> None:
    hard_one, easy_one = tiny_lesson("hard-one"), tiny_lesson("easy-one", order=2)
    start = clock()
    for lesson, rating in ((hard_one, "again"), (easy_one, "easy")):
        open_question = [Item(lesson, q) for q in lesson.quiz if q.id == "why-heads"]
        session = QuizSession(store, open_question, mode="lesson")
        session.next_question()
        assert session.answer(rating).counted
    due = {s.lesson: s.due - start for s in store.review_states()}
    assert due == {"hard-one": timedelta(days=1), "easy-one": timedelta(days=8)}

    def due_lessons() -> list[str]:
        return [i.lesson.id for i in QuizSession.for_review(store, [hard_one, easy_one], new_limit=0).items]

    assert due_lessons() == []
    clock.advance(days=1)
    assert due_lessons() == ["hard-one"]
    clock.advance(days=7)
    assert due_lessons() == ["hard-one", "easy-one"]


def test_review_lists_what_is_due_by_date(store: Store, clock: Clock) -> None:
    lesson = tiny_lesson()
    answers = dict(RIGHT, **{"name": WRONG["name"]})
    lesson_session = QuizSession.for_lesson(store, lesson)
    sit(lesson_session, answers)  # "name" missed in the pass, then asked again (and missed again)
    assert [i.question.id for i in QuizSession.for_review(store, [lesson]).items] == []  # nothing due today
    clock.advance(days=1)
    due = [i.question.id for i in QuizSession.for_review(store, [lesson]).items]
    assert due == ["name"]  # "again" -> due in one day; "good" first reviews -> two days
    clock.advance(days=1)
    due = {i.question.id for i in QuizSession.for_review(store, [lesson]).items}
    assert due == {q.id for q in lesson.quiz}


def test_review_reasks_a_miss_a_few_items_later_and_caps_new_items(store: Store, clock: Clock) -> None:
    lesson, unopened = tiny_lesson(), tiny_lesson("never-opened", order=2)
    store.mark_read("tiny-heads", "split")  # the learner has started this lesson only
    session = QuizSession.for_review(store, [lesson, unopened], new_limit=5, requeue_gap=2)
    assert [i.lesson.id for i in session.items] == ["tiny-heads"] * 5
    asked = []
    while (item := session.next_question()) is not None:
        qid = item.question.id
        asked.append(qid)
        session.answer(WRONG[qid] if qid == "same-params" and asked.count(qid) == 1 else RIGHT[qid])
    assert asked == ["same-params", "param-count", "head-shape", "same-params", "which-split", "name"]
    assert session.score().correct == 4


def test_a_question_missed_three_times_sends_the_learner_back_to_its_section(store: Store) -> None:
    session = QuizSession.for_lesson(store, tiny_lesson())
    feedback = sit(session, dict(RIGHT, **{"param-count": WRONG["param-count"]}))
    misses = [f for f in feedback if f.question == "param-count"]
    assert [f.misses_in_row for f in misses] == [1, 2, 3]
    assert [f.again_later for f in misses] == [True, True, False]
    pointer = misses[-1].go_back
    assert (pointer.lesson, pointer.section, pointer.title) == ("tiny-heads", "count", "Counting parameters")
    assert session.score().go_back == [pointer]


def test_a_non_answer_is_refused_and_nothing_is_recorded(store: Store) -> None:
    session = QuizSession.for_lesson(store, tiny_lesson())
    session.next_question()
    with pytest.raises(AnswerError):
        session.answer("9")
    assert store.answers() == []
    assert session.answer(["same"]).correct  # the same question is still current


PREDICT = [
    {
        "id": "view-shape",
        "type": "exact",
        "kind": "shape",
        "prompt": {"en": "What does q.view(1, 5, 4, 8).transpose(1, 2).shape print?"},
        "explanation": {"en": "transpose swaps T and n_head"},
        "answer": "torch.Size([1, 4, 5, 8])",
    },
    {
        "id": "n-heads",
        "type": "number",
        "prompt": {"en": "How many heads?"},
        "explanation": {"en": "dim 1 after the transpose"},
        "answer": 4,
    },
]


def test_predictions_unlock_the_exercise_once_all_are_answered_right(store: Store) -> None:
    lesson = tiny_lesson(predict=PREDICT)
    exercise = lesson.exercises[0]
    assert not predictions_unlocked(store, exercise)
    session = QuizSession.for_predictions(store, lesson, exercise)
    session.next_question()
    first = session.answer("(1, 5, 4, 8)")
    assert first.correct is False and first.again_later  # explained at once, and asked again
    # the right shape as the quiz writes shapes, whatever the author's spelling (torch.Size([1, 4, 5, 8]))
    assert (first.explanation, first.expected) == ("transpose swaps T and n_head", "(1, 4, 5, 8)")
    session.next_question()
    assert session.answer("4").correct
    session.next_question()
    assert session.answer("1 5 4 8").correct is False
    assert not predictions_unlocked(store, exercise)
    session.next_question()
    assert session.answer("1, 4, 5, 8").correct
    assert session.next_question() is None
    assert predictions_unlocked(store, exercise)
    assert store.review_states() == []  # predictions are not scheduled
    assert store.answers() == []  # nor mixed into the quiz answers
    assert len(store.answers(exercise="split-heads", predictions=True)) == 4
    assert QuizSession.for_predictions(store, lesson, exercise).finished


def test_two_stores_answering_the_same_item_at_once_count_it_once(home: Path, clock: Clock) -> None:
    import threading

    lesson = tiny_lesson()
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def learner() -> None:
        try:
            with Store(home, now=clock) as own:  # its own connection, as a second process would have
                start.wait()
                for _ in range(10):
                    session = QuizSession(own, [Item(lesson, lesson.quiz[0])], mode="lesson")
                    session.next_question()
                    session.answer(["same"])
        except BaseException as err:  # surfaced by the assert below
            errors.append(err)

    run_in_two_threads(learner)
    assert errors == []
    with Store(home, now=clock) as store:
        answers = store.answers("tiny-heads", "same-params")
    assert len(answers) == 20 and sum(a.counted for a in answers) == 1


# --- a sitting's choice order and resuming -------------------------------------------------


def _order(item: Item) -> list[str]:
    return [c.id for c in getattr(item.question, "choices", [])]


def test_choices_are_shuffled_per_sitting_and_typed_numbers_follow_the_order_shown(store: Store) -> None:
    lesson = tiny_lesson()
    orders, right_places = set(), set()
    for n in range(1, 13):
        session = QuizSession.for_lesson(store, lesson)
        assert session.session_id == f"lesson:tiny-heads#{n}"
        first = session.next_question()
        order = _order(first)
        orders.add(tuple(order))
        right_places.add(order.index("same") + 1)
        assert session.answer(str(order.index("same") + 1)).correct  # "1" means the first one shown
        sit(session, RIGHT)
    assert right_places == {1, 2}  # the right choice is not always the first
    assert [c.id for c in lesson.quiz[0].choices] == ["same", "times8"]  # the lesson itself is untouched
    assert len(orders) == 2


def test_a_missed_choice_question_comes_back_in_the_order_it_was_shown(store: Store) -> None:
    session = QuizSession.for_lesson(store, tiny_lesson())
    shown = {}
    while (item := session.next_question()) is not None:
        qid = item.question.id
        if qid in shown:
            assert session.is_repeat(item) and _order(item) == shown[qid]
        shown.setdefault(qid, _order(item))
        session.answer(WRONG[qid] if qid == "which-split" and not session.is_repeat(item) else RIGHT[qid])
    assert session.score().missed == ["which-split"]


def test_an_unfinished_lesson_sitting_resumes_at_its_first_unanswered_question(store: Store) -> None:
    lesson = tiny_lesson()
    first = QuizSession.for_lesson(store, lesson)
    order = _order(first.next_question())
    first.answer(WRONG["same-params"])
    first.next_question()
    first.answer(RIGHT["param-count"])
    first.next_question()  # head-shape is on screen when the learner leaves

    resumed = QuizSession.for_lesson(store, lesson)
    assert resumed.session_id == first.session_id and resumed.answered == 2
    asked = [i.question.id for i in [resumed.next_question()]]
    resumed.answer(RIGHT["head-shape"])
    while (item := resumed.next_question()) is not None:
        asked.append(item.question.id)
        if item.question.id == "same-params":
            assert resumed.is_repeat(item) and _order(item) == order  # its second round, same order
        resumed.answer(RIGHT[item.question.id])
    assert asked == ["head-shape", "which-split", "name", "why-heads", "same-params"]
    score = resumed.score()
    assert (score.total, score.answered, score.correct, score.missed) == (6, 6, 5, ["same-params"])
    assert resumed.number(resumed.items[2]) == 3

    fresh = QuizSession.for_lesson(store, lesson)  # that sitting is done: the next one starts anew
    assert fresh.session_id == "lesson:tiny-heads#2" and fresh.answered == 0
    assert fresh.next_question().question.id == "same-params"


def test_sittings_are_numbered_per_scope(store: Store) -> None:
    lesson = tiny_lesson(predict=PREDICT)
    store.mark_read("tiny-heads", "split")
    for n in (1, 2):
        review_sitting = QuizSession.for_review(store, [lesson], new_limit=1)
        assert review_sitting.session_id == f"review#{n}"
        sit(review_sitting, RIGHT)
    predict = QuizSession.for_predictions(store, lesson, lesson.exercises[0])
    assert predict.session_id == "predict:split-heads#1"


# --- due, new and right: one definition (tutor.progress.quiz_status) --------------------------------


def test_due_new_and_right_mean_the_same_in_every_count(store: Store, clock: Clock) -> None:
    lesson, other = tiny_lesson(), tiny_lesson("other", order=2)
    lessons = [lesson, other]
    assert review_plan(store, lessons, clock()) == ([], [])  # nothing started: nothing new either
    store.mark_read("tiny-heads", "split")
    plan = review_plan(store, lessons, clock())
    assert plan.due == [] and len(plan.new) == 6 and {k[0] for k in plan.new} == {"tiny-heads"}
    assert len(review_plan(store, lessons, clock(), new_limit=2).new) == 2

    session = QuizSession.for_lesson(store, lesson)  # same-params missed, right in the second round
    first_try = iter([WRONG["same-params"], RIGHT["same-params"]])
    while (item := session.next_question()) is not None:
        qid = item.question.id
        session.answer(next(first_try) if qid == "same-params" else RIGHT[qid])
    counts = quiz_counts(store, lessons, clock())["tiny-heads"]
    assert (counts.answered, counts.correct, counts.due) == (6, session.score().correct, 0)
    assert summarise(store, lessons).lessons[0].quiz.model_dump() == asdict(counts)
    assert review_plan(store, lessons, clock()) == ([], [])

    clock.advance(days=1)  # "again" is due a day later: due all of that day, new ones none
    plan = review_plan(store, lessons, clock())
    assert plan == ([("tiny-heads", "same-params")], [])
    assert quiz_counts(store, lessons, clock())["tiny-heads"].due == 1
    assert summarise(store, lessons).reviews_due == 1
    review_sitting = QuizSession.for_review(store, lessons)
    assert [i.question.id for i in review_sitting.items] == ["same-params"] and review_sitting.plan == plan
    sit(review_sitting, RIGHT)
    after = quiz_counts(store, lessons, clock())["tiny-heads"]
    assert (after.correct, after.due) == (6, 0)  # right at the first try of its latest sitting


def test_a_second_try_in_the_same_sitting_does_not_make_a_miss_right(store: Store) -> None:
    lesson = tiny_lesson()
    session = QuizSession.for_lesson(store, lesson)
    sit(session, dict(RIGHT, **{"name": WRONG["name"]}))  # missed twice: pass and second round
    assert quiz_counts(store, [lesson], store.now())["tiny-heads"].correct == 5
    retry = QuizSession.for_lesson(store, lesson)
    sit(retry, RIGHT)  # a new sitting the same day, all right at once
    assert quiz_counts(store, [lesson], store.now())["tiny-heads"].correct == 6 == retry.score().correct


def test_due_today_means_before_the_learners_midnight(store: Store, clock: Clock) -> None:
    lesson = tiny_lesson()
    session = one_question(store, lesson)
    session.next_question()
    due = session.answer(WRONG["same-params"]).due  # 09:00 today -> 09:00 tomorrow
    clock.advance(hours=15, minutes=30)  # 00:30 tomorrow
    state = store.review_state("tiny-heads", "same-params")
    assert state.due == due and clock() < due and is_due(state, clock())
    clock.advance(hours=-1)  # 23:30 today
    assert not is_due(state, clock())
