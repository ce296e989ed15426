"""What the quiz says, built once (tutor.quiz.feedback) for the terminal and the app, and how the
plain terminal breaks its lines (tutor.wrap)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from quiz_fixtures import ANSWERS, tiny_lesson
from rich.cells import cell_len

from tutor.progress.store import Store
from tutor.quiz.feedback import Line, counter, feedback_lines, open_answer_lines, review_when
from tutor.quiz.session import Item, QuizSession
from tutor.wrap import NO_LINE_END, NO_LINE_START, reflow, wrap

RIGHT = {qid: right for qid, right, _ in ANSWERS}
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _session(home: Path, question: str) -> QuizSession:
    lesson = tiny_lesson()
    store = Store(home, now=lambda: NOW)
    item = next(Item(lesson, q) for q in lesson.quiz if q.id == question)
    session = QuizSession(store, [item], mode="lesson")
    session.next_question()
    return session


def test_a_wrong_number_gets_its_reading_the_answer_the_explanation_and_what_comes_next(home: Path) -> None:
    fb = _session(home, "param-count").answer("256^2")
    assert feedback_lines(fb, "en", NOW) == [
        Line("wrong", "✗ Not quite"),
        Line("quiet", "read your answer as 65,536"),
        Line("plain", "The answer: 263,168 ± 5263.36 parameters"),
        Line("plain", "4·256² + 4·256 = 263,168."),
        Line("quiet", "Try it again later: it comes back in this sitting."),
        Line("quiet", "Next review tomorrow (2026-03-03)"),
    ]


def test_a_wrong_choice_says_why_not_in_the_learners_language(home: Path) -> None:
    fb = _session(home, "same-params").answer(["times8"])
    lines = feedback_lines(fb, "de", NOW)
    assert lines[:2] == [Line("wrong", "✗ Nicht ganz"), Line("plain", "Die Antwort: stays the same")]
    assert (
        Line("why", "Warum nicht „grows 8×“: Heads split d_model; they do not add new full-size matrices.")
        in lines
    )
    assert lines[-1] == Line("quiet", "Nächste Wiederholung morgen (2026-03-03)")


def test_a_right_answer_is_explained_too(home: Path) -> None:
    fb = _session(home, "head-shape").answer("1 4 5 8")
    assert [line.tone for line in feedback_lines(fb, "en", NOW)] == ["right", "quiet", "plain", "quiet"]
    assert feedback_lines(fb, "zh", NOW)[0] == Line("right", "✓ 正确")


def test_an_open_question_keeps_the_learners_own_answer_beside_the_model_answer(home: Path) -> None:
    session = _session(home, "why-heads")
    question = session.current.question
    assert open_answer_lines(question, "they look at different things", "en") == [
        Line("plain", "Your answer: they look at different things"),
        Line(
            "plain", "Model answer: Different heads can specialise on different relations at the same cost."
        ),
    ]
    assert open_answer_lines(question, None, "zh")[0].text.startswith("参考答案：")
    fb = session.answer("again", note="they look at different things")
    lines = feedback_lines(fb, "zh", NOW)
    assert lines[0] == Line("warn", "已自评：重来")
    assert Line("quiet", "稍后再试一次：这题本轮还会再出现。") in lines


def test_next_review_is_said_in_days() -> None:
    assert review_when(NOW, NOW, "en") == "today"
    assert review_when(NOW + timedelta(days=1), NOW, "de") == "morgen"
    assert review_when(NOW + timedelta(days=8), NOW, "zh") == "8 天后"


def test_the_counter_names_a_question_coming_back(home: Path) -> None:
    lesson = tiny_lesson()
    session = QuizSession.for_lesson(Store(home, now=lambda: NOW), lesson)
    labels = []
    while (item := session.next_question()) is not None:
        labels.append(counter(session, item, "en"))
        missed_once = item.question.id == "which-split" and not session.is_repeat(item)
        session.answer(["q", "proj"] if missed_once else RIGHT[item.question.id])
    assert labels == ["1/6", "2/6", "3/6", "4/6", "5/6", "6/6", "again · 4/6"]


# --- line breaking -------------------------------------------------------------------------


def test_source_line_breaks_are_soft_but_paragraphs_and_list_items_stay() -> None:
    assert reflow("the same bag\nof characters  \n  gives the same result") == (
        "the same bag of characters gives the same result"
    )
    assert (
        reflow("在最后一个位置上对\n“白日依山尽”和\n“山依日白尽”")
        == "在最后一个位置上对“白日依山尽”和“山依日白尽”"
    )
    assert reflow("One.\n\nTwo,\nthree.") == "One.\n\nTwo, three."
    assert reflow("Why:\n1. no table\n2. a rotation,\nnot a sum\n(Haviv et al.,\n2022) agree") == (
        "Why:\n1. no table\n2. a rotation, not a sum (Haviv et al., 2022) agree"
    )


def test_english_breaks_between_words() -> None:
    text = "Attention in each head works on its own slice of the model dimension."
    assert wrap(text, 20) == [
        "Attention in each",
        "head works on its",
        "own slice of the",
        "model dimension.",
    ]
    assert wrap("a\n\nb", 10) == ["a", "", "b"]
    assert wrap("Supercalifragilistic", 8) == ["Supercal", "ifragili", "stic"]  # longer than a line


def test_chinese_breaks_between_characters_but_not_before_closing_punctuation() -> None:
    text = "每个头都有自己的一张分数表，矩阵乘法会对前面的两维逐个计算。"
    lines = wrap(text, 20)  # ten characters per line
    assert lines == ["每个头都有自己的一张", "分数表，矩阵乘法会对", "前面的两维逐个计算。"]
    assert wrap("一二三四五六七八九，十", 18) == ["一二三四五六七八", "九，十"]  # "，" keeps its character
    assert wrap("一二三四五六七「八九」", 16) == ["一二三四五六七", "「八九」"]  # "「" does not end a line


words = st.text(alphabet="abcdefghij", min_size=1, max_size=12)
# Chinese runs, each maybe followed by one punctuation mark (as in prose: never two in a row)
phrases = st.tuples(
    st.text(alphabet="注意力机制位置编码头", min_size=1, max_size=12),
    st.sampled_from(["", "，", "。", "、", "：", "！", "）", "」", "「", "（"]),
).map("".join)


@given(st.lists(words, min_size=1, max_size=30), st.integers(min_value=12, max_value=100))
def test_english_lines_fit_and_keep_every_word_whole(text: list[str], width: int) -> None:
    lines = wrap(" ".join(text), width)
    assert all(cell_len(line) <= width for line in lines)
    assert " ".join(lines).split() == text


@given(st.lists(phrases, min_size=1, max_size=40), st.integers(min_value=6, max_value=60))
def test_chinese_lines_fit_keep_every_character_and_obey_the_punctuation_rules(
    parts: list[str], width: int
) -> None:
    text = "".join(parts)
    lines = wrap(text, width)
    assert all(cell_len(line) <= width for line in lines)
    assert "".join(lines) == text
    assert not [line for line in lines[1:] if line[0] in NO_LINE_START]
    assert not [line for line in lines[:-1] if line[-1] in NO_LINE_END]
