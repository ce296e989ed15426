"""Lesson 3 (rope-alibi) states facts and quiz answers; these tests hold them against the course code.

If tutor/model/positions.py or the lesson files change so that they disagree, a test here fails, so the
lesson never teaches a value the model does not have.
"""

from __future__ import annotations

import math
import re
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
import torch

from tutor.model.gpt import GPT, GPTConfig
from tutor.model.positions import alibi_bias, alibi_slopes, apply_rope, rope_cos_sin, rope_inv_freq

LESSON = Path(__file__).resolve().parents[1] / "tutor" / "lessons" / "03-rope-alibi"
LANGS = ("en", "de", "zh")


def _quiz() -> dict[str, dict]:
    with open(LESSON / "quiz.toml", "rb") as f:
        return {q["id"]: q for q in tomllib.load(f)["question"]}


def _correct_ids(question: dict) -> set[str]:
    return {c["id"] for c in question["choices"] if c.get("correct")}


def _prose(lang: str) -> str:
    return (LESSON / f"{lang}.md").read_text(encoding="utf-8")


def _as_fractions(text_list: str) -> list[Fraction]:
    return [Fraction(x.strip()) for x in text_list.strip("[]").split(",")]


def test_period_of_pair_zero_answer_is_two_pi_in_the_model_frequencies():
    q = _quiz()["rope-period-pair0"]
    inv_freq, _ = rope_inv_freq(32, 10000.0)
    period = 2 * math.pi / inv_freq[0].item()
    assert abs(period - q["answer"]) < 1e-12
    assert q["tolerance"] == pytest.approx(0.01)


def test_last_of_eight_alibi_slopes_matches_quiz_answer():
    assert alibi_slopes(8)[-1] == _quiz()["alibi-last-slope"]["answer"] == 1 / 256


@pytest.mark.parametrize("lang", LANGS)
def test_slope_lists_in_the_prose_are_the_models_slopes(lang: str):
    text = _prose(lang)
    for n, listed in ((6, "[1/4, 1/16, 1/64, 1/256, 1/2, 1/8]"), (4, "1/4, 1/16, 1/64, 1/256")):
        assert listed in text
        assert _as_fractions(listed) == [Fraction(s) for s in alibi_slopes(n)]


def test_alibi_quiz_sign_and_masked_side_match_the_model_bias():
    q = _quiz()["alibi-sign"]
    assert _correct_ids(q) == {"minus-3m"}
    bias = alibi_bias(1, 8, dtype=torch.float64)[0]
    m = alibi_slopes(1)[0]
    assert bias[5, 2].item() == pytest.approx(-3 * m)  # query 5, key 2: three steps back
    assert bias[5, 5].item() == 0.0  # the diagonal carries no penalty
    assert bias[2, 5].item() == float("-inf")  # a future key is masked


def test_six_head_choice_in_alibi_facts_is_marked_correct_and_true():
    q = _quiz()["alibi-facts"]
    assert {"no-params", "not-scaled", "six-heads"} == _correct_ids(q)
    six = next(c for c in q["choices"] if c["id"] == "six-heads")
    listed = six["text"]["en"].split("are ")[1]
    assert _as_fractions(listed) == [Fraction(s) for s in alibi_slopes(6)]


def test_yarn_factor_answer_matches_the_model():
    _, factor = rope_inv_freq(32, 10000.0, "yarn", 4.0, 128)
    assert factor == pytest.approx(_quiz()["yarn-factor-s4"]["answer"], abs=1e-7)


def test_ntk_keeps_pair_zero_and_matches_pi_on_the_last_pair():
    assert _correct_ids(_quiz()["ntk-keeps-fast"]) == {"keeps-fast"}
    default, _ = rope_inv_freq(32, 10000.0)
    ntk, _ = rope_inv_freq(32, 10000.0, "ntk", 4.0)
    pi, _ = rope_inv_freq(32, 10000.0, "pi", 4.0)
    assert ntk[0].item() == pytest.approx(default[0].item(), rel=1e-12)
    assert ntk[-1].item() == pytest.approx(pi[-1].item(), rel=1e-12)


def test_switching_learned_to_rope_saves_the_quiz_parameter_count():
    learned = GPT(GPTConfig(pos="learned")).num_params()
    rope = GPT(GPTConfig(pos="rope")).num_params()
    assert learned - rope == _quiz()["rope-params-saved"]["answer"] == 128 * 128


def test_rotated_q_keeps_the_shape_given_as_quiz_answer():
    cfg = GPTConfig(pos="rope")
    q = torch.randn(1, cfg.n_head, 5, cfg.head_dim)
    cos, sin = rope_cos_sin(torch.arange(5), rope_inv_freq(cfg.head_dim)[0])
    shape = tuple(apply_rope(q, cos, sin).shape)
    assert str(shape) == _quiz()["rope-q-shape"]["answer"] == "(1, 4, 5, 32)"


