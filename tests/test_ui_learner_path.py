"""A new learner's path through the app, driven with Textual's Pilot on the real course, model,
store and grader (tmp --home): lesson 2's permutation experiment, a quiz, the rope exercise."""

from __future__ import annotations

import shutil

from textual.widgets import Input, OptionList, Static

from tests.ui_helpers import (
    lesson_laid_out,
    make_app,
    opened_at,
    plain,
    right_answer,
    settle,
    until,
    wrong_answer,
)
from tutor.content.schema import OpenQuestion
from tutor.ui.screens.exercise import ExerciseScreen
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.screens.quiz import QuizScreen
from tutor.ui.widgets.experiment_panel import ExperimentPanel
from tutor.ui.widgets.quiz_panel import QuizPanel


async def test_home_lists_the_lessons_and_continue_returns_to_the_last_section(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        table = app.screen.query_one("#lessons", OptionList)
        shown = [table.get_option_at_index(i).id for i in range(table.option_count)]
        assert shown == [x.id for x in app.tutor.lessons]
        assert len(app.tutor.lessons) >= 3
        target = app.tutor.lesson("positions").sections[2].id
        await app.open_lesson("positions", section=target)
        await until(pilot, lambda: lesson_laid_out(app) and app.screen.current_section == target)
        where = app.screen.current_section
        assert where is not None and where != app.tutor.lesson("positions").sections[0].id
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("c")
        await settle(app)
        await pilot.pause()
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson_id == "positions"
        assert app.tutor.store.last_location()["section"] == where


async def test_permutation_shows_the_one_layer_no_position_gap_as_zero(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions", experiment="permutation")
        await until(pilot, lambda: opened_at(app, "permutation"))
        panel = app.screen.panel_in_view()
        assert isinstance(panel, ExperimentPanel) and panel.ref.name == "permutation"
        await pilot.press("r")
        await settle(app)
        await pilot.pause()
        assert panel.last_error is None, panel.last_error
        assert abs(panel.result.metrics["gap_L1_nopos"]) < 1e-5
        assert panel.result.metrics["gap_L2_nopos"] > 1e-3  # order shows from layer 2 on
        shown = plain(panel.query_one(".metrics", Static).content)
        row = next(line for line in shown.splitlines() if "logit gap, 1-layer model, no positions" in line)
        assert "≈ 0" in row and "gap_L1_nopos" not in shown  # a label for the learner, the name in --json
        # the section has been on screen for under READ_AFTER_S: not read yet (tests/test_ui_reading.py)
        read = {r.section for r in app.tutor.store.sections_read("positions")}
        assert app.screen.current_section not in read


async def test_quiz_records_a_right_and_a_wrong_answer_with_feedback(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("positions")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        quiz = app.screen.query_one(QuizPanel)
        box = quiz.query_one(".q-answer", Input)
        assert box.has_focus
        asked = []
        while len(asked) < 2:  # open questions first get the learner's text, then a self-rating
            q = quiz.session.current.question
            if isinstance(q, OpenQuestion):
                box.value = "the order of the characters"
                await pilot.press("enter")
                assert "Model answer" in plain(quiz.query_one(".q-feedback", Static).content)
                box.value = "3"
                shown = quiz.last_feedback
                await pilot.press("enter")
                await until(
                    pilot, lambda shown=shown: quiz.last_feedback is not shown
                )  # once the store has the rating
                assert quiz.last_feedback.correct is None and quiz.last_feedback.rating == 3
            else:
                box.value = right_answer(q) if not asked else wrong_answer(q)
                shown = quiz.last_feedback
                await pilot.press("enter")
                await until(
                    pilot, lambda shown=shown: quiz.last_feedback is not shown
                )  # once the store has the answer
                asked.append((q.id, quiz.last_feedback.correct))
                feedback = " ".join(plain(quiz.query_one(".q-feedback", Static).content).split())
                assert ("Right" if len(asked) == 1 else "Not quite") in feedback
                assert " ".join(quiz.last_feedback.explanation.split())[:20] in feedback
            await pilot.press("enter")  # next question
        assert [x[1] for x in asked] == [True, False]
        recorded = [
            (a.question, a.correct) for a in app.tutor.store.answers("positions") if a.correct is not None
        ]
        assert recorded == asked


async def test_rope_exercise_starter_fails_with_hints_and_reference_passes(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_exercise("rope")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExerciseScreen) and not screen.unlocked
        await pilot.press("g")  # locked until the predictions are answered
        assert not any(w.group == "grade" for w in screen.workers)
        quiz = screen.query_one(QuizPanel)
        while quiz.state != "done":
            await quiz.submit(right_answer(quiz.session.current.question))
            await quiz.submit("")
            await pilot.pause()
        assert screen.unlocked
        assert screen.file.read_bytes() == (app.tutor.exercise("rope")[1].folder / "starter.py").read_bytes()
        await pilot.press("g")
        await settle(app)
        await pilot.pause()
        assert screen.result.status in ("fail", "error")
        failed = [c for c in screen.result.checks if c.status != "pass"]
        assert failed and all(c.hint for c in failed)
        checks_text = plain(screen.query_one("#ex-checks", Static).content)
        assert "💡" not in checks_text  # the fix comes from the hints, one at a time (tests/test_ui_lab.py)
        await pilot.press("h")
        assert screen.hints_shown == 1
        shutil.copyfile(app.tutor.exercise("rope")[1].folder / "solution.py", screen.file)
        await pilot.press("g")
        await settle(app)
        await pilot.pause()
        assert screen.result.status == "pass", [(c.name, c.message) for c in screen.result.checks]
        assert screen.result.score == screen.result.max_score
        assert [s.status for s in app.tutor.store.submissions("rope")] == ["fail", "pass"] or [
            s.status for s in app.tutor.store.submissions("rope")
        ] == ["error", "pass"]
