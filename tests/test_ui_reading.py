"""'Read' means a section was on screen for a few seconds: paging through a lesson
with `n` reads nothing, staying on a section reads it, and the contents ticks and the home
screen's percentage follow the store."""

from __future__ import annotations

from textual.widgets import OptionList

from tests.ui_helpers import lesson_built, lesson_laid_out, make_app, settle, until
from tutor.settings import READ_AFTER_S
from tutor.ui.reading import ReadingClock, on_screen


def test_a_section_counts_as_on_screen_when_half_of_it_or_half_the_view_is_shown():
    assert on_screen(0, 20, 5, 15)  # whole
    assert on_screen(0, 20, 14, 24)  # 6 of 10 lines
    assert not on_screen(0, 20, 16, 26)  # 4 of 10
    assert on_screen(0, 20, -50, 50)  # longer than the view and filling it
    assert on_screen(0, 20, 10, 100)  # a long one filling half the view
    assert not on_screen(0, 20, 12, 100)  # … but not less
    assert not on_screen(0, 20, 20, 30)  # just below


def test_the_clock_reads_a_section_after_its_time_on_screen_in_all():
    clock = ReadingClock(after_s=4.0)
    assert clock.tick(0.0, ["a"]) == []  # the first tick only starts the clock
    assert clock.tick(2.5, ["a", "b"]) == []
    assert clock.tick(3.0, ["b"]) == []  # a: 1.0 s so far (a long gap counts as MAX_TICK_S)
    clock.pause()  # e.g. the learner went home
    assert clock.tick(100.0, ["a"]) == []
    for t in range(101, 104):
        newly = clock.tick(float(t), ["a"])
    assert newly == ["a"] and clock.read == {"a"}
    assert clock.tick(105.0, ["a"]) == []  # read once


async def test_paging_through_with_n_reads_nothing_and_the_contents_ticks_nothing(home):
    app = make_app(home)
    async with app.run_test(size=(120, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await until(pilot, lambda: lesson_laid_out(app))
        lesson = app.tutor.lesson("positions")
        for _ in lesson.sections:
            await pilot.press("n")
            await pilot.pause(0.4)  # the learner's pace, each section shown for a moment: time is the point
        assert app.screen.current_section == lesson.sections[-1].id
        assert app.tutor.store.sections_read("positions") == []
        toc = app.screen.query_one("#toc", OptionList)
        labels = [str(toc.get_option_at_index(i).prompt) for i in range(toc.option_count)]
        assert not any(label.startswith("✓") for label in labels)
        await pilot.press("f1")
        await settle(app)
        row = str(app.screen.query_one("#lessons", OptionList).get_option_at_index(1).prompt)
        assert " 0% " in row


async def test_a_section_on_screen_long_enough_is_read_and_ticked_and_home_counts_it(home):
    app = make_app(home)
    async with app.run_test(size=(120, 30)) as pilot:
        await app.course_ready.wait()
        lesson = app.tutor.lesson("positions")
        target = lesson.sections[1].id
        await app.open_lesson("positions", section=target)
        screen = app.screen
        screen.clock.after_s = 1.0  # READ_AFTER_S is a few seconds; the rule is the same
        assert READ_AFTER_S >= 3
        await until(pilot, lambda: target in {r.section for r in app.tutor.store.sections_read("positions")})
        read = {r.section for r in app.tutor.store.sections_read("positions")}
        assert lesson.sections[0].id not in read  # scrolled past on the way, never on screen for 1 s
        toc = screen.query_one("#toc", OptionList)
        assert str(toc.get_option_at_index(1).prompt).startswith("✓")

        # time on home does not count for the lesson underneath
        before = set(read)
        await pilot.press("f1")
        await pilot.pause(1.5)  # longer than the 1 s to read, on home: time passing is the point
        assert {r.section for r in app.tutor.store.sections_read("positions")} == before
        await settle(app)
        row = str(app.screen.query_one("#lessons", OptionList).get_option_at_index(1).prompt)
        assert f" {100 * len(before) // len(lesson.sections)}% " in row


async def test_the_reading_clock_ticks_safely_while_the_app_has_no_screen(tmp_path):
    """At shutdown Textual empties the screen stack while a lesson's timer can still fire: the lesson is then
    not showing, and its tick pauses the clock instead of raising ScreenStackError."""
    from tutor.ui.screens import on_top

    app = make_app(tmp_path / "home")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_built(app) and app.screen.showing)
        lesson = app.screen
        assert lesson.showing and on_top(lesson)
        stack = app._screen_stacks[app._current_mode]  # what Textual's shutdown leaves: no screen at all
        saved = stack[:]
        stack.clear()
        try:
            assert not lesson.showing and not on_top(lesson)
            lesson._tick()  # raised ScreenStackError before
        finally:
            stack.extend(saved)
