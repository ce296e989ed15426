"""The app at its edges (issue 20): home's next step and its columns across F5, search in the lesson
text from the palette, a language switch redrawing the quiz, and Continue after a restart. Real app
(Pilot at 80×24), real store in a temporary home."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import OptionList, Static

from tests.ui_helpers import aim_over, make_app, plain, settle
from tutor.content.schema import pick

SIZE = (80, 24)


def text_of(app, selector: str) -> str:
    return " ".join(plain(app.screen.query_one(selector, Static).content, SIZE[0]).split())


def columns(app) -> list[int]:
    """Where each progress cell of the first row starts (the title column's right edge and after)."""
    table = app.screen.query_one("#lessons", OptionList)
    row = str(table.get_option_at_index(0).prompt)
    return [cell_len(row[: row.index(cell)]) for cell in ("0%", "0/", "·")]  # in terminal cells


async def test_home_names_the_next_step_in_each_language_n_does_it_and_f5_keeps_the_columns(home):
    app = make_app(home, "en")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await settle(app)
        lesson = app.tutor.lessons[0]
        first = lesson.sections[0]
        assert text_of(app, "#home-next") == (
            f"Next: read “{pick(first.title, 'en')}” in {pick(lesson.title, 'en')} · n opens it"
        )
        where = columns(app)
        await pilot.press("f5")  # de
        await settle(app)
        assert text_of(app, "#home-next") == (
            f"Als Nächstes: lies „{pick(first.title, 'de')}“ in {pick(lesson.title, 'de')} · n öffnet ihn"
        )
        await pilot.press("f5")  # zh
        await settle(app)
        assert text_of(app, "#home-next") == f"下一步：读「{pick(lesson.title, 'zh')}」的「{pick(first.title, 'zh')}」 · 按 n 打开"
        assert columns(app) == where  # the columns did not move
        await pilot.press("n")
        await aim_over(app)
        assert app.screen.lesson_id == lesson.id and app.screen.current_section == first.id
