"""A new learner's first week in the app, at 80×24 in en, de and zh (issue 31): every value a check
measured in view, an editor that indents, keys that do what `?` says, a quiz counter that stays put."""

from __future__ import annotations

import shutil

import pytest

from tests.ui_helpers import drawn_text, make_app, settle, unlock_exercise
from tutor.grading.text import render

SIZE = (80, 24)
LANGS = ["en", "de", "zh"]


def _squeezed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("lang", LANGS)
async def test_the_lab_shows_every_checks_measured_values_on_a_pass_as_the_cli_does(home, lang):
    app = make_app(home, lang)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "three-layers")
        ex = app.tutor.exercise("three-layers")[1]
        shutil.copyfile(ex.folder / "solution.py", screen.file)
        await pilot.press("g")
        await settle(app, 0.3)
        assert screen.result.status == "pass"
        shown = _squeezed(drawn_text(screen.query_one("#ex-checks")))
        assert "order_gap(3,False)=" in shown  # the gap the causal mask leaks, with its value
        for check in screen.result.checks:  # every message the CLI prints under a check, the lab shows
            assert check.message and _squeezed(check.message) in shown
        cli = render(screen.result, ex, lang)
        assert all(_squeezed(c.message) in _squeezed(cli) for c in screen.result.checks)
