"""Every shipped quiz question accepts its own stated answer as the learner would type it."""

from __future__ import annotations

import pytest
from conftest import ROOT

from tutor.content.loader import load_course
from tutor.content.schema import ExactQuestion, MultipleChoice, NumberQuestion, SingleChoice
from tutor.quiz.check import check_answer
from tutor.quiz.normalise import shape_tokens
from tutor.quiz.numbers import format_number

COURSE = load_course(ROOT / "tutor" / "lessons")
QUESTIONS = [
    pytest.param(lesson, q, id=f"{lesson.id}/{ex.id + '/' if ex else ''}{q.id}")
    for lesson in COURSE.lessons
    for ex, questions in [(None, lesson.quiz), *((e, e.predict) for e in lesson.exercises)]
    for q in questions
]


def test_shipped_lessons_have_quizzes() -> None:
    assert COURSE.lessons and all(len(lesson.quiz) >= 10 for lesson in COURSE.lessons)


@pytest.mark.parametrize(("lesson", "question"), QUESTIONS)
def test_stated_answer_is_accepted_in_every_language(lesson, question) -> None:
    for lang in ("en", "de", "zh"):
        if isinstance(question, SingleChoice | MultipleChoice):
            right = [str(i) for i, c in enumerate(question.choices, 1) if c.correct]
            assert check_answer(question, ", ".join(right), lang).correct is True
            wrong = [c.id for c in question.choices if not c.correct]
            if wrong:
                assert check_answer(question, wrong[:1], lang).correct is False
        elif isinstance(question, NumberQuestion):
            assert check_answer(question, format_number(question.answer), lang).correct is True
        elif isinstance(question, ExactQuestion):
            for accepted in (question.answer, *question.also):
                assert check_answer(question, accepted, lang).correct is True, accepted
            if question.kind == "shape":
                assert shape_tokens(question.answer) is not None
