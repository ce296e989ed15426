"""Keys that move the learner: `e` right after `n`, Esc to home and back, continue
across a restart, F4 to the lesson's own exercise, `t` and `e` in the key bar, the palette's
ranking for an experiment's name, a broken lessons folder on home, and home's header in German."""

from __future__ import annotations

import re
import shutil

import pytest
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static

from tests.ui_helpers import aim_done, lesson_built, lesson_laid_out, make_app, palette_hits, settle, until
from tutor.settings import shipped_lessons_dir
from tutor.ui.screens.exercise import ExerciseScreen
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.widgets.experiment_panel import ExperimentPanel
from tutor.ui.widgets.key_bar import KeyBar


def _prose(app) -> VerticalScroll:
    return app.screen.query_one("#prose", VerticalScroll)


async def test_e_right_after_n_moves_to_the_next_panel_every_time(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_laid_out(app))
        screen = app.screen
        panels = list(screen.query(ExperimentPanel))

        def at_chosen() -> bool:
            prose = _prose(app)
            chosen = screen.chosen
            return chosen is not None and prose.scroll_y == min(screen._content_y(chosen), prose.max_scroll_y)

        for _ in range(3):
            await pilot.press("n")
            section_top = screen._content_y(screen.query_one(f"#sec-{screen.current_section}"))
            await pilot.press("e")  # no pause: the section's aim is still going
            await until(pilot, at_chosen)
            chosen = screen.chosen
            assert chosen is not None
            assert chosen is next(p for p in panels if screen._content_y(p) >= section_top - 1)
            prose = _prose(app)
            assert prose.scroll_y == min(screen._content_y(chosen), prose.max_scroll_y)


async def test_e_past_the_last_panel_says_so_before_it_goes_back_to_the_first(home):
    """positions' last section has no panel: n to it, then e, used to jump back to the lesson's first
    panel without a word. Now e says there is none further on and stays; e again goes to the first."""
    from tutor.texts import say

    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await until(pilot, lambda: lesson_laid_out(app))
        screen = app.screen
        last = screen.lesson.sections[-1].id
        screen.go_to(section=last)
        await until(pilot, lambda: aim_done(app))
        panels = list(screen.query(ExperimentPanel))
        assert all(screen._content_y(p) < _prose(app).scroll_y for p in panels)  # none further on
        where = _prose(app).scroll_y
        await pilot.press("e")
        said = say("lesson.last_experiment", "en")
        await until(pilot, lambda: said in [n.message for n in app._notifications])
        assert _prose(app).scroll_y == where and screen.current_section == last
        await pilot.press("e")
        await until(pilot, lambda: screen.chosen is panels[0])


async def test_esc_to_home_and_back_lands_where_the_learner_was(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await until(pilot, lambda: lesson_laid_out(app))
        await pilot.press("n", "n")
        await pilot.press("down", "down", "down")  # the learner reads on, mid-aim
        await until(pilot, lambda: aim_done(app))
        where = _prose(app).scroll_y
        for back in ("enter", "f2", "c"):
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, HomeScreen))
            table = app.screen.query_one("#lessons", OptionList)
            assert table.get_option_at_index(table.highlighted).id == "positions"  # Enter opens it
            await pilot.press(back)
            await settle(app, 0.5)
            assert isinstance(app.screen, LessonScreen) and app.screen.lesson_id == "positions", back
            assert _prose(app).scroll_y == where, back


