"""The served tutor in a real browser: Debian's chromium, headless, driven by Playwright.

A class of two (Ana in English, Bo in Chinese) served by the real `python -m tutor serve --roster`;
each test opens links as a learner would and reads the screen the page draws (tests/browser_helpers.py).
Run with `python -m pytest -m browser` (they are left out of the default run); they need
`apt-get install chromium fonts-wqy-microhei` and the test extras (playwright, pyte).
"""

from __future__ import annotations

import csv
import sqlite3

import pytest

from tests.browser_helpers import CHROMIUM, TerminalView, launch
from tests.test_serve import Served

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip("playwright.sync_api")
if not __import__("os").path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)

VIEWPORT = {"width": 1000, "height": 640}  # about 104 × 30 cells


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "class.csv").write_text("id,name,language\nana,Ana Lima,en\nbo,Bo Li,zh\n", encoding="utf-8")
    folder = root / "served"
    server = Served("--roster", str(root / "class.csv"), "--dir", str(folder), folder=folder)
    server.learner_links = {
        row["id"]: server.base + "/learn/" + row["token"]
        for row in csv.DictReader((folder / "links.csv").open(encoding="utf-8"))
    }
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


def open_as(browser, link: str) -> TerminalView:
    page = browser.new_context(viewport=VIEWPORT).new_page()
    view = TerminalView(page)
    page.goto(link)
    return view


def lesson_row(screen: str, title: str) -> str:
    return next(line for line in screen.splitlines() if title in line)


def sections_read(home) -> int:
    if not (home / "progress.sqlite3").exists():
        return 0
    with sqlite3.connect(f"file:{home / 'progress.sqlite3'}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM section_reads").fetchone()[0]


def wait_for_reads(view: TerminalView, home, at_least: int = 1, timeout: float = 20.0) -> int:
    """The app records a section as read shortly after the learner stops on it, through its writer."""
    for _ in range(int(timeout * 10)):
        if (n := sections_read(home)) >= at_least:
            return n
        view.page.wait_for_timeout(100)
    raise AssertionError(f"{home}: fewer than {at_least} sections recorded as read")


def test_a_learner_reads_runs_an_experiment_and_finds_the_progress_after_a_reload(klass, browser):
    view = open_as(browser, klass.learner_links["ana"])
    home = view.wait_for("Attention Tutor", "Multi-head attention")
    assert lesson_row(home, "Multi-head attention").split()[-4] == "0%"
    view.press("Enter")
    view.wait_for("Splitting C into heads")
    view.press("e")  # to the lesson's first experiment (the sections above it are read), and run it
    view.wait_for("Splitting into heads", "r: run")
    view.press("r")
    view.wait_for("Headline numbers", "parameters in qkv", "3,168", timeout=90)
    wait_for_reads(view, klass.folder / "learners" / "ana")
    view.page.reload()  # a new session, the same home
    home = view.wait_for("Attention Tutor", "Multi-head attention")
    read = lesson_row(home, "Multi-head attention").split()[-4]
    assert read != "0%" and read.endswith("%"), home
    view.page.context.close()


def test_the_chinese_learner_sees_home_in_chinese_drawn_with_a_cjk_font(klass, browser):
    view = open_as(browser, klass.learner_links["bo"])
    home = view.wait_for("多头注意力")
    assert "Multi-head" not in home
    # a CJK glyph drawn in the page's terminal font stack differs from a character no font has (tofu)
    drawn = view.page.evaluate(
        """() => {
            const draw = (ch) => { const c = document.createElement('canvas'); c.width = 40; c.height = 40;
                const g = c.getContext('2d'); g.font = "24px 'Roboto Mono', monospace"; g.fillText(ch, 4, 30);
                return c.toDataURL(); };
            return [draw('注'), draw('意'), draw('\\uE000')];
        }"""
    )
    assert len(set(drawn)) == 3, "the CJK characters are drawn as empty boxes: no CJK font"
    view.page.screenshot(path=str(klass.folder / "bo-home.png"))
    view.page.context.close()


def test_a_wrong_or_missing_token_is_refused_in_the_browser(klass, browser):
    page = browser.new_context(viewport=VIEWPORT).new_page()
    for path in ("/", "/learn/" + "A" * 22, "/learn/" + klass.learner_links["ana"].rsplit("/", 1)[1][:-2]):
        reply = page.goto(klass.base + path)
        assert reply.status == 403
        assert "link" in page.inner_text("body").lower()
        assert page.locator(".xterm-helper-textarea").count() == 0
    page.context.close()


def test_two_learners_at_once_see_only_their_own_progress(klass, browser):
    ana = open_as(browser, klass.learner_links["ana"])
    bo = open_as(browser, klass.learner_links["bo"])
    ana_home = ana.wait_for("Attention Tutor", "Multi-head attention")
    bo_home = bo.wait_for("多头注意力")
    if sections_read(klass.folder / "learners" / "ana") > 0:  # the first test ran: Ana has read some
        assert lesson_row(ana_home, "Multi-head attention").split()[-4] != "0%"
    assert lesson_row(bo_home, "多头注意力").split()[-4] == "0%"
    bo.press("Enter")
    bo.wait_for("为什么一个头不够")
    bo.press("n", "n")
    wait_for_reads(bo, klass.folder / "learners" / "bo")
    ana.page.reload()
    after = ana.wait_for("Attention Tutor", "Multi-head attention")
    assert lesson_row(after, "Multi-head attention") == lesson_row(ana_home, "Multi-head attention")
    for view in (ana, bo):
        view.page.context.close()
