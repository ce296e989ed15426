"""The app's prose (tutor.ui.rich_markdown) breaks lines as tutor.wrap does: Chinese between characters with
the line-start rules, English between words; lines at most 100 columns; code wrapped, never cut;
emphasis on Chinese bold; and nothing lost to an ellipsis in a table cell."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from tests.ui_helpers import lesson_laid_out, plain, until
from tutor.ui.rich_markdown import MAX_WIDTH, Prose, ProseText
from tutor.wrap import NO_LINE_END, NO_LINE_START

ZH = (
    "这个办法几乎不花代价：把每个字向量的 C 个数切成 h 组，每组各自做一遍注意力。"
    "顺序是先 `view` 再 `transpose`，一个字的 32 个数在内存里是挨着存的，所以切的是每个字自己的向量。"
)


def _lines(renderable, width: int) -> list[str]:
    return [line.rstrip() for line in plain(renderable, width).splitlines()]


def test_chinese_prose_breaks_between_characters_and_no_line_starts_with_closing_punctuation():
    for width in range(16, 61):
        lines = [line for line in _lines(Prose(ZH), width) if line]
        assert all(cell_len(line) <= width for line in lines)
        assert not [line for line in lines[1:] if line[0] in NO_LINE_START], width
        assert not [line for line in lines[:-1] if line[-1] in NO_LINE_END], width
        assert "".join(lines).replace(" ", "") == ZH.replace(" ", "").replace("`", "")
        # a line is short only where a whole word (`transpose`) or a punctuation rule moves on
        assert all(cell_len(line) >= width - 12 for line in lines[:-1]), (width, lines)


words = st.text(alphabet="abcdefghijklmnop", min_size=1, max_size=14)


@given(st.lists(words, min_size=1, max_size=40), st.integers(min_value=16, max_value=120))
def test_english_prose_never_breaks_inside_a_word(text: list[str], width: int):
    lines = _lines(Prose(" ".join(text)), width)
    assert all(cell_len(line) <= width for line in lines)
    assert " ".join(lines).split() == text


def test_lines_stop_at_a_readable_width_on_a_wide_terminal():
    text = "Attention in each head works on its own slice of the model dimension. " * 12
    lines = _lines(Prose(text), 170)
    assert max(map(len, lines)) <= MAX_WIDTH and len(lines) > 1
    assert max(map(len, _lines(Prose(text), 60))) <= 60


def test_a_long_command_in_a_code_block_wraps_and_keeps_every_character():
    command = "python -m tutor experiment train-compare --set vary=heads --set steps=1000 --set seeds=2"
    text = f"Run:\n\n    {command}\n\nthen look."
    lines = _lines(Prose(text), 60)
    shown = " ".join(lines)
    assert "steps=1000" in shown and "seeds=2" in shown
    assert " ".join(shown.replace("↪", " ").split()).count(command) == 1
    # it goes on under its own start after "↪", not at the block's edge
    (going_on,) = [line for line in lines if "↪" in line]
    (start,) = [line for line in lines if "python -m tutor" in line]
    assert going_on.index("↪") == start.index("python")


def test_emphasis_on_chinese_is_bold_not_italic_and_on_english_stays_italic():
    console = Console(width=80, file=open(os.devnull, "w"), color_system="truecolor")
    segments = list(console.render(Prose("这是*内容*，not *this*")))
    style = {s.text: s.style for s in segments if s.text in ("内容", "this")}
    assert style["内容"].bold and not style["内容"].italic
    assert style["this"].italic


def test_a_wide_character_line_ending_at_the_edge_keeps_its_last_word_in_a_table_cell():
    """Rich measures a line's trailing space in characters, not cells: with 💡 (two cells) on the
    line, its last word became "…" ("slopes … and 2")."""
    hint = "💡 6 heads: the 4-head slopes [1/4, 1/16, 1/64, 1/256], then slopes 0 and 2 of the 8-head list"
    for width in range(66, 80):
        table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
        table.add_column(width=1)
        table.add_column(ratio=1)
        table.add_row("", ProseText(hint))
        shown = plain(table, width)
        assert "…" not in shown and " ".join(shown.split()) == hint, width


def test_chinese_table_cells_may_be_narrower_than_their_longest_run():
    """A cell's smallest width is its widest unbreakable piece, not its whole Chinese run."""
    table = Prose("| 步骤 | 含义 |\n|---|---|\n| view | 把三十二个通道看成四组、每组八个 |\n")
    lines = _lines(table, 30)
    assert all(cell_len(line) <= 30 for line in lines)
    assert not [line for line in lines if "把三十二个通道看成四组、每组八个" in line]  # it wrapped
    assert "把三十二个通道看成四组、每组八个" in "".join("".join(lines).split())


