"""Lesson 1 (multi-head) states shapes, parameter counts and quiz answers; these tests hold them
against the course model's own attention module, so the prose cannot drift from the code.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pytest
import torch
from torch import nn

from tutor.model.gpt import CausalSelfAttention, GPTConfig

LESSON = Path(__file__).resolve().parents[1] / "tutor" / "lessons" / "01-multi-head"
LANGS = ("en", "de", "zh")
# thousands separators as each language's prose writes them
SEP = {"en": ",", "de": ".", "zh": ","}


def _quiz() -> dict[str, dict]:
    with open(LESSON / "quiz.toml", "rb") as f:
        return {q["id"]: q for q in tomllib.load(f)["question"]}


def _prose(lang: str) -> str:
    return (LESSON / f"{lang}.md").read_text(encoding="utf-8")


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))


def _attention(n_embd: int = 32, n_head: int = 4) -> CausalSelfAttention:
    torch.manual_seed(0)
    return CausalSelfAttention(GPTConfig(vocab_size=32, n_embd=n_embd, n_head=n_head, pos="none")).eval()


def _walk_through(attn: CausalSelfAttention, x: torch.Tensor) -> tuple[list[tuple[int, ...]], torch.Tensor]:
    """The lesson's listing, step by step, on the model's own weights: shapes seen and the output."""
    B, T, C = x.shape
    shapes = []
    q, k, v = attn.qkv(x).split(C, dim=2)
    shapes.append(tuple(q.shape))
    q, k, v = (t.view(B, T, attn.n_head, C // attn.n_head) for t in (q, k, v))
    shapes.append(tuple(q.shape))
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    shapes.append(tuple(q.shape))
    att = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
    shapes.append(tuple(att.shape))
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
    y = att @ v
    shapes.append(tuple(y.shape))
    y = y.transpose(1, 2)
    shapes.append(tuple(y.shape))
    y = y.contiguous().view(B, T, C)
    shapes.append(tuple(y.shape))
    return shapes, attn.proj(y)


def test_the_listing_computes_what_the_model_computes():
    attn = _attention()
    x = torch.randn(1, 5, 32)
    with torch.no_grad():
        _, out = _walk_through(attn, x)
        expected = attn(x)
    assert torch.allclose(out, expected, atol=1e-6)


@pytest.mark.parametrize("lang", LANGS)
def test_the_shape_table_is_the_walk_through_of_the_model(lang: str):
    with torch.no_grad():
        shapes, _ = _walk_through(_attention(), torch.randn(1, 5, 32))
    table = [_shape(m) for m in re.findall(r"^\|[^|\n]*\| (\(1, [\d, ]+\)) \|", _prose(lang), re.M)]
    assert (
        table
        == shapes
        == [(1, 5, 32), (1, 5, 4, 8), (1, 4, 5, 8), (1, 4, 5, 5), (1, 4, 5, 8), (1, 5, 4, 8), (1, 5, 32)]
    )


def test_shape_answers_are_the_shapes_the_model_produces():
    with torch.no_grad():
        shapes, _ = _walk_through(_attention(), torch.randn(1, 5, 32))
    quiz = _quiz()
    assert _shape(quiz["split-shape"]["answer"]) == shapes[2]
    assert _shape(quiz["scores-shape"]["answer"]) == shapes[3]


def test_viewing_heads_first_runs_but_mixes_characters_into_one_head():
    q = torch.randn(1, 5, 32)
    right = q.view(1, 5, 4, 8).transpose(1, 2)
    wrong = q.view(1, 4, 5, 8)  # no error: same number of elements
    assert wrong.shape == right.shape
    assert not torch.equal(wrong, right)
    # the "first head" of the wrong view holds 40 numbers: all 32 of character 0 and 8 of character 1
    assert torch.equal(wrong[0, 0].reshape(-1)[32:], q[0, 1, :8])


def test_merging_after_transpose_needs_contiguous():
    y = torch.randn(1, 4, 5, 8)  # a fresh att @ v result
    with pytest.raises(RuntimeError):
        y.transpose(1, 2).view(1, 5, 32)
    assert y.transpose(1, 2).contiguous().view(1, 5, 32).shape == (1, 5, 32)


def test_each_head_uses_only_its_own_rows_of_w_q():
    attn = _attention()
    x = torch.randn(1, 5, 32)
    with torch.no_grad():
        _, before = attn(x, need_weights=True)
        attn.qkv.weight[8:16] += torch.randn(8, 32)  # the query rows of head 1 (d_k = 8)
        _, after = attn(x, need_weights=True)
    changed = [not torch.allclose(before[0, h], after[0, h]) for h in range(4)]
    assert changed == [False, True, False, False]


@pytest.mark.parametrize("n_head", [1, 2, 4, 8, 16, 32])
def test_attention_parameter_count_does_not_depend_on_the_number_of_heads(n_head: int):
    attn = _attention(n_embd=32, n_head=n_head)
    assert sum(p.numel() for p in attn.qkv.parameters()) == 3168
    assert sum(p.numel() for p in attn.proj.parameters()) == 1056
    assert sum(p.numel() for p in attn.parameters()) == 4 * 32**2 + 4 * 32


def test_quiz_number_answers_are_real_parameter_counts():
    quiz = _quiz()
    one = sum(p.numel() for p in nn.Linear(512, 512).parameters())
    assert quiz["linear-512-params"]["answer"] == one == 262656
    assert sum(p.numel() for p in nn.MultiheadAttention(512, 8).parameters()) == 4 * one == 1050624
    course = CausalSelfAttention(GPTConfig())
    assert quiz["course-attn-params"]["answer"] == sum(p.numel() for p in course.parameters()) == 66048
    assert quiz["eight-heads-dk"]["answer"] == GPTConfig(n_head=8).head_dim == 16


@pytest.mark.parametrize("lang", LANGS)
def test_the_prose_quotes_the_counts_the_tests_check(lang: str):
    text = _prose(lang)
    for n in (3168, 1056, 262656, 1050624, 49536, 16512, 66048):
        assert f"{n:,}".replace(",", SEP[lang]) in text, n


@pytest.mark.parametrize("lang", LANGS)
def test_head_dim_table_is_the_reference_table_and_adds_up(lang: str):
    rows = re.findall(r"^\| ([^|\n]+?) \| (\d+) \| (\d+) \| (\d+) \|$", _prose(lang), re.M)
    dims = [(int(d), int(h), int(k)) for _, d, h, k in rows]
    # the models' published configurations: head dimension in real models
    assert dims == [(512, 8, 64), (4096, 32, 128), (5120, 40, 128), (8192, 64, 128), (4096, 32, 128)]
    assert all(d == h * k for d, h, k in dims)
    assert "Transformer" in rows[0][0]
    assert [name for name, *_ in rows[1:]] == ["LLaMA-7B", "LLaMA-13B", "LLaMA-65B", "LLaMA2-7B"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_experiments_are_embedded_with_the_lesson_parameters(lang: str):
    fences = re.findall(r"^```experiment (\S+)\n(.*?)^```", _prose(lang), re.M | re.S)
    assert [(name, tomllib.loads(body)) for name, body in fences] == [
        ("heads", {"n_embd": 32, "n_head": 4, "text": "白日依山尽"}),
        ("params", {"d_model": 512, "heads": [1, 2, 4, 8, 16]}),
        ("dk-scaling", {}),
        ("heads", {"text": "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼"}),
        ("heads", {"text": "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。", "layer": 4}),
        ("write", {}),
        ("train-compare", {"vary": "heads", "heads": [1, 4, 8], "steps": 1000, "seeds": 2}),
    ]


@pytest.mark.parametrize("lang", LANGS)
def test_the_prose_names_the_torch_layer_the_params_table_counts(lang: str):
    """The prose cites the nn.MultiheadAttention the params experiment prints, with its head count."""
    from tutor.experiments.result import TablePanel
    from tutor.experiments.runner import run_quick

    fence = re.search(r"^```experiment params\n(.*?)^```", _prose(lang), re.M | re.S)
    result = run_quick("params", tomllib.loads(fence.group(1)))
    table = next(p for p in result.panels if isinstance(p, TablePanel))
    label = next(str(row[0]) for row in table.rows if str(row[0]).startswith("nn.MultiheadAttention("))
    assert label == "nn.MultiheadAttention(512, 16)" and f"`{label}`" in _prose(lang)
    assert "MultiheadAttention(512, 8)" not in _prose(lang)
    assert result.metrics["torch_mha_params"] == 1050624


def test_linear_weights_are_stored_out_by_in_so_a_heads_query_weights_are_rows():
    """The lesson: nn.Linear keeps (out_features, in_features) and computes x·Wᵀ + b, so W_Q is the
    first C rows of qkv.weight and head i owns rows i·d_k to (i+1)·d_k − 1."""
    attn = _attention()  # C = 32, 4 heads, d_k = 8
    assert attn.qkv.weight.shape == (3 * 32, 32)
    x = torch.randn(1, 5, 32)
    with torch.no_grad():
        q = attn.qkv(x)[..., :32]
        assert torch.allclose(q, x @ attn.qkv.weight[:32].T + attn.qkv.bias[:32], atol=1e-6)
        head1 = x @ attn.qkv.weight[8:16].T + attn.qkv.bias[8:16]
        assert torch.allclose(q.view(1, 5, 4, 8)[:, :, 1], head1, atol=1e-6)
