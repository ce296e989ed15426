"""The quiz in the Textual app, driven with Pilot on a real store: what a learner sees after each
answer, the hint key, resuming, and the same "due", "new" and "right" counts as `progress`."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import timedelta
from pathlib import Path

from conftest import PYTHON, ROOT, run_tutor_env
from fsrs import Rating
from quiz_fixtures import ANSWERS, write_lesson
from textual.widgets import Input, OptionList, Static

from tests.ui_helpers import make_app, plain, settle, store_locked, until
from tutor.progress.summary import summarise
from tutor.quiz.schedule import review
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.quiz import QuizScreen
from tutor.ui.widgets.quiz_panel import QuizPanel

SIZE = (100, 40)
PARTS = ("counter", "prompt", "help", "error", "hint", "feedback")
RIGHT = {qid: right for qid, right, _ in ANSWERS}


def _text(widget) -> str:
    return plain(widget.content)


def shown(quiz: QuizPanel, part: str) -> str:
    """What the panel shows in one part: counter, prompt, help, error, hint or feedback."""
    widget = quiz.query_one(f".q-{part}")
    return " ".join(_text(widget).split()) if widget.display else ""


def number_of(quiz: QuizPanel, *choice_ids: str) -> str:
    """What a learner types to pick these choices: their numbers in the order the panel shows them."""
    ids = [c.id for c in quiz.item.question.choices]
    return ", ".join(str(ids.index(i) + 1) for i in choice_ids)


def key_shown(app, key: str) -> bool:
    return key in app.screen.active_bindings


async def answer(quiz: QuizPanel, given: str | list[str], own_words: str = "my own words") -> None:
    """Answer the question on screen (choices as ids; an open question: own words, then `given`
    as the rating), then move on past the feedback."""
    if quiz.item.question.type == "open":
        await quiz.submit(own_words)
    await quiz.submit(number_of(quiz, *given) if isinstance(given, list) else given)
    await quiz.submit("")


def tiny_app(home: Path, tmp_path: Path):
    return make_app(home, lessons=write_lesson(tmp_path / "lessons"))


async def test_a_wrong_choice_is_explained_at_once_and_no_choice_id_shows(home: Path, tmp_path: Path) -> None:
    app = tiny_app(home, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        assert shown(quiz, "counter") == "1/6"
        assert shown(quiz, "help") == "Type the number of your choice, e.g. 2"  # one choice: one number
        await quiz.submit("7")
        assert shown(quiz, "error") == "'7' is not one of the choices: type a number from 1 to 2"
        await quiz.submit(number_of(quiz, "times8"))
        await pilot.pause()
        feedback = shown(quiz, "feedback")
        for said in (
            "✗ Not quite",
            "The answer: stays the same",
            "Why not “grows 8×”: Heads split d_model",
            "Each head works on a slice; the four matrices stay d×d.",  # the explanation, at once
            "Try it again later: it comes back in this sitting.",
            "Next review tomorrow",
        ):
            assert said in feedback, said
        assert shown(quiz, "error") == ""
        everything = " ".join(_text(quiz.query_one(f".q-{part}")) for part in PARTS)
        assert "times8" not in everything and "same-params" not in everything


async def test_the_app_keeps_going_while_another_writer_holds_the_store(home: Path, tmp_path: Path) -> None:
    """The answer is recorded by the app's writer thread: with the store's lock held elsewhere (up to
    its 5 s busy timeout) the keys still work, and the feedback comes once the lock is free."""
    app = tiny_app(home, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        with store_locked(app):
            quiz.query_one(Input).value = number_of(quiz, "same")
            start = time.monotonic()
            await pilot.press("enter", "f5")
            assert app.lang == "de" and time.monotonic() - start < 2  # the key was not held up
            assert shown(quiz, "feedback") == ""  # waiting for the store
        await until(pilot, lambda: shown(quiz, "feedback") != "")
        assert "✓ Richtig" in shown(quiz, "feedback") and len(app.tutor.store.answers()) == 1


async def test_a_number_is_read_as_a_calculation_and_a_non_number_costs_nothing(
    home: Path, tmp_path: Path
) -> None:
    app = tiny_app(home, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        await answer(quiz, ["same"])  # next: the number question
        assert shown(quiz, "help") == "A number or a calculation such as 2^-8 or 128*128, then Enter"
        box = quiz.query_one(".q-answer", Input)
        box.value = "sixteen"
        await pilot.press("enter")
        assert "'sixteen' is not a number I can read" in shown(quiz, "error")
        assert quiz.state == "asking" and len(app.tutor.store.answers()) == 1
        box.value = "4·256² + 4·256"
        await pilot.press("enter")
        await pilot.pause()
        assert "✓ Right" in shown(quiz, "feedback")
        assert "read your answer as 263,168" in shown(quiz, "feedback")


async def test_the_hint_key_shows_only_with_a_hint_and_the_hint_stays_beside_the_feedback(
    home: Path, tmp_path: Path
) -> None:
    app = tiny_app(home, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        bar = app.screen.query_one("KeyBar")
        assert not key_shown(app, "ctrl+g") and "Hint" not in plain(bar.content)  # q1 has no hint
        await pilot.press("ctrl+g")
        assert shown(quiz, "hint") == "" and not app._notifications
        await answer(quiz, ["same"])
        await pilot.pause()
        assert key_shown(app, "ctrl+g") and "Hint" in plain(bar.content)  # q2 has one
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert shown(quiz, "hint") == "Hint: Four d×d weight matrices and four bias vectors."
        assert not app._notifications  # nothing floats over the feedback
        await quiz.submit("263168")
        await pilot.pause()
        assert shown(quiz, "hint") and "✓ Right" in shown(quiz, "feedback")
        assert not key_shown(app, "ctrl+g")  # answered: nothing left to hint at
        assert [a.used_hint for a in app.tutor.store.answers()] == [False, True]


async def test_an_open_answer_stays_beside_the_model_answer(home: Path, tmp_path: Path) -> None:
    app = tiny_app(home, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        while quiz.item.question.id != "why-heads":
            await answer(quiz, RIGHT[quiz.item.question.id])
        await quiz.submit("each head can look for something else")
        await pilot.pause()
        before = shown(quiz, "feedback")
        assert "Your answer: each head can look for something else" in before
        assert "Model answer: Different heads can specialise" in before
        await quiz.submit("3")
        await pilot.pause()
        after = shown(quiz, "feedback")
        assert after.startswith(before) and "Rated: good" in after and "Next review in 2 days" in after


async def test_a_sitting_resumes_and_a_question_coming_back_is_counted(home: Path, tmp_path: Path) -> None:
    app = tiny_app(home, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        order = [c.id for c in quiz.item.question.choices]
        await answer(quiz, ["times8"])  # q1 missed
        await answer(quiz, RIGHT["param-count"])
        await pilot.press("escape")  # leave at q3
        await pilot.pause()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        assert shown(quiz, "counter") == "3/6" and quiz.item.question.id == "head-shape"
        while not quiz.session.is_repeat(quiz.item):
            await answer(quiz, RIGHT[quiz.item.question.id])
        await pilot.pause()
        assert shown(quiz, "counter") == "again · 1/6"  # it was blank
        assert [c.id for c in quiz.item.question.choices] == order
        await answer(quiz, ["same"])
        await pilot.pause()
        assert quiz.state == "done"
        assert "Done: 5/6 right at the first try" in shown(quiz, "prompt")


async def test_home_review_screen_and_progress_agree_on_due_new_and_right(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    app = make_app(home, lessons=lessons)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        store, course = app.tutor.store, app.tutor.lessons
        assert isinstance(app.screen, HomeScreen)
        assert plain(app.screen.query_one("#home-due", Static).content).strip() == "Nothing due for review"
        store.mark_read("tiny-heads", "split")  # started: its questions are new, not due
        past = store.now() - timedelta(days=3)  # and one was missed three days ago: due today
        card = review(None, Rating.Again, past)
        store.record_answer("tiny-heads", "name", "self attention", False, rating=1, card=card, at=past)
        app.screen.refresh_content()
        await pilot.pause()
        home_line = plain(app.screen.query_one("#home-due", Static).content).strip()
        assert home_line == "1 review due today · 5 new questions to try"
        row = plain(app.screen.query_one("#lessons", OptionList).get_option_at_index(0).prompt)
        assert row.split()[-1] == "1" and "0/6" in row  # due column; "name" was missed: not right
        summary = summarise(store, course)
        assert summary.reviews_due == 1 and summary.lessons[0].quiz.correct == 0
        await pilot.press("r")
        await settle(app)
        assert isinstance(app.screen, QuizScreen)
        title = plain(app.screen.query_one("#quiz-title", Static).content).strip()
        assert title == "Review · 1 due today, 5 new"
        quiz = app.screen.query_one(QuizPanel)
        assert quiz.item.question.id == "name" and len(quiz.session.items) == 6
        await quiz.submit("multi-head attention")
        await pilot.pause()
    result = subprocess.run(
        [PYTHON, "-m", "tutor", "progress", "--json", "--home", str(home), "--lessons", str(lessons)],
        capture_output=True,
        text=True,
        env=run_tutor_env(),
        cwd=ROOT,
        timeout=60,
    )
    progress = json.loads(result.stdout)
    assert progress["reviews_due"] == 0 and progress["lessons"][0]["quiz"]["correct"] == 1


async def test_the_hint_key_is_labelled_in_the_learners_language(home: Path, tmp_path: Path) -> None:
    app = make_app(home, "zh", lessons=write_lesson(tmp_path / "lessons"))
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        await answer(quiz, ["same"])  # to the question with a hint
        await pilot.pause()
        assert "ctrl+g" in app.screen.active_bindings
        assert "^g 提示" in plain(app.screen.query_one("KeyBar").content)
        await pilot.press("f5")  # zh -> en, in place
        await pilot.pause()
        assert "^g Hint" in plain(app.screen.query_one("KeyBar").content)
