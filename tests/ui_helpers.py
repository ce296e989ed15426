"""Shared helpers for the learner's interfaces: the Textual pilot and snapshot tests (tests/test_ui_*.py)
and the plain command line a learner reads and answers in (`learner_cli`)."""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tutor.content.schema import ExactQuestion, MultipleChoice, NumberQuestion, OpenQuestion, SingleChoice
from tutor.settings import shipped_lessons_dir


def make_app(home: Path, lang: str = "en", lessons: Path | None = None):
    from tutor.ui.app import TutorApp

    return TutorApp(lang=lang, lessons_dir=lessons or shipped_lessons_dir(), home=home)


def learner_cli(
    home: Path, *args: str, stdin: str = "", lang: str = "en", timeout: float = 120
) -> subprocess.CompletedProcess:
    """`python -m tutor ARGS --home HOME --lang LANG` as a learner runs it, `stdin` typed in."""
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args, "--home", str(home), "--lang", lang],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(),
        cwd=ROOT,
        timeout=timeout,
    )


async def answer_predictions(pilot, screen) -> None:
    """Answer every prediction quiz of an exercise screen right, to its end (they come before the code)."""
    from tutor.ui.widgets.quiz_panel import QuizPanel

    for quiz in screen.query(QuizPanel):
        while quiz.state != "done":
            await quiz.submit(right_answer(quiz.session.current.question))
            await quiz.submit("")
            await pilot.pause()


def right_answer(q) -> str:
    """What a learner who knows the answer types, derived from the question itself."""
    if isinstance(q, SingleChoice):
        return str([c.correct for c in q.choices].index(True) + 1)
    if isinstance(q, MultipleChoice):
        return ",".join(str(i) for i, c in enumerate(q.choices, 1) if c.correct)
    if isinstance(q, NumberQuestion):
        return repr(q.answer)
    if isinstance(q, ExactQuestion):
        return q.answer
    if isinstance(q, OpenQuestion):
        return "good"
    raise TypeError(q)


def wrong_answer(q) -> str:
    if isinstance(q, SingleChoice):
        return str([c.correct for c in q.choices].index(False) + 1)
    if isinstance(q, MultipleChoice):
        return ",".join(str(i) for i, c in enumerate(q.choices, 1) if not c.correct) or "1"
    if isinstance(q, NumberQuestion):
        return repr(q.answer * 10 + 7)
    if isinstance(q, ExactQuestion):
        return "certainly not this"
    raise TypeError(q)


def plain(renderable, width: int = 100) -> str:
    """A Rich renderable as the text a terminal shows."""
    console = Console(width=width, record=True, file=open(os.devnull, "w"))
    console.print(renderable)
    return console.export_text()


def drawn_text(widget) -> str:
    """A Static's text as drawn at its width, each run of spaces and line breaks as one space."""
    return " ".join(plain(widget.content, widget.content_region.width).split())


def child_pids() -> set[int]:
    """Live child processes of this process (all threads), from /proc."""
    pids: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        pids |= {int(p) for p in text.split()}
    return {p for p in pids if Path(f"/proc/{p}").exists() and _state(p) != "Z"}


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


