"""Eight small text defects an independent check of the lessons found (issue 31), each held here against
the code that makes its figure, in en, de and zh: the texts say what the code measures, and a figure they
give is one a test computes."""

from __future__ import annotations

import math
import re
import sys
import tomllib
from pathlib import Path

import pytest
import torch

from tutor.model.positions import rope_inv_freq

LESSONS = Path(__file__).resolve().parents[1] / "tutor" / "lessons"
LANGS = ("en", "de", "zh")


def _prose(lesson: str, lang: str) -> str:
    return " ".join((LESSONS / lesson / f"{lang}.md").read_text(encoding="utf-8").split())


def _toml(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


# --- 1. three-layers: "About 1e-2" is one layer with positions, not a second layer -----------------


@pytest.fixture(scope="module")
def order_gap():
    folder = LESSONS / "02-positions" / "exercises" / "three-layers"
    sys.path.insert(0, str(folder))
    try:
        from solution import order_gap  # the reference solution: the course GPT, its tokenizer
    finally:
        sys.path.remove(str(folder))
    return order_gap


def test_about_1e_2_is_one_layer_with_positions_and_two_layers_without_give_many_times_more(order_gap):
    seeds = range(10)
    one_learned = [order_gap(1, True, s) for s in seeds]
    two_none = [order_gap(2, False, s) for s in seeds]
    assert all(0.01 <= g < 0.1 for g in one_learned)  # "about 1e-2": a few hundredths
    assert min(two_none) > 3 * max(one_learned)  # "many times larger", on every seed
    ex = _toml(LESSONS / "02-positions" / "exercises" / "three-layers" / "exercise.toml")
    question = next(q for q in ex["predict"] if q["id"] == "one-layer-gap")
    why = next(c for c in question["choices"] if c["id"] == "small")["why"]
    assert "many times larger" in why["en"] and "Vielfaches" in why["de"] and "好几倍" in why["zh"]
    assert not any(re.search(r"\d", text) for text in why.values())  # no figure typed in


# --- 2. lesson 3's context figures: the first windows of the validation split, not all of it -----


def test_the_context_figures_cover_most_of_the_validation_split_not_all_of_it():
    from tutor.model.checkpoint import load_checkpoint
    from tutor.model.context import STORED_WINDOWS
    from tutor.model.corpus import tang_texts
    from tutor.settings import ROPE_SHORT_CHECKPOINT, checkpoints_dir

    ck = load_checkpoint(checkpoints_dir() / ROPE_SHORT_CHECKPOINT)
    scored = STORED_WINDOWS * 4 * ck.model.cfg.block_size  # windows of the longest length, 4×
    validation = len(ck.tokenizer.encode(tang_texts()[1], unknown="unk"))
    assert 0.5 < scored / validation < 1  # most of it, not all
    for lang in LANGS:
        text = _prose("03-rope-alibi", lang)
        assert not re.search(r"whole validation split|ganzen Validierungsteil|整个验证集", text)
    from tutor.texts import say

    en, de, zh = (
        say("exp.context-scaling.stored", x, windows=STORED_WINDOWS, characters=scored) for x in LANGS
    )
    assert "262,144 characters of the validation split, most of it but not all" in en
    assert "262.144 Zeichen" in de and "262,144 个字" in zh and "整个验证集" not in zh


def test_the_context_scaling_note_says_how_many_characters_it_scored():
    from tutor.experiments.runner import run_quick

    shown = run_quick("context-scaling", {"scale": 4.0}).shown("en").model_dump_json()
    assert "the first 262,144 characters of the validation split, most of it but not all" in shown


# --- 3. only PI keeps every angle in the trained range ---------------------------------------------


D, L0, S = 32, 32, 4.0  # the shipped RoPE model: head dimension, trained length; the lesson's scale


def test_pi_and_yarn_keep_every_slow_angle_inside_the_range_seen_in_training():
    base, _ = rope_inv_freq(D, 10000.0, "none")
    trained = L0 * base  # the angles each pair took in training, positions 0 to L0 − 1, lie below
    slow = trained < 2 * math.pi  # pairs that never made a full turn: their range is not every angle
    for method in ("pi", "ntk", "yarn"):
        freq, _ = rope_inv_freq(D, 10000.0, method, S, L0)
        beyond = (S * L0 - 1) * freq >= trained  # at the last position of 4 × L0
        # a pair that turned once has met every angle; of the others only NTK's middle pairs go further
        assert bool((beyond & slow).any()) == (method == "ntk"), method
        ratio = base / freq  # how much each pair is slowed down
        assert ratio[0] == pytest.approx(1 if method != "pi" else S)  # the fastest kept (not by PI)
        assert ratio[-1] == pytest.approx(S)  # the slowest slowed down the most, as far as PI
        assert bool((ratio[1:] >= ratio[:-1] - 1e-12).all())
    said = (
        "PI and YaRN keep every pair inside the angles",
        "PI und YaRN halten jedes Paar in den Winkeln",
        "PI 和 YaRN 让每一对都停留在训练时转到过的角度之内",
    )
    for lang, words in zip(LANGS, said, strict=True):
        text = _prose("03-rope-alibi", lang)
        assert words in text
        assert not re.search(
            r"Only PI brings|Nur PI holt|只有 PI|keep the angles inside the range|halten die Winkel im Bereich|都是让角度留在",
            text,
        )


# --- 4. YaRN on a model trained at L0 = 32 -------------------------------------------------------


def test_yarn_keeps_pair_zero_by_the_codes_clamp_where_the_papers_ramp_slows_it():
    base, _ = rope_inv_freq(D, 10000.0, "none")
    turns = L0 * base / (2 * math.pi)  # how often each pair turns within L0
    assert float(turns.max()) < 32 and round(float(turns[0])) == 5  # no pair turns 32 times; pair 0 about 5
    yarn, _ = rope_inv_freq(D, 10000.0, "yarn", S, L0)
    assert yarn[0] == base[0]  # kept: the code's ramp starts at pair 0 (its lower bound clamped there)
    gamma = (float(turns[0]) - 1) / (32 - 1)  # the paper's ramp, linear in r = L0 / wavelength
    paper = (1 - gamma) / S + gamma  # θ' / θ for pair 0
    assert round(paper, 2) == 0.35
    words = {
        "en": ("about 5 times", "about 0.35"),
        "de": ("etwa 5-mal", "etwa das 0,35-Fache"),
        "zh": ("大约 5 圈", "大约 0.35 倍"),
    }
    for lang in LANGS:
        assert all(w in _prose("03-rope-alibi", lang) for w in words[lang]), lang


# --- 5. unseen angles: the data rule entropy out alone, they do not prove the angles --------------


def test_the_lesson_and_the_quiz_no_longer_name_unseen_angles_as_the_proven_cause():
    overclaims = {
        "en": "unseen angles are",
        "de": "sondern Winkel, die es nie gesehen hat",
        "zh": "而是它从没见过的角度",
    }
    for lang in LANGS:
        text = _prose("03-rope-alibi", lang)
        assert overclaims[lang] not in text
    quiz = {q["id"]: q for q in _toml(LESSONS / "03-rope-alibi" / "quiz.toml")["question"]}
    answer = quiz["rope-extrapolate"]["model_answer"]
    assert "spreading is not what breaks it" not in answer["en"]
    assert "spreading alone does not explain" in answer["en"]
    assert "allein erklärt" in answer["de"] and "单靠注意力变分散解释不了" in answer["zh"]


# --- 6. Llama 3: a larger RoPE base and staged training, not PI/NTK/YaRN -------------------------


def test_llama_3_is_said_to_have_extended_with_a_larger_base_not_pi_ntk_or_yarn():
    quiz = {q["id"]: q for q in _toml(LESSONS / "03-rope-alibi" / "quiz.toml")["question"]}
    answer = quiz["rope-extrapolate"]["model_answer"]
    said = {"en": "not PI, NTK or YaRN", "de": "nicht PI, NTK oder YaRN", "zh": "而不是 PI、NTK 或 YaRN"}
    for lang in LANGS:
        assert said[lang] in " ".join(answer[lang].split()) and said[lang] in _prose("03-rope-alibi", lang)
    assert "as in Llama 3's staged extension" not in answer["en"]


# --- 7. Clark et al.: heads that attend heavily, not almost entirely ------------------------------


def test_clark_et_al_are_quoted_as_the_paper_says():
    said = {
        "en": "attend heavily to the previous",
        "de": "stark auf das vorige",
        "zh": "把大量注意力放在前一个",
    }
    gone = {"en": "almost entirely", "de": "fast nur auf das vorige", "zh": "几乎只看前一个"}
    for lang in LANGS:
        text = _prose("01-multi-head", lang)
        assert said[lang] in text and gone[lang] not in text


# --- 8. the comma after five characters: sure once the metre is set, not in the first line ------


POEMS = [
    "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。",
    "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。",
    "春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。",
    "千山鸟飞绝，万径人踪灭。\n孤舟蓑笠翁，独钓寒江雪。",
]


def test_the_model_is_sure_of_the_comma_once_the_first_couplet_set_the_metre_not_before():
    from tutor.model.checkpoint import load_checkpoint
    from tutor.settings import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    model, tok = ck.model.eval(), ck.tokenizer
    comma = tok.encode("，")[0]

    def p_comma(text: str) -> float:
        with torch.no_grad():
            logits, _ = model(torch.tensor([tok.encode("\n" + text)]))  # as the model reads a poem's start
        return float(logits[0, -1].softmax(-1)[comma])

    first = [p_comma(p[:5]) for p in POEMS]  # after the poem's first five characters
    later = [p_comma(p[: p.index("\n") + 6]) for p in POEMS]  # after five of the second couplet
    assert min(later) > 0.98 and max(first) < 0.95 and min(first) < 0.6
    said = {
        "en": "once the first couplet has set the metre",
        "de": "sobald das erste Verspaar das Versmaß",
        "zh": "第一联定下五言之后",
    }
    for lang in LANGS:
        text = _prose("01-multi-head", lang)
        assert said[lang] in text and not re.search(r"nearly always|fast immer\)|几乎总是", text)
