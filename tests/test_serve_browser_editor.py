"""The lab's built-in editor in a real browser: the served tutor (`python -m tutor serve`, which gives the
app no $EDITOR) in Debian's chromium at about 80×24, driven by Playwright. xterm.js hands ctrl+s to the
app (the browser does not save the page): the learner types the missing line, saves, and the grade passes.

Run with `python -m pytest -m browser` (left out of the default run; see tests/test_serve_browser.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser_helpers import CHROMIUM, TerminalView, launch
from tests.test_serve import Served
from tests.ui_helpers import make_app, right_answer
from tutor.texts import say
from tutor.ui.widgets.quiz_panel import QuizPanel

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip("playwright.sync_api")
if not __import__("os").path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)

VIEWPORT = {"width": 728, "height": 510}  # about 80 × 24 cells
LAST_LINE = "    return x.transpose(1, 2).contiguous().view(B, T, n_head * d)\n"
TYPED = "    return x.transpose(1, 2).reshape(B, T, n_head * d)"


def _ready_at_split_heads(home: Path) -> str:
    """The learner has answered split-heads' predictions (its task is open) and written all of it but
    merge_heads' last line; returns the text on disk."""

    async def unlock() -> str:
        app = make_app(home)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.course_ready.wait()
            await app.open_exercise("split-heads")
            await pilot.pause()
            for quiz in app.screen.query(QuizPanel):
                while quiz.state != "done":
                    await quiz.submit(right_answer(quiz.session.current.question))
                    await quiz.submit("")
                    await pilot.pause()
            assert app.screen.unlocked
            solution = (app.tutor.exercise("split-heads")[1].folder / "solution.py").read_text(
                encoding="utf-8"
            )
            assert solution.endswith(LAST_LINE)
            app.screen.file.write_text(solution.removesuffix(LAST_LINE), encoding="utf-8")
            return str(app.screen.file)

    return asyncio.run(unlock())


def test_the_learner_writes_the_missing_line_in_the_browser_saves_with_ctrl_s_and_passes(home):
    file = Path(_ready_at_split_heads(home))
    server = Served(home=home)
    try:
        with playwright_api.sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            view = TerminalView(page)
            sockets: list[str] = []
            page.on("websocket", lambda socket: sockets.append(socket.url))
            page.goto(server.single_link)
            view.wait_for("Attention Tutor", "Multi-head attention", timeout=60)
            size = parse_qs(urlsplit(sockets[0]).query)  # the page tells the app its size here
            assert 78 <= int(size["width"][0]) <= 82 and 22 <= int(size["height"][0]) <= 25, size
            view.press("Control+p")
            view.wait_for(say("cmd.search", "en"), timeout=10)  # the palette's prompt
            view.type("split-heads")
            view.wait_for("Split into heads and merge back", timeout=30)
            view.press("Enter")
            view.wait_for("e: edit here", timeout=30)

            view.press("e")
            view.wait_for("Save and grade", "split_heads.py", timeout=30)
            view.press(*["ArrowDown"] * 40)  # to the last line (PageDown moved the cursor after typing began)
            view.type(TYPED)
            view.wait_for("split_heads.py ●")
            view.press("Escape")  # not saved: asked first
            view.wait_for("Unsaved changes", "Keep editing", "Discard changes")
            view.press("Enter")  # keep editing
            view.wait_until_gone("Unsaved changes")

            view.press("Control+s")
            view.wait_for("All checks pass (6/6)", timeout=60)
            assert file.read_text(encoding="utf-8").endswith(TYPED)
            view.press("Escape")  # saved: leaves at once
            view.wait_until_gone("Save and grade")
            assert "All checks pass" in view.text()
            browser.close()
    finally:
        server.stop()
