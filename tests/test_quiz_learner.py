"""Words and kinds in the quiz (issue 31): a shape's right answer written as the quiz writes shapes, a
count asked as a number, the counter of a question kept as it was asked when the language changes."""

from __future__ import annotations

import pytest

from tests.ui_helpers import make_app, right_answer, wrong_answer
from tutor.content.schema import NumberQuestion
from tutor.course import open_course
from tutor.quiz.check import check_answer
from tutor.settings import shipped_lessons_dir
from tutor.texts import say

LANGS = ["en", "de", "zh"]


def _predict(exercise: str, question: str):
    ex = open_course(shipped_lessons_dir()).exercise(exercise)
    return next(q for q in ex.predict if q.id == question)


@pytest.mark.parametrize("lang", LANGS)
def test_a_missed_shape_shows_its_answer_as_the_quiz_writes_shapes(lang):
    question = _predict("split-heads", "score-shape")
    check = check_answer(question, "1, 4, 5, 8", lang)
    assert not check.correct
    assert check.expected == "(1, 4, 5, 5)"  # the file says "1, 4, 5, 5"; the explanation "(1, 4, 5, 5)"
    assert say("quiz.the_answer", lang, answer=check.expected).endswith("(1, 4, 5, 5)")


@pytest.mark.parametrize("lang", LANGS)
def test_how_many_frequencies_is_asked_as_a_number_not_a_shape(lang):
    question = _predict("rope", "theta-count")
    assert isinstance(question, NumberQuestion)
    check = check_answer(question, "16", lang)
    assert check.correct and "(16,)" not in (check.understood or "") and check.expected == "16"


@pytest.mark.parametrize("lang", LANGS)
async def test_the_counter_of_an_answered_question_stays_as_it_was_asked_after_f5(home, lang):
    from tutor.ui.widgets.quiz_panel import QuizPanel

    app = make_app(home, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("multi-head")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        counter = quiz.query_one(".q-counter")

        async def answer(right: bool) -> None:
            question = quiz.session.current.question
            if question.type == "open":
                await quiz.submit("my own words")
                await quiz.submit("good" if right else "again")
            else:
                await quiz.submit(right_answer(question) if right else wrong_answer(question))
            await pilot.pause()

        await answer(True)
        assert quiz.state == "feedback" and str(counter.content) == "1/17"
        await pilot.press("f5")  # the feedback in the next language: the counter is still the first asking
        await pilot.pause()
        assert str(counter.content) == "1/17", counter.content
        await quiz.submit("")  # on to question 2, answered wrong: it comes back again at the end
        await pilot.pause()
        await answer(False)
        await pilot.press("f5")
        await pilot.pause()
        assert str(counter.content) == "2/17"
