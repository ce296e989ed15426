"""Lesson 2 (positions) states facts and quiz answers; these tests hold them against the course model.

The lesson never types a measured gap, but it does say what the permutation experiment will show
(one layer without positions: rounding, below 1e-5; two layers without positions: clearly not zero,
in the range of the rows with positions). Those claims are checked here on fresh models, the way
the experiment builds them, so the prose cannot drift from what the learner will see.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import torch

from tutor.model.gpt import GPT, GPTConfig

LESSON = Path(__file__).resolve().parents[1] / "tutor" / "lessons" / "02-positions"
LANGS = ("en", "de", "zh")

# 白日依山尽 and 山依日白尽 as ids: the claims are about the architecture, so any five distinct ids
# with the same reordering stand in for the characters (the tokenizer needs the shipped checkpoint).
BAI, RI, YI, SHAN, JIN = 5, 6, 7, 8, 9
LINE = [BAI, RI, YI, SHAN, JIN]
SCRAMBLED = [SHAN, YI, RI, BAI, JIN]
SEEDS = (0, 1, 2)


def _quiz() -> dict[str, dict]:
    with open(LESSON / "quiz.toml", "rb") as f:
        return {q["id"]: q for q in tomllib.load(f)["question"]}


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))


def _model(seed: int, n_layer: int, pos: str) -> GPT:
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=32, n_layer=n_layer, pos=pos)).eval()


def _gap(model: GPT) -> float:
    with torch.no_grad():
        logits, _ = model(torch.tensor([LINE, SCRAMBLED]))
    return float((logits[0, -1] - logits[1, -1]).abs().max())


def test_pos_emb_parameter_count_is_the_quiz_answer_and_the_prose_figure():
    model = GPT(GPTConfig(pos="learned"))
    count = model.pos_emb.weight.numel()
    assert count == _quiz()["pos-emb-params"]["answer"] == 128 * 128
    assert "16,384" in (LESSON / "en.md").read_text(encoding="utf-8")
    assert "16.384" in (LESSON / "de.md").read_text(encoding="utf-8")
    assert "16,384" in (LESSON / "zh.md").read_text(encoding="utf-8")


def test_shape_answers_are_what_the_embeddings_return():
    model = GPT(GPTConfig(pos="learned"))
    quiz = _quiz()
    with torch.no_grad():
        pos = model.pos_emb(torch.arange(5))
        both = model.tok_emb(torch.zeros(2, 5, dtype=torch.long)) + pos
    assert tuple(pos.shape) == _shape(quiz["pos-emb-shape"]["answer"])
    assert tuple(both.shape) == _shape(quiz["embedding-sum-shape"]["answer"])


@pytest.mark.parametrize("seed", SEEDS)
def test_one_layer_without_positions_ignores_the_order_of_the_two_lines(seed: int):
    assert _gap(_model(seed, 1, "none")) < 1e-5


@pytest.mark.parametrize("seed", SEEDS)
def test_learned_positions_let_one_layer_tell_the_lines_apart(seed: int):
    assert _gap(_model(seed, 1, "learned")) > 1e-3  # far above rounding


@pytest.mark.parametrize("seed", SEEDS)
def test_two_layers_without_positions_tell_the_lines_apart_like_with_positions(seed: int):
    without = _gap(_model(seed, 2, "none"))
    with_pos = _gap(_model(seed, 2, "learned"))
    assert without > 1e-3
    assert 0.1 < without / with_pos < 10  # "in the same range as the rows with positions"


def test_after_layer_one_only_the_last_character_has_the_same_vector_in_both_lines():
    # the prose: 日 sees 白日 in one line and 山依日 in the other, so it leaves layer 1 changed;
    # only 尽, which sees all five characters in both lines, comes out the same
    model = _model(0, 1, "none")
    with torch.no_grad():
        out = model.blocks[0](model.tok_emb(torch.tensor([LINE, SCRAMBLED])))
    first, second = out[0], out[1]
    for char in (BAI, RI, YI, SHAN):
        i, j = LINE.index(char), SCRAMBLED.index(char)
        assert (first[i] - second[j]).abs().max() > 1e-4, f"id {char} should differ after layer 1"
    assert (first[4] - second[4]).abs().max() < 1e-5


def test_learned_table_has_no_row_past_block_size():
    model = GPT(GPTConfig(vocab_size=32, block_size=8, n_layer=1, pos="learned")).eval()
    model(torch.zeros(1, 8, dtype=torch.long))  # positions 0..7 exist
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 2, dtype=torch.long), start=7)  # positions 7, 8


@pytest.mark.parametrize("lang", LANGS)
def test_nopos_gap_figures_in_the_prose_follow_from_the_table(lang: str):
    # NoPos − ALiBi on the Pile at 1.3B is 13.10 − 12.51 = 0.59, the figure the prose quotes
    text = (LESSON / f"{lang}.md").read_text(encoding="utf-8").replace(",", ".")
    rows = {
        m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"\| (\w+) \| ([\d.]+) \| ([\d.]+) \|", text)
    }
    assert rows["NoPos"][1] - rows["ALiBi"][1] == pytest.approx(0.59)
    assert "0.59" in text and "2.21" in text and "147.18" in text


@pytest.mark.parametrize("lang", LANGS)
def test_families_table_says_how_each_family_fares_past_the_trained_length(lang: str):
    text = (LESSON / f"{lang}.md").read_text(encoding="utf-8")
    section = text[text.index("{#families}") :]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ][:5]
    assert len(rows) == 5 and all(len(row) == 4 for row in rows), rows  # header + four families, four columns
    users = [row[2] for row in rows[1:]]
    assert "BERT" in users[1] and "ALiBi" in users[2] and "Llama" in users[3]
    past = [row[3] for row in rows[1:]]
    # RoPE's column names the fixes of the next lesson; ALiBi's row is the one built to extrapolate
    assert all(method in past[3] for method in ("PI", "NTK", "YaRN"))
    assert "ALiBi" in past[2]
    assert len(set(past)) == 4
