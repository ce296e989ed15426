"""Text defects of the learner's fourth pass (issue 42), each held against the lesson as the tutor loads it
(tutor.content's loader), in the languages it concerns, and against the code that makes its figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.content.loader import load_course
from tutor.i18n import LANGS
from tutor.texts import say

ROOT = Path(__file__).resolve().parents[1]
COURSE = load_course(ROOT / "tutor" / "lessons")


def _lesson(lesson_id: str):
    return next(lesson for lesson in COURSE.lessons if lesson.id == lesson_id)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _prose(lesson_id: str, lang: str) -> str:
    return _flat(" ".join(s.body[lang] for s in _lesson(lesson_id).sections))


def _quiz_text(lesson_id: str, lang: str) -> str:
    """Every text of the lesson's quiz in `lang`: prompts, choices, why, model answers, explanations."""
    out = []

    def walk(value):
        if isinstance(value, dict):
            if lang in value and isinstance(value[lang], str):
                out.append(value[lang])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk([q.model_dump() for q in _lesson(lesson_id).quiz])
    return " ".join(out)


# --- PI and YaRN keep every pair inside its trained angles; NTK's middle pairs leave them ------------------

PI_AND_YARN = {
    "en": "PI and YaRN keep every pair inside the angles it took in training",
    "de": "PI und YaRN halten jedes Paar in den Winkeln, die es im Training eingenommen hat",
    "zh": "PI 和 YaRN 让每一对都停留在训练时转到过的角度之内",
}
ONLY_PI = {"en": "only PI", "de": "nur PI", "zh": "只有 PI"}


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_3_and_its_quiz_say_yarn_too_keeps_the_trained_angles(lang):
    for text in (_prose("rope-alibi", lang), _quiz_text("rope-alibi", lang)):
        assert PI_AND_YARN[lang] in text
        assert ONLY_PI[lang] not in text.lower() if lang != "zh" else ONLY_PI[lang] not in text


def test_the_pairs_yarn_slows_fully_are_the_ones_that_could_leave_and_ntk_lets_its_middle_pairs_leave():
    """The claim, from the course's own frequencies: at the course RoPE model's L0 = 32, s = 4, d = 32,
    a pair that turns less than once in L0 could reach unseen angles at 4·L0; YaRN divides each such pair
    by s (so it stays inside), NTK divides some of them by less than s (so they leave)."""
    import math

    import torch

    from tutor.model.positions import rope_inv_freq

    d, L0, s = 32, 32, 4.0
    plain = rope_inv_freq(d, 10000.0, "none", s, L0)[0].double()
    short = plain * L0 < 2 * math.pi  # less than one turn within the trained length
    for method, stays in (("pi", True), ("yarn", True), ("ntk", False)):
        theta = rope_inv_freq(d, 10000.0, method, s, L0)[0].double()
        inside = bool(((theta * s * L0) <= (plain * L0) * (1 + 1e-9))[short].all())
        assert inside is stays, method
    ntk = rope_inv_freq(d, 10000.0, "ntk", s, L0)[0].double()
    assert bool(((plain / ntk) < s - 1e-6)[short].any())  # NTK's middle pairs, slowed by less than s
    assert torch.isclose(ntk[-1], plain[-1] / s)  # and its slowest pair as much as PI


# --- lesson 2's quiz gives RoPE's failure the lesson's cause, hedged as the lessons hedge it --------------

USUAL = {"en": "the usual explanation", "de": "die übliche erklärung", "zh": "通常的解释"}


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_2_quiz_names_unseen_angles_only_as_the_usual_explanation(lang):
    quiz = _quiz_text("positions", lang)
    assert "RoPE's trouble beyond the trained length is that the model has never seen such angles" not in quiz
    rope_why = next(
        c.why[lang]
        for q in _lesson("positions").quiz
        for c in (getattr(q, "choices", None) or [])
        if c.id == "rope" and c.why and "RoPE" in c.why[lang]
    )
    assert USUAL[lang] in rope_why.lower()
    assert USUAL[lang] in _prose("rope-alibi", lang).lower()  # the words lesson 3 gives the cause


# --- continued pre-training is "often" combined, as the lesson says ----------------------------------------

OFTEN = {"en": "often combined", "de": "oft mit", "zh": "通常"}


