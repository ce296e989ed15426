"""Experiment panels as a learner uses them: the parameter form is compact and
keeps the results in view, Enter in a field runs, `r` runs the panel the learner is looking at,
quick experiments run while a training run goes, and the one training run shows on every screen
and stops from any."""

from __future__ import annotations

import time

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Input

from tests.ui_helpers import (
    aim_done,
    child_pids,
    lesson_laid_out,
    make_app,
    open_experiment,
    opened_at,
    panel_named,
    settle,
    status_of,
    until,
)
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.widgets.experiment_panel import LIVE_POINTS, ExperimentPanel, thin
from tutor.ui.widgets.key_bar import KeyBar
from tutor.ui.widgets.params_form import ParamsForm
from tutor.ui.widgets.params_toggle import ParamsToggle

SMALL_TRAINING = {"steps": "20000", "batch": "4", "n_layer": "1", "n_embd": "32", "pos": "none"}


def _in_view(screen: LessonScreen, widget) -> bool:
    """Whether any line of `widget` is inside the lesson's visible part."""
    prose = screen.query_one("#prose", VerticalScroll)
    return prose.region.overlaps(widget.region)


async def _start_small_training(app, pilot, lesson: str = "multi-head") -> ExperimentPanel:
    await app.open_lesson(lesson, experiment="train-compare")
    await until(pilot, lambda: opened_at(app, "train-compare"))
    panel = panel_named(app, "train-compare")
    await panel.show_params()
    for key, value in SMALL_TRAINING.items():
        panel.query_one(f"#p-{key}", Input).value = value
    assert panel.run()
    try:  # until the child reports training steps
        await until(
            pilot, lambda: app.training is not None and app.training.total, 120
        )  # niced: waits beside busy tests
    except AssertionError:
        raise AssertionError(f"no training step reported; status: {status_of(panel)}") from None
    return panel


async def test_the_parameter_form_is_compact_and_enter_runs_with_the_results_in_view(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "multi-head", "train-compare")
        assert not panel.query(ParamsForm)  # mounted only when the learner opens it
        await panel.show_params()
        await until(pilot, lambda: panel.query(ParamsForm) and panel.query_one(ParamsForm).outer_size.height)
        form = panel.query_one(ParamsForm)
        fields = len(form.spec.params_model.model_fields)
        # two cells a line at 80 columns, plus the line saying Enter runs and the one giving the values pos
        # takes: no tall empty box
        assert form.outer_size.height <= (fields + 1) // 2 + 2 < fields

        panel = await open_experiment(app, pilot, "rope-alibi", "alibi")
        await panel.show_params()
        box = panel.query_one("#p-n_head", Input)
        box.focus()
        box.value = "4"
        await pilot.press("enter")
        await settle(app, 0.3)
        assert panel.result is not None and panel.result.params["n_head"] == 4
        assert "▼ Parameters: n_head=4" in str(panel.query_one(ParamsToggle).content)
        # the form stays open, and the status line and the first result lines are on screen with it
        assert panel.query_one(ParamsToggle).expanded and panel.form.display
        assert _in_view(app.screen, panel.query_one(".exp-status"))
        assert _in_view(app.screen, panel.query_one(".exp-results").children[0])


async def test_r_runs_the_panel_e_moved_to_not_the_one_whose_parameters_had_the_focus(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_laid_out(app))
        screen = app.screen
        first = panel_named(app, "heads")
        first.query_one(ParamsToggle).focus()  # the learner looked at its parameters
        await pilot.pause()
        for _ in range(4):
            before = screen.chosen
            await pilot.press("e")
            await until(pilot, lambda before=before: screen.chosen is not before)
            if screen.chosen is not None and screen.chosen.ref.name == "dk-scaling":
                break
        assert screen.chosen.ref.name == "dk-scaling"
        await pilot.press("r")
        await settle(app)
        assert panel_named(app, "dk-scaling").result is not None
        assert first.result is None


async def test_r_runs_the_panel_most_in_view_after_the_learner_scrolls(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("rope-alibi", experiment="rope-relative")
        await until(pilot, lambda: aim_done(app))  # the opening's aim at the panel is over
        screen = app.screen
        target = panel_named(app, "rope-frequencies")
        prose = screen.query_one("#prose", VerticalScroll)
        # the learner scrolls on by hand from rope-relative (where the opening aimed) to the next one
        first = panel_named(app, "rope-relative")
        assert screen.chosen is first and screen.panel_in_view() is first
        prose.scroll_to(y=screen._content_y(target) - 3, animate=False, immediate=True)
        await until(pilot, lambda: not _in_view(screen, first) and screen.panel_in_view() is target)
        assert not _in_view(screen, first)
        assert screen.panel_in_view() is target
        await pilot.press("r")
        await settle(app)
        assert target.result is not None
        assert panel_named(app, "rope-relative").result is None


@pytest.mark.slow  # a real training run beside quick runs: 23 s
async def test_quick_runs_go_on_while_training_which_shows_everywhere_and_stops_from_anywhere(home):
    before = child_pids()
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        training = await _start_small_training(app, pilot)

        # a quick experiment in another lesson runs at once (no "already running")
        await app.open_lesson("positions", experiment="shuffle")
        await until(pilot, lambda: app.screen.panel_in_view() is panel_named(app, "shuffle"))
        await pilot.press("r")
        shuffle = panel_named(app, "shuffle")
        await until(pilot, lambda: shuffle.result is not None, 30)
        assert shuffle.result is not None and app.training is not None

        # a second training run is refused while the first goes
        await app.open_lesson("rope-alibi", experiment="train-compare")
        await until(pilot, lambda: opened_at(app, "train-compare"))
        assert panel_named(app, "train-compare").run() is False
        assert not panel_named(app, "train-compare").running

        # home says where training stands, with the key that stops it
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        bar = str(app.screen.query_one(KeyBar).content)
        assert "step" in bar and "ETA" in bar and "f7 Stop training" in bar
        assert any(c.title == "Stop the training run" for c in app.get_system_commands(app.screen))

        await pilot.press("f7")
        await settle(app, 0.3)
        assert app.training is None and "cancelled" in status_of(training)
        assert "Stop training" not in str(app.screen.query_one(KeyBar).content)
        assert not any(c.title == "Stop the training run" for c in app.get_system_commands(app.screen))
    assert child_pids() - before == set()


@pytest.mark.slow  # a training run started for the key bar's words; the English line is proven above
async def test_the_training_line_is_in_the_learners_language(home):
    app = make_app(home, lang="de")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await _start_small_training(app, pilot, lesson="rope-alibi")
        await until(pilot, lambda: "Schritt" in str(app.screen.query_one(KeyBar).content))
        bar = str(app.screen.query_one(KeyBar).content)
        assert "Schritt" in bar and "noch" in bar and "Training stoppen" in bar
        started = time.monotonic()
        app.action_stop_training()
        await settle(app, 0.2)
        assert app.training is None and time.monotonic() - started < 5


def test_the_live_loss_curve_keeps_a_plots_worth_of_points_and_the_last_one():
    steps = list(range(1, 1001))
    losses = [8.0 - s / 200 for s in steps]
    xs, ys = thin(steps, losses)
    assert len(xs) <= LIVE_POINTS + 1 and xs[0] == 1 and xs[-1] == 1000 and ys[-1] == losses[-1]
    assert xs == sorted(xs) and all(losses[x - 1] == y for x, y in zip(xs, ys, strict=True))
    assert thin([1, 2], [3.0, 2.0]) == ([1, 2], [3.0, 2.0])