def _screen_lines(app, region) -> list[str]:
    """What the terminal shows inside `region` of the screen, line by line."""
    strips = app.screen._compositor.render_strips()
    rows = ["".join(segment.text for segment in strip) for strip in strips]
    return [row[region.x : region.right].rstrip() for row in rows[region.y : region.bottom]]


async def test_the_chinese_lesson_breaks_between_characters_and_never_before_a_comma(home):
    from tests.ui_helpers import make_app

    app = make_app(home, "zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_laid_out(app))
        await pilot.pause()  # drawn
        prose = app.screen.query(".prose").first()
        lines = [line for line in _screen_lines(app, prose.region) if line.strip()]
        assert len(lines) > 5
        assert not [line for line in lines if line.strip()[0] in NO_LINE_START]
        width = prose.content_region.width
        full = [line for line in lines[:-1] if cell_len(line) >= width - 12]
        assert len(full) >= len(lines) // 2  # Chinese lines run to the edge, not to the last space


async def test_on_a_wide_terminal_the_lesson_lines_stop_at_a_readable_width(home):
    from tests.ui_helpers import make_app

    app = make_app(home, "en")
    async with app.run_test(size=(200, 50)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("positions")
        await until(pilot, lambda: lesson_laid_out(app))
        await pilot.pause()  # drawn
        prose = app.screen.query(".prose").first()
        lines = [line.rstrip() for line in _screen_lines(app, prose.region)]
        assert max(cell_len(line) for line in lines) <= MAX_WIDTH
        assert max(cell_len(line) for line in lines) >= MAX_WIDTH - 15  # and use that width


async def test_the_chinese_quiz_breaks_its_prompts_between_characters(home):
    from tests.ui_helpers import make_app, right_answer
    from tutor.ui.widgets.quiz_panel import QuizPanel

    app = make_app(home, "zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("positions")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        checked = 0
        while quiz.state != "done" and checked < 6:
            prompt = quiz.query_one(".q-prompt")
            lines = [
                line.rstrip() for line in plain(prompt.content, prompt.content_region.width).splitlines()
            ]
            lines = [line for line in lines if line.strip()]
            assert all(cell_len(line) <= prompt.content_region.width for line in lines)
            assert not [line for line in lines if line.strip()[0] in NO_LINE_START]
            checked += len(lines) > 1
            await quiz.submit(right_answer(quiz.session.current.question))
            if quiz.state == "rating":
                await quiz.submit("3")
            await quiz.submit("")
            await pilot.pause()
        assert checked >= 2  # prompts long enough to wrap were looked at


def test_an_experiments_note_breaks_like_prose_and_keeps_its_styles():
    from tutor.experiments import render
    from tutor.experiments.result import Result, TextPanel
    from tutor.ui.widgets.result_view import panel_widgets

    panel = TextPanel(title="读表", text=ZH)
    (note,) = panel_widgets(Result(experiment="x", params={}, metrics={}, panels=[panel]), "zh")
    original = render.note(panel, "zh")
    assert isinstance(note.content, ProseText) and note.content.plain == original.plain
    assert (note.content.style, note.content.spans) == (original.style, original.spans)
    for width in (30, 41, 58):
        lines = [line for line in _lines(note.content, width) if line]
        assert not [line for line in lines if line[0] in NO_LINE_START], width