def _interleaved_rope(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """The RoFormer / Meta layout, written independently of tutor.model.positions: pairs (x_2i, x_2i+1)."""
    ang = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((x1 * ang.cos() - x2 * ang.sin(), x1 * ang.sin() + x2 * ang.cos()), dim=-1)
    return out.flatten(-2)


def test_half_split_on_permuted_input_is_interleaved_result_permuted_as_the_lesson_says():
    d, T = 32, 20
    g = torch.Generator().manual_seed(0)
    x = torch.randn(T, d, dtype=torch.float64, generator=g)
    pos = torch.arange(T)
    inv_freq, _ = rope_inv_freq(d)
    perm = list(range(0, d, 2)) + list(range(1, d, 2))  # P = [0, 2, …, d−2, 1, 3, …, d−1]
    cos, sin = rope_cos_sin(pos, inv_freq, dtype=torch.float64)
    half = apply_rope(x[:, perm], cos, sin)
    inter = _interleaved_rope(x, pos, inv_freq)
    assert torch.allclose(half, inter[:, perm], atol=1e-12)
    assert (apply_rope(x, cos, sin) - inter).abs().max() > 0.1  # same input, different vectors


def test_score_depends_only_on_offset_and_norms_are_kept():
    d, T = 32, 64
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(d, dtype=torch.float64, generator=g), torch.randn(d, dtype=torch.float64, generator=g)
    pos = torch.arange(T)
    cos, sin = rope_cos_sin(pos, rope_inv_freq(d)[0], dtype=torch.float64)
    Q, K = apply_rope(q.expand(T, d), cos, sin), apply_rope(k.expand(T, d), cos, sin)
    for offset in (0, 1, 5, 30):
        scores = torch.stack([Q[m] @ K[m + offset] for m in range(T - offset)])
        assert (scores.max() - scores.min()).item() < 1e-10
    assert torch.allclose(Q.norm(dim=-1), q.norm().expand(T), rtol=1e-12)
    assert torch.allclose(Q[0], q)  # position 0 is the identity


@pytest.mark.parametrize("lang", LANGS)
def test_the_compare_table_gives_the_learned_tables_size_in_the_runs_it_follows(lang: str):
    """The table under train-compare counts the learned table of those runs: context × n_embd of the
    experiment's defaults (64 × 128 = 8,192), not the course model's 128 × 128."""
    from tutor.experiments.params import TrainCompareParams

    p = TrainCompareParams()
    fence = re.search(r"```experiment train-compare\n(.*?)```", _prose(lang), re.S)
    assert fence and not {"context", "n_embd"} & set(tomllib.loads(fence.group(1)))  # the defaults apply
    cfg = {"block_size": p.context, "n_embd": p.n_embd, "n_layer": p.n_layer, "n_head": p.n_head}
    extra = GPT(GPTConfig(pos="learned", **cfg)).num_params() - GPT(GPTConfig(pos="none", **cfg)).num_params()
    assert extra == p.context * p.n_embd == 8192
    row = next(line for line in _prose(lang).splitlines() if "64 × 128" in line and line.startswith("|"))
    assert f"{extra:,}".replace(",", "." if lang == "de" else ",") in row
    assert "16,384" not in row and "16.384" not in row


def _layer_scores(block, x: torch.Tensor) -> torch.Tensor:
    """A block's attention scores before the mask and softmax: (B, heads, T, T)."""
    attn = block.attn
    B, T, C = x.shape
    q, k, _ = attn.qkv(block.ln1(x)).split(C, dim=2)
    q, k = (t.view(B, T, attn.n_head, C // attn.n_head).transpose(1, 2) for t in (q, k))
    cos, sin = rope_cos_sin(torch.arange(T), attn.inv_freq, attn.rope_factor, dtype=q.dtype)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    return q @ k.transpose(-2, -1) / k.size(-1) ** 0.5


def test_the_same_two_characters_at_one_distance_score_alike_in_layer_one_but_not_once_context_enters():
    """The lesson's claim, exactly: the same q and k at the same distance score the same; characters
    do only in the first layer, where q and k come from the character alone."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=50, pos="rope")).double().eval()
    ids = torch.tensor([[3, 10, 11, 4, 5, 6, 10, 11]])  # 明 = 10, 月 = 11 at (1, 2) and at (6, 7)
    with torch.no_grad():
        x = model.tok_emb(ids)
        first = _layer_scores(model.blocks[0], x)
        second = _layer_scores(model.blocks[1], model.blocks[0](x))
    assert (first[0, :, 2, 1] - first[0, :, 7, 6]).abs().max() < 1e-12
    assert (second[0, :, 2, 1] - second[0, :, 7, 6]).abs().max() > 1e-3
