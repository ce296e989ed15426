"""A toast never covers the key hint it refers to (issue 42): Textual's toasts sit bottom right, where the
key bar and the screens' key hints are (key_bar.place_toasts). Region checks on the real app, the toasts
raised by the learner's own keys, at 80x24 and 60x20."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from tests.ui_helpers import make_app, unlock_exercise, until
from tutor.ui.screens.home import HomeScreen
from tutor.ui.widgets.key_bar import KEY_HINTS, KeyBar
from tutor.ui.widgets.next_step import NextStep


def _toasts(app) -> list:
    return [toast.region for toast in app.screen.query("Toast") if toast.region.area]


def _covered(app) -> list[str]:
    """The key hints (the key bar's and the screen's) that a toast drawn now overlaps."""
    hints = [w for w in app.screen.query(KEY_HINTS) if w.display and w.region.area]
    hints += list(app.screen.query(KeyBar))
    return [
        f"{type(w).__name__}#{w.id} {w.region}" for w in hints for t in _toasts(app) if t.overlaps(w.region)
    ]


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_toast_in_the_lab_leaves_its_key_hint_line_readable(home, size):
    """The lab's "e: edit here · g: grade · h: next hint" line sits right above the key bar, where a toast
    (here f5's, the language) covered its right half: "h: next hint" under the toast saying "No more hints"."""
    app = make_app(home)
    async with app.run_test(size=size, notifications=True) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        await pilot.press("f5")
        await until(pilot, lambda: bool(_toasts(app)))
        hint = screen.query_one("#ex-file", Static)
        assert "h: next hint" in str(hint.content) or "h: nächster Tipp" in str(hint.content), hint.content
        assert hint.region.area
        assert not _covered(app), (_covered(app), _toasts(app))


async def test_a_toast_on_home_leaves_the_next_step_readable_at_60x20(home):
    app = make_app(home)
    async with app.run_test(size=(60, 20), notifications=True) as pilot:
        await app.course_ready.wait()
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, HomeScreen)
                and "n opens it" in str(app.screen.query_one(NextStep).content)
            ),
        )
        await pilot.press("f5")  # the language's toast
        await until(pilot, lambda: bool(_toasts(app)))
        assert app.screen.query_one(NextStep).region.area
        assert not _covered(app), (_covered(app), _toasts(app))
