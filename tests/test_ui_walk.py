"""A German and a Chinese learner's walk through the whole app at 80×24 shows no English word: home,
help, the palette, every screenful of all three lessons, an experiment per lesson, a training run, a
quiz, and an exercise graded with a hint and the solution. Each screen is read from Textual's own
screenshot; tests/english.py says what counts as an English word.

Slow (two minutes a language): `python -m pytest -m slow tests/test_ui_walk.py`.
"""

from __future__ import annotations

import pytest
from textual.command import CommandPalette
from textual.containers import VerticalScroll
from textual.widgets import Input

from tests.english import english_left, screen_text
from tests.ui_helpers import (
    aim_over,
    make_app,
    panel_named,
    right_answer,
    settle,
    status_of,
    until,
    wrong_answer,
)
from tutor.content.schema import OpenQuestion
from tutor.experiments.registry import get_registry
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.home import HomeScreen
from tutor.ui.widgets.params_form import ParamsForm
from tutor.ui.widgets.quiz_panel import QuizPanel

pytestmark = pytest.mark.slow

# one quick experiment per lesson, run where the lesson shows it
RUN = {"multi-head": "heads", "positions": "permutation", "rope-alibi": "alibi"}
TRAINING = {"steps": "150", "batch": "4", "n_layer": "1", "n_embd": "32", "seeds": "1", "heads": "1, 2"}


# the parameter form labels each field with the name `--set NAME=…` takes on the command line
PARAMETER_NAMES = {name for spec in get_registry().values() for name in spec.params_model.model_fields}


class Walk:
    def __init__(self, app, lang: str) -> None:
        self.app, self.lang = app, lang
        self.found: dict[str, str] = {}  # English word -> the first place it showed
        self.screens = 0

    def look(self, where: str) -> None:
        self.screens += 1
        text = screen_text(self.app)
        for word in english_left(text, self.lang, PARAMETER_NAMES):
            line = next((line.strip() for line in text.splitlines() if word in line), "")
            self.found.setdefault(word, f"{where}: {line}")


async def _through_the_lesson(walk: Walk, pilot, lesson) -> None:
    app = walk.app
    await app.open_lesson(lesson.id, section=lesson.sections[0].id)
    await aim_over(app, 0.3)
    await until(pilot, lambda: app.screen.query("#prose"))  # the lesson's screen composed (slower under load)
    prose = app.screen.query_one("#prose", VerticalScroll)
    while True:
        walk.look(f"{lesson.id}, line {int(prose.scroll_y)}")
        if prose.scroll_y >= prose.max_scroll_y:
            break
        prose.scroll_to(y=prose.scroll_y + prose.size.height - 1, animate=False)
        await pilot.pause()
    await app.open_lesson(lesson.id, experiment=RUN[lesson.id])
    await aim_over(app)
    panel = panel_named(app, RUN[lesson.id])
    await panel.show_params()
    await _form_shown(pilot, panel)
    walk.look(f"{lesson.id}: {panel.ref.name}'s parameters")
    assert panel.run()
    await settle(app, 0.3)
    walk.look(f"{lesson.id}: {panel.ref.name}'s result")


async def _form_shown(pilot, panel) -> None:
    """Until the panel's parameter form is laid out, then drawn."""
    await until(pilot, lambda: panel.query(ParamsForm) and panel.query_one(ParamsForm).outer_size.height)
    await pilot.pause()


async def _training(walk: Walk, pilot) -> None:
    app = walk.app
    await app.open_lesson("multi-head", experiment="train-compare")
    await aim_over(app)
    panel = panel_named(app, "train-compare")
    await panel.show_params()
    for key, value in TRAINING.items():
        panel.query_one(f"#p-{key}", Input).value = value
    await _form_shown(pilot, panel)
    walk.look("train-compare's parameters")
    assert panel.run()
    await until(pilot, lambda: app.training is not None and app.training.total, 120)
    walk.look("training, in the lesson")
    await pilot.press("f1")
    await until(pilot, lambda: isinstance(app.screen, HomeScreen))
    await pilot.pause()
    walk.look("training, on home")
    await pilot.press("f2")
    await until(pilot, lambda: app.training is None and not panel.running, 300)  # the job has finished
    await aim_over(app, 0.3)
    assert panel.result is not None, status_of(panel)  # the job ran to its end
    walk.look("train-compare's result")


async def _quiz(walk: Walk, pilot) -> None:
    app = walk.app
    await app.open_quiz("multi-head")
    await settle(app, 0.3)
    quiz = app.screen.query_one(QuizPanel)
    box = quiz.query_one(".q-answer", Input)
    for k in range(4):
        walk.look(f"quiz question {k + 1}")
        question = quiz.session.current.question
        if isinstance(question, OpenQuestion):
            box.value = "?"
            await pilot.press("enter")
            walk.look(f"quiz question {k + 1}, the model answer")
            box.value = "3"
        else:
            # a wrong answer in no language: the learner's own words are not the app's
            box.value = (
                right_answer(question)
                if k % 2 == 0
                else wrong_answer(question).replace("certainly not this", "xq")
            )
        await pilot.press("enter")
        await settle(app, 0.2)
        walk.look(f"quiz feedback {k + 1}")
        await pilot.press("enter")
        await settle(app, 0.2)


async def _exercise(walk: Walk, pilot) -> None:
    app = walk.app
    await app.open_exercise("split-heads")
    await settle(app, 0.3)
    walk.look("exercise split-heads")
    for key in ("g", "h", "s"):
        await pilot.press(key)
        await settle(app, 0.5)
        walk.look(f"exercise split-heads after {key}")


@pytest.mark.parametrize("lang", ["de", "zh"])
async def test_a_walk_through_the_app_shows_no_english_word(home, lang):
    app = make_app(home, lang)
    walk = Walk(app, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await settle(app, 0.3)
        walk.look("home")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        walk.look("help")
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.pause()
        walk.look("command palette")
        await pilot.press("escape")
        for lesson in app.tutor.lessons:
            await _through_the_lesson(walk, pilot, lesson)
        await _quiz(walk, pilot)
        await _exercise(walk, pilot)
        await _training(walk, pilot)
    assert walk.screens > 60
    assert not walk.found, "\n".join(f"{word!r} on {where}" for word, where in walk.found.items())
