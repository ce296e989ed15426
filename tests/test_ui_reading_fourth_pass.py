"""The learner's fourth pass, reading and state (issue 42): the reading place kept through a resize and
`t`, the keys after a dropdown, a home folder deleted at start, table headers, plain mode, and the small
ones. Pilot tests at 80×24 unless the width is what is tested."""

from __future__ import annotations

import pytest

from tests.ui_helpers import aim_over, make_app, until

SIZE = (80, 24)


def _top_of_view(screen):
    """The widget at the top of the lesson's view, the section it is in, and how far into it."""
    widget, fraction = screen._anchor()
    return widget, screen.current_section, fraction


async def _reading_in_two_lines(app, pilot):
    """The lesson "positions" opened at "two-lines", paged down into its text, the aim over."""
    await app.open_lesson("positions", "two-lines", offset=3)
    await aim_over(app)
    screen = app.screen
    await pilot.press("pagedown", "pagedown", "pagedown")
    await pilot.pause(0.3)
    assert screen._anchor()[0].has_class("prose")  # in the text, not at a section's or a panel's top
    return screen


# narrower; wider (the contents stay hidden) and back again in the slow run (each waits for an aim to end)
RESIZES = [[(60, 20)], pytest.param([(100, 30), SIZE], marks=pytest.mark.slow)]


@pytest.mark.parametrize("sizes", RESIZES)
async def test_a_terminal_resize_keeps_the_paragraph_at_the_top_of_the_view(home, sizes):
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await _reading_in_two_lines(app, pilot)
        widget, section, fraction = _top_of_view(screen)
        for size in sizes:
            await pilot.resize_terminal(*size)
            await aim_over(app, 0.2)
            now, now_section, now_fraction = _top_of_view(screen)
            assert (now, now_section) == (widget, section), size
            assert abs(now_fraction - fraction) < 0.25, size


async def test_t_while_an_opening_aim_is_under_way_keeps_the_place_it_aims_at(home):
    """`t` pressed as "continue" opens a lesson 3 lines into a section: the text above is not laid out yet,
    so the view is not at the place yet; the place is the aim's, not the half-laid-out view's."""
    from textual.containers import VerticalScroll

    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions", "two-lines", offset=3)
        await until(pilot, lambda: getattr(app.screen, "_aim_at", None) is not None)
        screen = app.screen
        await pilot.press("t")
        await aim_over(app, 0.2)
        prose = screen.query_one("#prose", VerticalScroll)
        assert screen.query_one("#toc").display  # the contents shown
        assert prose.scroll_y == screen._content_y(screen.query_one("#sec-two-lines")) + 3


async def test_r_typed_as_a_dropdown_closes_with_esc_runs_the_experiment(home):
    """Esc closes a parameter's drop-down and hands the focus back a message later: an `r` typed at once
    (or while the host is busy) reached the still-focused list, whose typing-to-search swallowed it."""
    from textual import events

    from tests.ui_helpers import panel_named, settle

    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("rope-alibi", experiment="rope-relative")
        await aim_over(app)
        panel = panel_named(app, "rope-relative")
        await pilot.press("o")
        await until(pilot, lambda: panel.form is not None and panel.form.first_field() is not None)
        app.screen.set_focus(panel.query_one("#p-dtype"))
        await pilot.press("enter")  # the drop-down opens
        await until(pilot, lambda: type(app.focused).__name__ == "SelectOverlay")
        for key, char in (("escape", "\x1b"), ("r", "r")):  # as a terminal delivers two keys typed quickly
            event = events.Key(key, char)
            event.set_sender(app)
            app._driver.send_message(event)
        await pilot.pause(0.3)
        await settle(app)
        assert panel.result is not None and panel.result.experiment == "rope-relative"


