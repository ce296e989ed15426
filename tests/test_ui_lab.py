"""The lab (exercise screen) at 80 columns: the keys scroll at once, a new grade or hint comes into
view, texts wrap and are never cut, and a failing grade helps one tier at a time, as the CLI does."""

from __future__ import annotations

import shutil
import time

from textual.containers import VerticalScroll
from textual.widgets import Static

from tests.ui_helpers import drawn_text, make_app, plain, settle, store_locked, unlock_exercise, until
from tutor.grading.text import render

SIZE = (80, 24)


def _in_view(box: VerticalScroll, widget) -> bool:
    top = widget.region.y
    return box.region.y <= top and widget.region.bottom <= box.region.bottom


async def _copy_and_grade(app, pilot, screen, name: str) -> None:
    shutil.copyfile(app.tutor.exercise(screen.exercise_id)[1].folder / name, screen.file)
    await pilot.press("g")
    await settle(app, 0.3)


async def test_the_keys_act_at_once_scrolling_without_tab_and_a_hint_while_the_store_is_busy(home):
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "alibi")
        box = screen.query_one("#ex-box", VerticalScroll)
        assert app.focused is box and box.max_scroll_y > 0
        await pilot.press("down", "down")
        assert box.scroll_y == 2
        await pilot.press("pagedown")
        assert box.scroll_y > 2
        store = app.tutor.store
        with store_locked(app):  # the reveal is recorded by the writer thread once the lock is free
            start = time.monotonic()
            await pilot.press("h")
            assert time.monotonic() - start < 2 and len(list(screen.query(".ex-hint"))) == 1
        await until(pilot, lambda: [r.hint for r in store.hint_reveals("alibi")] == ["0"])


async def test_the_command_to_copy_wraps_whole_at_80_columns(home):
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "head-count")
        task = drawn_text(screen.query_one("#ex-task", Static))
        assert "--set vary=heads --set" in task and "↪ steps=1000 --set seeds=2" in task  # goes on, marked
        lines = plain(screen.query_one("#ex-task", Static).content, 76).splitlines()
        assert all(len(line.rstrip()) <= 76 for line in lines)


async def test_a_failing_grade_says_what_is_wrong_and_the_fix_comes_one_hint_at_a_time(home):
    """The app follows the CLI's rule (tutor.grading.hints): no check's own hint until every general
    hint has been asked for, then only the first failure's; until then a line names the next hint."""
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "alibi")
        ex = app.tutor.exercise("alibi")[1]
        assert len(ex.hints) == 2
        box = screen.query_one("#ex-box", VerticalScroll)
        checks = screen.query_one("#ex-checks", Static)
        await pilot.press("g")
        await settle(app, 0.3)
        result = screen.result
        first = result.first_failure
        assert result.status != "pass" and first.hint
        # scrolled to it: the whole result where it fits, else from its status line (tall at 80×24)
        status = screen.query_one("#ex-status")
        assert _in_view(box, status) and (_in_view(box, checks) or status.region.y - box.region.y <= 2)
        assert box.region.y <= checks.region.y < box.region.bottom
        shown = drawn_text(checks)
        assert "💡" not in shown and "Stuck? h shows hint 1 of 2." in shown
        assert all(" ".join(c.message.split()) in shown for c in result.checks if c.status != "pass")
        cli = render(result, ex, "en", hints_seen=0)
        assert "hint 1 of 2" in cli and "hint:" not in cli  # the same step in the terminal

        await pilot.press("h")
        await settle(app, 0.3)
        hints = list(screen.query(".ex-hint").results(Static))
        assert len(hints) == 1 and _in_view(box, hints[0])  # the new hint is on screen
        assert "h shows hint 2 of 2" in drawn_text(checks) and "💡" not in drawn_text(checks)

        await pilot.press("h")
        await settle(app, 0.3)
        hints = list(screen.query(".ex-hint").results(Static))
        assert len(hints) == 2 and _in_view(box, hints[1])
        shown = drawn_text(checks)
        assert "Stuck?" not in shown and shown.count("💡") == 1
        assert f"💡 {' '.join(first.hint.split())}" in shown  # the first failure's own, after them all
        assert f"hint: {first.hint}" in render(result, ex, "en", hints_seen=2)


async def test_check_hints_are_shown_whole_at_80_columns(home):
    """Two hints that lost a word to an ellipsis: "slopes … and 2", "softma… gives"."""
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "alibi")
        await pilot.press("h", "h")
        checks = screen.query_one("#ex-checks", Static)
        for i, (broken, words) in enumerate(
            (
                ("broken/power_of_two_only.py", "then slopes 0 and 2 of the 8-head list"),
                ("broken/no_causal_mask.py", "so softmax gives those keys weight 0."),
            )
        ):
            shutil.copyfile(app.tutor.exercise(screen.exercise_id)[1].folder / broken, screen.file)
            await pilot.press("g")
            status = drawn_text(screen.query_one("#ex-status", Static))
            # while a grade runs, the one before it stays dimmed and says it is the previous result
            assert checks.has_class("-stale") == bool(i), status
            assert status == ("grading… (below: the previous result)" if i else "grading…")
            await settle(app, 0.3)
            assert not checks.has_class("-stale")
            assert words in screen.result.first_failure.hint
            shown = drawn_text(checks)
            assert words in shown and "…" not in shown


async def test_the_unlocked_solution_wraps_and_no_line_is_cut(home):
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "alibi")
        await _copy_and_grade(app, pilot, screen, "solution.py")
        assert screen.result.status == "pass"
        await pilot.press("s")
        await settle(app, 0.3)
        solution = screen.query_one("#ex-solution", Static)
        box = screen.query_one("#ex-box", VerticalScroll)
        assert solution.display and box.region.y <= solution.region.y < box.region.bottom  # its top in view
        width = solution.content_region.width
        drawn = plain(solution.content, width)
        assert max(len(line.rstrip()) for line in drawn.splitlines()) <= width
        source = (app.tutor.exercise("alibi")[1].folder / "solution.py").read_text(encoding="utf-8")
        long_lines = [line.strip() for line in source.splitlines() if len(line) > width - 4]
        assert long_lines  # the test means something: some lines are wider than the screen
        # a long line goes on under its own indentation after "↪", never at column 0
        drawn_lines = [line.rstrip() for line in drawn.splitlines() if line.strip()]
        going_on = [
            (above, line) for above, line in zip(drawn_lines, drawn_lines[1:], strict=False) if "↪" in line
        ]
        assert going_on
        indent = [len(line) - len(line.lstrip()) for pair in going_on for line in pair]
        assert all(below == above for above, below in zip(indent[::2], indent[1::2], strict=True)), going_on
        flat = " ".join(drawn.replace("↪", " ").split())
        assert all(" ".join(line.split()) in flat for line in source.splitlines() if line.strip())
