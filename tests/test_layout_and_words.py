"""How the tutor lays out and words what it shows: Chinese texts with full-width punctuation, formulas
kept whole and no line starting with closing punctuation (home's lesson description too), code lines
going on under their own indentation (the reference solution in a terminal), the grading box in a
learner's words, and a grade's time as long as the learner waited."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from quiz_fixtures import Learner
from rich.cells import cell_len
from textual.widgets import Static

from tests.grading_helpers import probe_course
from tests.ui_helpers import make_app
from tutor.content.loader import load_course
from tutor.grading.runner import grade_code
from tutor.grading.text import isolation_text
from tutor.progress.store import Store
from tutor.settings import shipped_lessons_dir
from tutor.texts import catalogue, say
from tutor.wrap import CONTINUED, NO_LINE_START, wrap, wrap_code

# --- Chinese punctuation ---------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# code keeps its ASCII punctuation: `code`, {placeholders}, calls and indexing (Linear(d, d), 2^(−8/n),
# x[0, 1]) and tuples ((2, 5, 8))
_CODE = re.compile(
    r"`[^`]*`|\{[^{}]*\}|[\w^.]+\([^()]*\)|\w+\[[^\[\]]*\]|\([0-9A-Za-z_\s×*/+\-]*,[0-9A-Za-z_\s,×*/+\-]*\)"
)


def ascii_punctuation_in_chinese(text: str) -> list[str]:
    """The ASCII : , ( ) in `text` whose nearest character on either side (spaces aside) is Chinese,
    each with what stands around it; code keeps its own."""
    masked = _CODE.sub(lambda m: "x" * len(m.group()), text)
    found = []
    for i, ch in enumerate(masked):
        left, right = masked[:i].rstrip()[-1:], masked[i + 1 :].lstrip()[:1]
        if ch in ":,()" and (_CJK.match(left) or _CJK.match(right)):
            found.append(text[max(i - 4, 0) : i + 5])
    return found


def test_chinese_texts_use_full_width_punctuation():
    assert len(ascii_punctuation_in_chinese("练习: 拆分多头 (split-heads)")) == 2  # ":" and "("
    assert ascii_punctuation_in_chinese("一个 Linear(d, d) 与 2^(−8/{n}) 开始，如 (2, 5, 8)") == []
    found = {
        key: bad
        for key, text in catalogue("zh").items()
        if not key.startswith("typed.")  # lists of words a learner may type, split at ","
        and (bad := ascii_punctuation_in_chinese(text))
    }
    assert not found, found


def test_a_label_and_its_text_are_joined_the_languages_way():
    assert say("word.labelled", "zh", label="练习", text="拆分多头") == "练习：拆分多头"
    assert say("word.named", "zh", name="拆分多头", id="split-heads") == "拆分多头（split-heads）"
    assert say("word.labelled", "de", label="Übung", text="x") == "Übung: x"


# --- prose and code on narrow screens -------------------------------------------------------


def test_a_formula_stays_on_one_line_and_no_line_starts_with_closing_punctuation():
    text = "怎样把 C 个通道切成 h 个头、每头 d_k = C/h（逐步给出每次变形后的形状）；参数量都是 4·C² + 4·C。"
    for width in range(20, 70):
        lines = wrap(text, width)
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        assert not [line for line in lines if line[:1] in NO_LINE_START], (width, lines)
        assert not [line for line in lines if line.rstrip().endswith(("=", "+"))], (width, lines)
        assert any("d_k = C/h" in line for line in lines) and any("4·C² + 4·C" in line for line in lines)
    assert wrap("the loss = 5.9 at the end", 12) == ["the", "loss = 5.9", "at the end"]


def test_a_long_line_of_code_goes_on_under_its_own_indentation():
    code = "def f(x):\n        return some_function(first_argument, second_argument) + another_one(x)\n"
    shown = wrap_code(code, 40).split("\n")
    assert all(cell_len(line) <= 40 for line in shown), shown
    assert shown[:2] == ["def f(x):", "        return"]  # broken after a space
    assert [line[: 8 + len(CONTINUED)] for line in shown[2:-1]] == [" " * 8 + CONTINUED] * (len(shown) - 3)
    joined = " ".join(line.removeprefix(" " * 8 + CONTINUED) for line in shown[1:-1])
    assert " ".join(joined.split()) == " ".join(code.split("\n")[1].split())
    assert wrap_code("x = 1\n", 40) == "x = 1\n"  # short lines are left as they are


def test_the_solution_at_an_80_column_terminal_keeps_its_shape(home: Path) -> None:
    ex = load_course(shipped_lessons_dir()).exercise("split-heads")
    with Store(home) as store:
        store.record_submission(ex.id, sha256="0" * 64, status="pass", score=6, max_score=6)
    source = (ex.folder / "solution.py").read_text(encoding="utf-8")
    assert max(map(len, source.splitlines())) > 80  # the test means something
    learner = Learner(home, "exercise", "solution", ex.id, cols=80)
    code, out = learner.finish()
    assert code == 0, out
    lines = out.rstrip("\n").split("\n")
    assert max(cell_len(line) for line in lines) <= 80
    going_on = [(above, line) for above, line in zip(lines, lines[1:], strict=False) if CONTINUED in line]
    assert going_on
    for above, line in going_on:  # under the line it continues, never at column 0
        indent = len(line) - len(line.lstrip())
        assert line.lstrip().startswith(CONTINUED) and indent == len(above) - len(above.lstrip())
    assert " ".join(out.replace(CONTINUED, " ").split()) == " ".join(source.split())


async def test_the_chinese_lesson_description_on_home_keeps_formulas_whole(home: Path) -> None:
    app = make_app(home, lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        summary = app.screen.query_one("#lesson-summary", Static)
        for size in ((80, 24), (100, 40)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            width = summary.content_region.width
            drawn = [summary.render_line(y).text.rstrip() for y in range(summary.size.height)]
            lines = [line.strip() for line in drawn]
            assert all(lines), drawn  # no blank line under it: its height is measured as it is drawn
            assert len(lines) >= 2 and max(cell_len(line) for line in lines) <= width, lines
            assert any("d_k = C/h" in line for line in lines), lines  # not "每头 d_k =" and then a break
            assert not [line for line in lines if line.endswith("=") or line[:1] in NO_LINE_START], lines
            assert all(cell_len(line) > width - 8 for line in lines[:-1]), lines  # filled, not ragged


# --- grading, in the learner's words and time -----------------------------------------------


def test_the_box_is_described_in_words_a_learner_knows():
    strong = {"level": "strong", "layers": [], "missing": []}
    assert (
        isolation_text(strong, "en")
        == "Your code ran in a sealed box: no network, no files outside its folder."
    )
    partial = {"level": "partial", "layers": [], "missing": ["private-root", "pid-namespace"]}
    assert isolation_text(partial, "de") == (
        "Dein Code lief in einer Box, die dieses System nicht ganz schließen konnte (es fehlt: eigenes "
        "Wurzelverzeichnis, PID-Namespace); trotzdem kein Netzwerk, keine Schreibzugriffe außerhalb seines "
        "Ordners und kein Signal an andere Prozesse."
    )
    assert "隔离" not in isolation_text(strong, "zh") and "strong" not in isolation_text(strong, "en")
    assert isolation_text({"level": "none"}, "en") is None


@pytest.mark.slow
def test_a_grade_takes_as_long_as_the_learner_waited(tmp_path: Path) -> None:
    """The judge starts cold here (a second or more); the grade's time counts that wait, where the
    judge's own clock said 0.0 s."""
    ex = load_course(probe_course(tmp_path / "lessons")).exercise("probe")
    source = (ex.folder / "solution.py").read_text(encoding="utf-8")
    began = time.monotonic()
    result = grade_code(ex, source, "probe.py")
    waited = time.monotonic() - began
    assert result.status == "pass"
    assert waited * 0.9 <= result.duration_s <= waited, (result.duration_s, waited)