async def until(pilot, condition, timeout: float = 10.0) -> None:
    """Let the app run until `condition()` is true (looked at every 0.05 s), instead of a fixed pause
    long enough for it; an AssertionError after `timeout` s."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"not so after {timeout} s: {condition.__code__.co_filename}:"
                f"{condition.__code__.co_firstlineno}"
            )
        await pilot.pause(0.05)


async def settle(app, pause: float = 0.1) -> None:
    """Wait until every worker has finished (failed ones included), then let the screen update."""
    import asyncio

    while running := [w for w in app.workers if not w.is_finished]:
        await asyncio.gather(*(w.wait() for w in running), return_exceptions=True)
    await asyncio.sleep(pause)


async def aim_over(app, pause: float = 0.1) -> None:
    """Wait until every worker has finished and the lesson's aim at its target (kept for at most
    LessonScreen.AIM_S after the last move) is over, then let the screen update."""
    import asyncio
    import time

    await settle(app, 0)
    until = 0.0
    while (aim := getattr(app.screen, "_aim_at", None)) is not None:
        until = aim[3]  # (generation, target, offset, until)
        await asyncio.sleep(0.05)
    await asyncio.sleep(max(0.0, until - time.monotonic()))  # an aim the layout ended early: its full time
    await settle(app, pause)


def panel_named(app, name: str):
    """The experiment panel of experiment `name` on the current screen."""
    from tutor.ui.widgets.experiment_panel import ExperimentPanel

    return next(p for p in app.screen.query(ExperimentPanel) if p.ref.name == name)


def status_of(panel) -> str:
    """The status line of an experiment panel, as text."""
    from textual.widgets import Static

    return str(panel.query_one(".exp-status", Static).content)


def opened_at(app, name: str) -> bool:
    """Whether the lesson on screen has moved to the panel of experiment `name`, laid out and in view
    (the panel `r` runs)."""
    screen = app.screen
    chosen = getattr(screen, "chosen", None)
    return (
        chosen is not None
        and chosen.ref.name == name
        and chosen.is_mounted
        and chosen.outer_size.height > 0
        and screen.panel_in_view() is chosen
    )


async def open_experiment(app, pilot, lesson: str, name: str):
    """Open `lesson` at experiment `name`, let the opening settle, and return that experiment's panel."""
    await app.open_lesson(lesson, experiment=name)
    await until(pilot, lambda: opened_at(app, name))
    await pilot.pause()
    return panel_named(app, name)


@contextmanager
def store_locked(app):
    """Meanwhile another writer (another tutor process, a grade recording) holds the store's write
    lock: a write of the app waits for it, up to the store's busy timeout."""
    import sqlite3

    other = sqlite3.connect(app.tutor.store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def lesson_built(app) -> bool:
    """The lesson screen shows, with its sections and panels (not necessarily laid out yet)."""
    from tutor.ui.screens.lesson import LessonScreen

    return isinstance(app.screen, LessonScreen) and app.screen._built


def lesson_laid_out(app) -> bool:
    """The lesson screen shows, its text laid out (every section has its height)."""
    from tutor.ui.screens.lesson import LessonScreen

    screen = app.screen
    if not isinstance(screen, LessonScreen) or not screen.query("#prose"):
        return False  # not yet composed
    return screen._view() is not None and bool(screen._section_spans())


def aim_done(app) -> bool:
    """The lesson is laid out and its aim at where it was opened or moved to (kept for AIM_S) is over."""
    return lesson_laid_out(app) and app.screen._aim_at is None


async def palette_hits(pilot, app, typed: str) -> list[str]:
    """Open the command palette, type `typed`, wait until it has gathered its hits (it does so in
    batches, in a worker of its own); their prompts, in the order shown."""
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input

    await pilot.press("ctrl+p")
    await until(
        pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen.query_one(Input).has_focus
    )
    await pilot.press(*typed)
    palette = app.screen

    def gathered() -> bool:
        gathering = [w for w in app.workers if w.node is palette and not w.is_finished]
        return palette.query_one(Input).value == typed and not gathering

    await until(pilot, gathered)
    await pilot.pause()  # the last batch drawn
    found = palette.query_one(CommandList)
    return [str(found.get_option_at_index(i).prompt) for i in range(found.option_count)]


async def unlock_exercise(app, pilot, exercise_id: str):
    """Open the lab of `exercise_id` and answer its predictions right, so that its task shows; the
    exercise screen."""
    from tutor.ui.widgets.quiz_panel import QuizPanel

    await app.open_exercise(exercise_id)
    await pilot.pause()
    screen = app.screen
    for quiz in screen.query(QuizPanel):
        while quiz.state != "done":
            await quiz.submit(right_answer(quiz.session.current.question))
            await quiz.submit("")
            await pilot.pause()
    assert screen.unlocked
    await pilot.pause()
    return screen
