"""Regenerate the README's capture and the screenshots (docs/*.svg) from the running app, on a fresh home.

    python docs/make_screenshots.py

Each shot drives the real app headless (Textual's Pilot) and saves Textual's SVG screenshot; the README's
text capture (the order test, run in lesson 2) is written between its CAPTURE markers.
tests/test_docs.py draws the capture again and fails when README's no longer matches the app.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))

from textual.containers import VerticalScroll  # noqa: E402
from textual.widgets import Input  # noqa: E402

from tests.ui_helpers import right_answer  # noqa: E402
from tests.ui_helpers import settle as finish_workers  # noqa: E402
from tutor.grading.runner import use_grader_key  # noqa: E402
from tutor.settings import shipped_lessons_dir  # noqa: E402
from tutor.ui.app import TutorApp  # noqa: E402
from tutor.ui.widgets.experiment_panel import ExperimentPanel  # noqa: E402
from tutor.ui.widgets.quiz_panel import QuizPanel  # noqa: E402

SIZE = (100, 32)
README = DOCS.parent / "README.md"
CAPTURE_SIZE = (96, 26)
CAPTURE = re.compile(r"(<!-- capture -->\n```\n)(.*?)(```\n<!-- /capture -->)", re.S)


async def settle(app, pause: float = 0.3) -> None:
    """Every worker done (the tests' helper), and no blinking cursor caught half-way."""
    await finish_workers(app, pause)
    for box in app.screen.query(Input):
        box.cursor_blink = False


async def shoot(name: str, lang: str, steps, into: Path = DOCS) -> Path:
    use_grader_key(b"screenshots" * 3)  # a grade's probes as they were last shot (the exercise's)
    home = Path(tempfile.mkdtemp())
    try:
        app = TutorApp(lang, shipped_lessons_dir(), home)
        async with app.run_test(size=SIZE) as pilot:
            await app.course_ready.wait()
            await steps(app, pilot)
            app.save_screenshot(str(into / f"{name}.svg"))
            await app.action_quit()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(into / f"{name}.svg")
    return into / f"{name}.svg"


def screen_text(app) -> str:
    """What the terminal shows now, line by line, trailing spaces dropped."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip).rstrip() for strip in strips) + "\n"


async def capture() -> str:
    """The README's capture: lesson 2's order test run with `r`, as the terminal shows it."""
    home = Path(tempfile.mkdtemp())
    try:
        app = TutorApp("en", shipped_lessons_dir(), home)
        async with app.run_test(size=CAPTURE_SIZE) as pilot:
            await app.course_ready.wait()
            await app.open_lesson("positions", experiment="permutation")
            await pilot.pause(0.5)
            await pilot.press("r")
            await settle(app, 2.0)
            panel = next(p for p in app.screen.query(ExperimentPanel) if p.ref.name == "permutation")
            app.screen.query_one("#prose", VerticalScroll).scroll_to_widget(panel, top=True, animate=False)
            await settle(app)
            return screen_text(app)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def write_capture(text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    assert CAPTURE.search(readme), "README.md has no <!-- capture --> block"
    README.write_text(CAPTURE.sub(lambda m: m[1] + text + m[3], readme), encoding="utf-8")
    print("README.md (capture)")


async def home(app, pilot) -> None:
    await settle(app)


async def heatmap(app, pilot) -> None:
    await app.open_lesson("multi-head", experiment="heads")
    await pilot.pause(0.5)
    await pilot.press("r")
    await settle(app, 2.0)
    target = app.screen.query(".heatmap").first()
    app.screen.query_one("#prose", VerticalScroll).scroll_to_widget(target, top=True, animate=False)
    await settle(app)


async def training(app, pilot) -> None:
    await app.open_lesson("rope-alibi", experiment="train-compare")
    await pilot.pause(2.0)
    panel = next(p for p in app.screen.query(ExperimentPanel) if p.ref.name == "train-compare")
    await panel.show_params()
    for key, value in {
        "steps": "300",
        "batch": "8",
        "n_layer": "2",
        "n_embd": "64",
        "eval_interval": "50",
    }.items():
        panel.query_one(f"#p-{key}", Input).value = value
    panel.query_one(".exp-params").collapsed = True
    panel.run()
    for _ in range(900):  # until the second run is under way, so two curves show
        await pilot.pause(0.2)
        if "run 2/" in str(panel.query_one(".exp-status").content):
            break
    app.screen.query_one("#prose", VerticalScroll).scroll_to_widget(panel, top=True, animate=False)
    await pilot.pause(0.5)


async def quiz(app, pilot) -> None:
    await app.open_quiz("positions")
    await pilot.pause()
    panel = app.screen.query_one(QuizPanel)
    await panel.submit("the order of the characters")
    await panel.submit("3")
    await panel.submit("")
    await pilot.pause()
    await panel.submit(right_answer(panel.session.current.question))
    await settle(app)


async def exercise(app, pilot) -> None:
    await app.open_exercise("rope")
    await pilot.pause()
    panel = app.screen.query_one(QuizPanel)
    while panel.state != "done":
        await panel.submit(right_answer(panel.session.current.question))
        await panel.submit("")
        await pilot.pause()
    await pilot.press("g")
    await settle(app)
    app.screen.query_one("#ex-status").scroll_visible(top=True, animate=False)
    await settle(app)


# name: (language, the steps to the screen)
SHOTS = {
    "home": ("en", home),
    "lesson-heatmap": ("en", heatmap),
    "lesson-heatmap-zh": ("zh", heatmap),
    "training": ("en", training),
    "quiz": ("en", quiz),
    "exercise": ("en", exercise),
}


async def main() -> None:
    write_capture(await capture())
    for name, (lang, steps) in SHOTS.items():
        await shoot(name, lang, steps)


if __name__ == "__main__":
    asyncio.run(main())