@pytest.mark.slow  # test_ui_edges' continue-after-a-restart test proves the line scrolled to comes back
async def test_continue_after_a_restart_returns_to_the_line_in_the_section(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        lesson = app.tutor.lesson("rope-alibi")
        await app.open_lesson("rope-alibi", section=lesson.sections[2].id)
        await until(pilot, lambda: aim_done(app))
        aimed = _prose(app).scroll_y
        await pilot.press(*["down"] * 5)
        await until(pilot, lambda: _prose(app).scroll_y == aimed + 5)
        where = (app.screen.current_section, _prose(app).scroll_y)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
    assert app.tutor.store is not None
    again = make_app(home)
    async with again.run_test(size=(80, 24)) as pilot:
        await again.course_ready.wait()
        await pilot.press("c")
        await settle(again, 2.0)
        assert isinstance(again.screen, LessonScreen) and again.screen.lesson_id == "rope-alibi"
        assert (again.screen.current_section, _prose(again).scroll_y) == where


async def test_f4_opens_the_exercise_of_the_lesson_the_learner_is_in(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await until(pilot, lambda: lesson_built(app))
        await pilot.press("f4")
        await settle(app)
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise_id == "three-layers"

        lesson = app.tutor.lesson("rope-alibi")
        alibi = next(ex for ex in lesson.exercises if ex.id == "alibi")
        await app.open_lesson("rope-alibi", section=alibi.section)
        await until(pilot, lambda: lesson_built(app) and app.screen.current_section == alibi.section)
        await pilot.press("f4")
        await settle(app)
        assert app.screen.exercise_id == "alibi"  # the section's own exercise

        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("f4")  # from home: still the lesson the learner was in
        await settle(app)
        assert app.screen.exercise_id == "alibi"


@pytest.mark.slow  # 6-10 s: over the default run's budget (docs/development.md); CI's slow run has it
async def test_t_and_e_are_in_the_key_bar_at_80_columns_in_every_language(home):
    for lang in ("en", "de", "zh"):
        app = make_app(home, lang)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.course_ready.wait()
            await app.open_lesson("multi-head")
            await until(pilot, lambda app=app: lesson_built(app))
            shown = str(app.screen.query_one(KeyBar).content)
            assert re.search(r"\be \S", shown) and re.search(r"\bt \S", shown), (lang, shown)
            assert " c " not in shown  # cancel shows only while something runs


async def test_the_palette_lists_the_experiment_and_exercise_named_alibi_first(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        prompts = await palette_hits(pilot, app, "alibi")
        shown = [p.splitlines()[0] for p in prompts]
        assert shown[0].endswith("(alibi)") and shown[1].endswith("(alibi)"), shown
        assert {s.split(":")[0] for s in shown[:2]} == {"Experiment", "Exercise"}
        text = "\n".join(prompts)
        assert "18 questions" in text and "18 ?" not in text


async def test_the_palette_typed_into_before_the_course_is_loaded_lists_it_once_loaded(home):
    """ctrl+p and 'dk-scaling' a key at a time while the app still loads, held up by another tutor
    opening the same progress store (its open lock): the experiment is listed as soon as the course is
    there, not 'No matches found' for good. Home lists the cards kept by the last start before the
    course is loaded, and the palette searches again only on a key (a served class's test under load)."""
    import fcntl
    import os

    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input

    home.mkdir(parents=True, exist_ok=True)
    other = os.open(home / "progress.sqlite3.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(other, fcntl.LOCK_EX)
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        try:
            await pilot.press("ctrl+p")
            await until(
                pilot,
                lambda: isinstance(app.screen, CommandPalette) and app.screen.query_one(Input).has_focus,
            )
            await pilot.press(*"dk-scaling")
            await pilot.pause(0.3)
            typed_first = not app.course_ready.is_set()
        finally:
            os.close(other)  # and with it the lock: the store opens, the course is loaded
        await app.course_ready.wait()

        def listed() -> list[str]:
            found = app.screen.query_one(CommandList)
            return [str(found.get_option_at_index(i).prompt) for i in range(found.option_count)]

        await until(pilot, lambda: any("(dk-scaling)" in p for p in listed()))
        assert typed_first, "the course was loaded before the query was typed: this shows nothing"
        assert listed()[0].startswith("Experiment") and "No matches found" not in "".join(listed())


async def test_a_broken_lessons_folder_shows_problems_as_file_line_field_message(home, tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(shipped_lessons_dir(), lessons, ignore=shutil.ignore_patterns("__pycache__"))
    broken = lessons / "02-positions" / "quiz.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("id = ", "idd = ", 1), encoding="utf-8")
    app = make_app(home, lessons=lessons)
    async with app.run_test(size=(100, 30)):
        await app.course_ready.wait()
        await settle(app)
        errors = str(app.screen.query_one("#home-errors", Static).content)
        assert "Problem(" not in errors and "PosixPath" not in errors
        line = next(x for x in errors.splitlines() if "quiz.toml" in x)
        assert re.search(r"02-positions/quiz\.toml:\d+: question\[?\S*: \S", line), line


async def test_the_german_home_header_keeps_its_columns_apart_at_80_columns(home):
    app = make_app(home, "de")
    async with app.run_test(size=(80, 24)):
        await app.course_ready.wait()
        await settle(app)
        head = str(app.screen.query_one("#lessons-head", Static).content)
        assert re.search(r"Gelesen +Quiz +Übungen +Fällig", head), head
        table = app.screen.query_one("#lessons", OptionList)
        rows = [str(table.get_option_at_index(i).prompt) for i in range(table.option_count)]
        for lesson, row in zip(app.tutor.lessons, rows, strict=True):
            assert lesson.title["de"] in row  # whole, not cut
