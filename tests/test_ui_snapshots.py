"""Snapshots (pytest-textual-snapshot) of the main screens at 80×24, in English and Chinese (German
too where its text runs differently): home, a lesson's running text, a lesson with per-head
attention heatmaps, a quiz question, and an exercise's grade result.

Update after an intended change: `pytest tests/test_ui_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Input

from tests.ui_helpers import aim_over, make_app, open_experiment, right_answer, settle
from tutor.ui.widgets.quiz_panel import QuizPanel

SIZE = (80, 24)
# German in the slow run only where en and zh prove the screen's layout and German's own numbers and words are
# tested beside it (test_charts' German table, test_texts, home's German header in test_ui_navigation, the
# German quiz in test_ui_edges); its running text keeps a default snapshot
DE_SLOW = pytest.param("de", marks=pytest.mark.slow)


@pytest.fixture(autouse=True)
def _snapshots_in_tests_snapshots(monkeypatch):
    """Keep the SVGs in tests/snapshots/ (the folder ruff and the README know), not __snapshots__."""
    from pytest_textual_snapshot import SVGImageExtension

    def dirname(cls, *, test_location) -> str:
        return str(Path(test_location.filepath).parent / "snapshots" / test_location.basename)

    monkeypatch.setattr(SVGImageExtension, "dirname", classmethod(dirname))


def _home(name: str) -> Path:
    # a fixed path: the exercise screen shows the learner's file path, so it must not vary per run
    home = Path(tempfile.gettempdir()) / "attention-tutor-snapshots" / name
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    return home


async def _steady(pilot) -> None:
    await settle(pilot.app, 0.3)
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause()


@pytest.mark.parametrize("lang", ["en", DE_SLOW, "zh"])
def test_home_snapshot(snap_compare, lang):
    async def run_before(pilot):
        await pilot.app.course_ready.wait()
        await _steady(pilot)

    assert snap_compare(make_app(_home(f"home-{lang}"), lang), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", ["en", DE_SLOW, "zh"])
def test_lesson_heatmap_snapshot(snap_compare, lang):
    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        await open_experiment(app, pilot, "multi-head", "heads")  # heatmaps labelled 白日依山尽
        await pilot.press("r")
        await aim_over(app)  # the lesson keeps aiming at its target while the text above lays out
        heatmap = app.screen.query(".heatmap").first()
        app.screen.query_one("#prose", VerticalScroll).scroll_to_widget(heatmap, top=True, animate=False)
        await _steady(pilot)

    assert snap_compare(make_app(_home(f"lesson-{lang}"), lang), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_lesson_prose_snapshot(snap_compare, lang):
    """Running text at 80 columns: Chinese breaks between characters, never before "，" or "。"."""

    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await aim_over(app)  # the lesson keeps aiming at its target while the text above lays out
        await _steady(pilot)

    assert snap_compare(make_app(_home(f"prose-{lang}"), lang), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", ["en", DE_SLOW, "zh"])
def test_experiment_parameters_snapshot(snap_compare, lang):
    """The parameter form open under its panel, run with Enter: compact, the results below it."""

    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "rope-alibi", "alibi")
        await panel.show_params()
        box = panel.query_one("#p-n_head", Input)
        box.focus()
        box.value = "4"
        await pilot.press("enter")
        await aim_over(app)  # the lesson keeps aiming at its target while the text above lays out
        app.screen.query_one("#prose", VerticalScroll).scroll_to_widget(panel, top=True, animate=False)
        await _steady(pilot)

    assert snap_compare(make_app(_home(f"params-{lang}"), lang), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", ["en", DE_SLOW, "zh"])
def test_quiz_question_snapshot(snap_compare, lang):
    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        await app.open_quiz("positions")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        await quiz.submit("the order")  # the open first question: own answer, rating, next
        await quiz.submit("3")
        await quiz.submit("")
        await _steady(pilot)

    assert snap_compare(make_app(_home(f"quiz-{lang}"), lang), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", ["en", DE_SLOW, "zh"])
def test_exercise_result_snapshot(snap_compare, lang, monkeypatch):
    # a grade's inputs come from the grading process's secret key (tutor.grading.runner): a fixed one
    # here, so the probes the screen names (their tensors' sizes) are the same on every run
    from tutor.grading import runner

    monkeypatch.setattr(runner, "_KEY", [])  # the process's own key again after this test
    runner.use_grader_key(b"snapshot" * 4)

    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        await app.open_exercise("split-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        while quiz.state != "done":
            await quiz.submit(right_answer(quiz.session.current.question))
            await quiz.submit("")
            await pilot.pause()
        await pilot.press("g")
        await _steady(pilot)
        app.screen.query_one("#ex-status").scroll_visible(top=True, animate=False)
        await pilot.pause()

    assert snap_compare(make_app(_home(f"exercise-{lang}"), lang), terminal_size=SIZE, run_before=run_before)


def test_chinese_lesson_table_snapshot_at_200x50(snap_compare):
    """A Markdown table with Chinese cells next to a running-text section, at the large size."""

    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        lesson = app.tutor.lesson("rope-alibi")
        await app.open_lesson("rope-alibi", section=lesson.sections[-1].id)
        await aim_over(app)  # the lesson keeps aiming at its target while the text above lays out
        await _steady(pilot)

    assert snap_compare(make_app(_home("table-zh"), "zh"), terminal_size=(200, 50), run_before=run_before)