@pytest.mark.parametrize("lang", LANGS)
def test_the_quiz_says_continued_pretraining_is_often_combined_with_a_scaling(lang):
    whys = [
        c.why[lang]
        for q in _lesson("rope-alibi").quiz
        for c in (getattr(q, "choices", None) or [])
        if c.why and ("weights, not the frequencies" in c.why["en"])
    ]
    assert whys and all(OFTEN[lang] in why for why in whys), whys
    assert "it is combined" not in " ".join(whys)


# --- Chinese: no space after "——", no title that can wrap to a line starting with "，" ----------------------


def _zh_texts() -> list[tuple[str, str]]:
    """(where, text) of every Chinese text a learner reads in the course: prose, titles, quizzes, exercises."""
    out = []
    for lesson in COURSE.lessons:
        out += [(f"{lesson.id}#{s.id}", s.body["zh"]) for s in lesson.sections]
        out += [(f"{lesson.id}#{s.id} title", s.title["zh"]) for s in lesson.sections]
        out.append((f"{lesson.id} quiz", _quiz_text(lesson.id, "zh")))
        for ex in lesson.exercises:
            out.append((ex.id, ex.model_dump_json()))
    return out


def test_no_space_or_line_break_after_a_chinese_dash():
    for where, text in _zh_texts():
        assert not re.search(r"——(\s|\\n)", text), (where, text[text.find("——") - 20 : text.find("——") + 20])


def test_no_chinese_section_title_holds_a_full_width_comma_and_no_comma_follows_code():
    for lesson in COURSE.lessons:
        for s in lesson.sections:
            assert "，" not in s.title["zh"], s.title["zh"]  # the contents list wraps titles
    context = _prose("rope-alibi", "zh")
    assert "`scaled_inv_freq`，" not in context  # Rich breaks after a code span: the line began with "，"


# --- two docs said "the whole validation split" for what scores its first STORED_WINDOWS windows -------------


def test_the_docs_say_how_much_of_the_validation_split_the_context_tables_score():
    from tutor.model.context import STORED_WINDOWS

    for doc in ("docs/figures.md", "docs/model.md"):
        text = _flat((ROOT / doc).read_text(encoding="utf-8"))
        for m in re.finditer(r"models\.context", text):
            near = text[max(0, m.start() - 400) : m.end() + 400]
            assert "whole validation split" not in near, doc
        assert f"first {STORED_WINDOWS} windows of the longest length" in text, doc


# --- Anki's default is 20 new cards a day; the tutor's is its own --------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_new_per_day_option_does_not_give_ankis_default_as_ten(lang):
    from tutor.progress.quiz_status import NEW_PER_DAY

    text = say("cli.opt.progress.new_per_day", lang)
    assert "20" in text and str(NEW_PER_DAY) in text
    assert text.index("20") < text.index(str(NEW_PER_DAY), text.index("20") + 2)  # Anki's first, then ours
    assert not re.search(r"Anki[^()]*\(?[^()]*default 10\)", text)


# --- predictions of an exercise that has no code to write ------------------------------------------------


def test_head_count_predictions_do_not_promise_a_coding_task(home):
    out = subprocess.run(
        [sys.executable, "-m", "tutor", "quiz", "--predict", "head-count", "--home", str(home)],
        input="1\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    shown = out.stdout + out.stderr
    assert "head-count" in shown or "heads" in shown.lower(), shown
    for word in ("code", "coding"):
        assert word not in shown.lower(), shown


# --- the heads experiment's empty layer field is explained where the learner meets it -----------------------

LAYER = {
    "en": "The `layer` field starts empty",
    "de": "Das Feld `layer` ist zu Beginn leer",
    "zh": "`layer` 一栏起初是空的",
}


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_1_explains_the_empty_layer_field_with_the_shipped_models_layers(lang):
    from tutor.model.checkpoint import load_checkpoint

    n_layer = load_checkpoint(ROOT / "tutor/model/checkpoints/gpt-learned.pt").model.cfg.n_layer
    section = next(s for s in _lesson("multi-head").sections if any(e.name == "heads" for e in s.experiments))
    body = _flat(section.body[lang])
    assert LAYER[lang] in body
    assert re.search(rf"1 (to|bis|到) {n_layer}", body), body[body.find("layer") : body.find("layer") + 300]