async def test_a_home_deleted_in_the_first_second_is_written_back_whole_and_the_learner_told(home):
    """The app opens the store a second or so after its first frame (which shows the progress already);
    the home removed in between was made again with an empty store: every answer lost, nothing said."""
    import shutil

    from tutor.progress.store import Store
    from tutor.texts import say

    with Store(home) as store:
        store.mark_read("positions", "two-lines")
        store.mark_read("positions", "families")
    app = make_app(home)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        shutil.rmtree(home)  # before the store is open (the course loads first)
        await app.course_ready.wait()
        said = say("err.store.written_back", "en", home=str(home), path=str(home / "progress.sqlite3"))
        await until(pilot, lambda: any(n.message == said for n in app._notifications))
        assert app.tutor.store is not None
        app.tutor.write(lambda s: s.mark_read("positions", "mask-leaks-order"))  # and what comes after
    with Store(home) as store:
        assert {r.section for r in store.sections_read()} == {"two-lines", "families", "mask-leaks-order"}


def test_a_store_deleted_as_it_opens_is_written_back_at_once(home):
    import shutil

    from tutor.progress.db import Database
    from tutor.progress.store import Store

    with Store(home) as store:
        store.mark_read("positions", "two-lines")

    class DeletedAsItOpens(Database):  # the home removed right after the file was opened
        def _open(self):
            conn = super()._open()
            shutil.rmtree(self.home)
            return conn

    db = DeletedAsItOpens(home)
    assert [n.key for n in db.take_news()] == ["err.store.written_back"]
    db.close()
    with Store(home) as store:
        assert [r.section for r in store.sections_read()] == ["two-lines"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_at_60_columns_a_wide_tables_headings_keep_every_word_whole(home, lang, monkeypatch):
    """The heads profile's nine columns at 60 columns broke "punc-/tuat-/ion"; now the columns go on in a
    second part below (layer and head again), every heading's word whole."""
    from tests.ui_helpers import learner_cli
    from tutor.texts import say

    monkeypatch.setenv("COLUMNS", "60")
    out = learner_cli(home, "experiment", "heads", lang=lang)
    assert out.returncode == 0, out.stderr
    shown = out.stdout.split()
    columns = ("previous", "punctuation", "line_break", "line_above", "rhyme", "half_slot", "entropy")
    for key in columns:
        for word in say(f"exp.heads.profile_col.{key}", lang).replace("\u00ad", "").split():
            assert word in shown, (word, out.stdout)
    assert max(map(len, out.stdout.splitlines())) <= 60


def test_plain_mode_joins_a_line_break_between_chinese_and_latin_with_a_space(home):
    from tests.ui_helpers import learner_cli

    out = learner_cli(home, "read", "multi-head", "--no-run", "--no-quiz").stdout
    assert "疑是地上霜 is not" in out  # was "霜is"
    out = learner_cli(home, "read", "positions", "--no-run", "--no-quiz").stdout
    assert "the 2nd character of 山依日白尽 sees 山依." in out  # was "sees山依"
    zh = learner_cli(home, "read", "positions", "--no-run", "--no-quiz", lang="zh").stdout
    assert "白日依山尽" in zh and "白 日" not in zh  # between Chinese characters still nothing


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_plain_mode_never_reads_a_cells_semicolon_as_the_next_column(home, lang):
    from tests.ui_helpers import learner_cli
    from tutor.settings import shipped_lessons_dir
    from tutor.texts import say

    source = (shipped_lessons_dir() / "02-positions" / f"{lang}.md").read_text(encoding="utf-8")
    row = next(line for line in source.splitlines() if line.startswith("|") and "YaRN" in line)
    cells = [c.strip() for c in row.strip("| ").split("|")]
    assert any(";" in c or "；" in c for c in cells)  # the cell that read as a column break
    out = learner_cli(home, "read", "positions", "--no-run", "--no-quiz", lang=lang).stdout
    [shown] = [line for line in out.splitlines() if cells[-1] in line]
    assert len(shown.split(say("plain.sep", lang))) == len(cells), shown


async def test_done_is_said_once_the_results_are_there_to_see(home):
    """ "done" used to come first and the results a second or two later (16 heat maps mounted after it):
    at the moment the status says it, the results are laid out."""
    from textual.widgets import Static

    from tests.ui_helpers import panel_named, settle
    from tutor.texts import say

    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head", experiment="heads")
        await aim_over(app)
        panel = panel_named(app, "heads")
        finished = say("run.finished", "en")
        status = panel.query_one(".exp-status", Static)
        seen: list[list[int]] = []  # the results' heights each time the status says "finished"
        update = status.update

        def watched(content=""):
            if finished in str(content):
                seen.append([box.size.height for box in panel.query_children(".exp-results")])
            return update(content)

        status.update = watched  # type: ignore[method-assign]
        await pilot.press("r")
        await until(pilot, lambda: bool(seen), timeout=60)
        await settle(app)
        assert seen[0] and seen[0][0] > 10, seen


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_a_tables_numbers_keep_their_trailing_zeros_and_a_flag_reads_as_words(home, lang, monkeypatch):
    """context-scaling printed 5.72 under 5.693 and 4.9 beside 4.902 (a dropped zero reads as less
    precise), and its source as "stored with the checkpoint (1) or measured now (0) 1"."""
    from tests.conftest import tutor_here
    from tutor.texts import marked, say

    # in this process: tests/test_experiments_cli.py runs experiments as a learner does
    monkeypatch.setenv("COLUMNS", "100")
    out = tutor_here("experiment", "context-scaling", "--home", str(home), "--lang", lang)
    assert out.returncode == 0, out.stderr
    rows = [line.split("│")[1:-1] for line in out.stdout.splitlines() if line.startswith("│ 16–23")]
    assert [c.strip() for c in rows[0][1:5]] == [
        marked(x, lang) for x in ("4.818", "6.713", "4.902", "5.720")
    ]
    flag = [say(f"metric_value.context-scaling.stored={v}", lang) for v in (0, 1)]
    assert any(line.rstrip().endswith(tuple(flag)) for line in out.stdout.splitlines()), out.stdout[-600:]
    assert "(1)" not in out.stdout and "（1）" not in out.stdout


def test_a_plots_single_tick_is_labelled_to_four_digits_not_six_decimals():
    from tutor.experiments.render import nice_ticks, tick_labels

    ticks = nice_ticks(8.713486, 8.713486)  # a curve that stays at one value
    assert tick_labels(ticks, "en") == ["8.713"] and tick_labels(ticks, "de") == ["8,713"]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_ctrl_p_excerpts_of_a_table_read_as_cells_and_rows_without_bars(home, lang):
    """A table's excerpt read "· · NoPos · 20.97 · 13.10 · ·": the bars of two rows as empty cells."""
    from tests.ui_helpers import palette_hits

    app = make_app(home, lang)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        prompts = await palette_hits(pilot, app, "NoPos")  # a cell of the table of measured perplexities
        tables = [p.splitlines()[0] for p in prompts if "·" in p.splitlines()[0]]
        assert tables
        for excerpt in tables:
            assert "|" not in excerpt and "· ·" not in excerpt and "--" not in excerpt, excerpt
            assert " / " in excerpt  # between rows


async def test_ctrl_p_finds_a_name_written_with_an_underscore(home):
    from tests.ui_helpers import palette_hits

    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        prompts = await palette_hits(pilot, app, "rotate_half")
        assert any("rotate_half" in p.splitlines()[0] for p in prompts), prompts


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_a_tuple_in_the_lesson_text_is_never_broken_across_lines(lang):
    """Lesson 1's prose on split_heads, "(B, T, C) to (B, h, T, C/h)", drawn as the lesson draws it at
    every width from 30 to 80: a shape is never cut in two."""
    import re

    from tests.ui_helpers import plain
    from tutor.course import open_course_cached
    from tutor.i18n import pick
    from tutor.settings import shipped_lessons_dir
    from tutor.ui.rich_markdown import Prose

    lesson = open_course_cached(shipped_lessons_dir()).lessons[0]
    body = pick(next(s for s in lesson.sections if s.id == "split-heads").body, lang)
    prose = "\n".join(line for line in body.splitlines() if not line.startswith(("|", " ", "```")))
    tuples = set(re.findall(r"(?<![\w.])\((?:[\w/]+, )+[\w/]+\)", prose))  # shapes, not a call's arguments
    assert len(tuples) >= 3, tuples
    for width in range(30, 81):
        lines = plain(Prose(prose), width).splitlines()
        for shape in tuples:
            assert any(shape in line for line in lines), (width, shape)
