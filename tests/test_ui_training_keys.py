"""Keys never land in a hidden parameter field, a training run never ends without asking.

Pilot tests at 80x24 on the real app; the training runs are real, at the tiniest sizes the experiment
allows, and are stopped as soon as what is tested has been seen."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Button, Input

from tests.ui_helpers import aim_over, make_app, opened_at, panel_named, settle, status_of, until
from tutor.ui.messages import Training
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.screens.quit_training import QuitTraining
from tutor.ui.widgets.experiment_panel import ExperimentPanel, job_line
from tutor.ui.widgets.key_bar import KeyBar
from tutor.ui.widgets.params_toggle import ParamsToggle

# a run long enough to be going while keys are pressed (it is stopped before it ends)
LONG_TINY = {"steps": "20000", "batch": "1", "n_layer": "1", "n_embd": "8", "context": "8", "heads": "1"}


async def _training_started(app, pilot, panel: ExperimentPanel) -> None:
    try:
        await until(
            pilot, lambda: app.training is not None and app.training.total, 120
        )  # niced: waits beside busy tests
    except AssertionError:
        raise AssertionError(f"no training step reported; status: {status_of(panel)}") from None


def _panel_of(widget) -> ExperimentPanel | None:
    return next((n for n in widget.ancestors_with_self if isinstance(n, ExperimentPanel)), None)


@pytest.mark.slow  # a real training run under the keys: 35 s
async def test_keys_never_land_in_a_hidden_parameter_field(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head", experiment="train-compare")
        await until(pilot, lambda: opened_at(app, "train-compare"))
        lesson = app.screen
        panel = panel_named(app, "train-compare")
        await panel.show_params()
        for key, value in LONG_TINY.items():
            panel.query_one(f"#p-{key}", Input).value = value
        seeds = panel.query_one("#p-seeds", Input)
        seeds.focus()
        await pilot.press("enter")  # Enter in a field runs the experiment
        await _training_started(app, pilot, panel)

        # the language toast sits above the training line and its stop key
        await pilot.press("f5")
        shown: list = []  # the toasts' places as they are drawn (on a busy machine one may time out soon after)

        def toasts_drawn() -> bool:
            shown[:] = [toast.region for toast in app.screen.query("Toast") if toast.region.area]
            return bool(shown)

        await until(pilot, toasts_drawn)
        bar = lesson.query_one(KeyBar)
        assert bar.region.height == 2
        assert not any(place.overlaps(bar.region) for place in shown)
        await pilot.press("f5", "f5")  # back to English

        # Esc leaves the field, not the lesson; a second Esc goes home
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is lesson and not isinstance(app.focused, Input)
        seeds.focus()
        await pilot.pause()
        await pilot.press("f1")  # leaving the lesson with the focus in a field
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("f2")
        await until(pilot, lambda: app.screen is lesson)
        await pilot.pause()
        section = lesson.current_section
        await pilot.press("p")  # the lesson's key, not a letter typed into `seeds`
        await until(pilot, lambda: lesson.current_section != section)
        assert seeds.value == "2" and lesson.current_section != section
        assert not isinstance(app.focused, Input)

        # the c key of the lesson cancels the run of the panel in view only
        await app.open_lesson("multi-head", experiment="heads")
        await until(pilot, lambda: lesson.panel_in_view() is panel_named(app, "heads"))
        await pilot.press("c")
        await pilot.pause(0.3)  # time for a cancel that must not come
        assert app.training is not None and panel.running

        # ctrl+q asks first; Esc keeps training
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitTraining))
        assert isinstance(app.screen, QuitTraining) and app.is_running
        asked = _words(app.screen)
        # the job's counts (two runs side by side): how far it is depends on the CPU's pace
        done = re.search(r"([012]) of 2 runs done, step [\d,]+/40,000 of the job", asked)
        assert done, asked
        lost = max(1, 2 - int(done[1]))
        assert "Keep training" in asked and f"Quit and lose {lost} unfinished run" in asked, asked
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, QuitTraining))
        assert not isinstance(app.screen, QuitTraining) and app.training is not None and panel.running
        await app.open_lesson("multi-head", experiment="train-compare")
        await until(pilot, lambda: lesson.panel_in_view() is panel)
        await pilot.press("c")
        await settle(app, 0.2)
        assert app.training is None and "cancelled" in status_of(panel)

        # Tab goes through what is in view, never into a panel far away
        prose = lesson.query_one("#prose", VerticalScroll)
        await app.open_lesson("multi-head", experiment="heads")  # a panel in view, others far away
        await aim_over(app)
        prose.focus()
        reached = []
        for _ in range(8):
            await pilot.press("tab")
            await pilot.pause()
            reached.append(app.focused)
        panels = {_panel_of(w) for w in reached} - {None}
        assert panels and all(prose.region.overlaps(p.region) for p in panels)

        # after e, o opens the parameters of the experiment e moved to, the focus in its first field
        prose.focus()
        await pilot.pause()
        before = lesson.chosen
        await pilot.press("e")
        await until(pilot, lambda: lesson.chosen not in (None, before))
        await aim_over(app)
        target = lesson.chosen
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.focused, Input))
        assert target.query_one(ParamsToggle).expanded and _panel_of(app.focused) is target
        assert isinstance(app.focused, Input)
        # collapsing the parameters takes the focus out of them
        target.query_one(ParamsToggle).action_toggle()
        await until(pilot, lambda: not isinstance(app.focused, Input))
        assert not isinstance(app.focused, Input)
        assert isinstance(app.screen, LessonScreen)


def _words(screen) -> str:
    statics = " ".join(str(w.content) for w in screen.query("Static") if not isinstance(w, Button))
    return statics + " " + " ".join(str(b.label) for b in screen.query(Button))


@pytest.mark.slow  # a second training child; the question in English and Esc are proven in the default run
async def test_ctrl_q_during_training_asks_in_the_learners_language_and_quits_when_told(home):
    app = make_app(home, lang="de")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head", experiment="train-compare")
        await until(pilot, lambda: opened_at(app, "train-compare"))
        panel = panel_named(app, "train-compare")
        await panel.show_params()
        for key, value in LONG_TINY.items():
            panel.query_one(f"#p-{key}", Input).value = value
        assert panel.run()
        await _training_started(app, pilot, panel)

        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitTraining))
        assert app.is_running
        text = _words(app.screen)
        assert "Weiter trainieren" in text and "verliert" in text and "0 von 2 Läufen fertig" in text
        assert "Beenden, 2 unfertige Läufe verlieren" in text
        assert not {"Quit", "run", "Keep"} & set(text.replace(",", " ").split())
        await pilot.press("ctrl+q")  # no answer: the question stays
        await pilot.pause()
        assert isinstance(app.screen, QuitTraining)
        await pilot.press("escape")  # keep training
        await until(pilot, lambda: not isinstance(app.screen, QuitTraining))
        assert app.training is not None and panel.running

        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitTraining))
        app.screen.query_one("#lose", Button).press()
        started = time.monotonic()
        while app.is_running and time.monotonic() - started < 10:  # no pilot once the app has ended
            await asyncio.sleep(0.02)
        assert not app.is_running


@pytest.mark.parametrize(
    ("lang", "finished", "lose"),
    [
        ("en", 0, "Quit and lose 3 unfinished runs"),
        ("en", 2, "Quit and lose 1 unfinished run"),
        ("de", 2, "Beenden, 1 unfertigen Lauf verlieren"),
        ("zh", 1, "退出，放弃未完成的 2 轮"),
    ],
)
async def test_the_quit_question_counts_the_runs_it_would_lose_as_the_panel_does(home, lang, finished, lose):
    """Issue 42: with a job of several runs the quit button said "lose this run"; it counts the runs not done,
    the panel's "{finished} of {runs} runs done" seen from the other side, in the language's plural form."""
    app = make_app(home, lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        training = Training("train-compare", runs=3, finished=finished, done=40, total=300)
        app.push_screen(QuitTraining(training, lang))
        await until(pilot, lambda: isinstance(app.screen, QuitTraining) and bool(app.screen.query("#lose")))
        assert str(app.screen.query_one("#lose", Button).label) == lose
        assert job_line(training, lang).split(" · ")[0] in _words(app.screen).replace(",", "")
