"""The experiments that rest on training, on the Tang corpus and the shipped checkpoints:
train-compare's defaults stay under one epoch, context-scaling reads its stored tables quickly and they
are what a fresh measurement gives, and context-finetune fine-tunes each method and scores it again."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
import torch

from tutor.experiments import cache
from tutor.experiments.course.course_text import course_texts
from tutor.experiments.params import ContextScalingParams, TrainCompareParams
from tutor.experiments.runner import run_here, run_in_child, run_quick
from tutor.model.context import STORED_SCALES, STORED_WINDOWS, measure, stored_table, windows_of
from tutor.model.gpt import GPT, GPTConfig


@pytest.fixture(scope="module")
def rope_short():
    return cache.checkpoint(cache.ROPE_SHORT)


def test_train_compare_defaults_read_well_under_one_epoch_of_the_tang_corpus():
    p = TrainCompareParams()
    train_text, _ = course_texts()
    read = p.steps * p.batch * p.context
    assert read / len(train_text) < 0.25  # 1000 × 10 × 64 = 640,000 of 2.74M characters
    assert p.dropout == 0.0 and p.seeds >= 2


def test_every_length_is_scored_on_the_same_characters():
    ids = list(range(1, 200))
    short, _ = windows_of(ids, 8, 32)
    long, _ = windows_of(ids, 32, 32)
    assert short.flatten().tolist() == long.flatten().tolist() == ids[:32]


def test_attention_entropy_is_zero_for_a_one_key_head_and_ln_n_for_an_even_one():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=16, n_embd=16, n_head=2, n_layer=1, block_size=8, pos="rope")).eval()
    with torch.no_grad():  # zero queries and keys: every head spreads evenly over the keys it may see
        model.blocks[0].attn.qkv.weight[:32].zero_()
        model.blocks[0].attn.qkv.bias[:32].zero_()
    (score,) = measure(model, list(range(1, 16)) * 4, [8], windows=4, trained_length=8)
    assert score.entropy_by_position == pytest.approx(
        [torch.log(torch.tensor(i + 1.0)).item() for i in range(8)]
    )
    assert score.entropy == pytest.approx(score.uniform)


def test_the_shipped_rope_model_carries_its_context_scaling_tables(rope_short):
    for scale in STORED_SCALES:
        table = stored_table(rope_short.meta, scale, STORED_WINDOWS)
        assert table is not None, scale
        assert list(table["methods"]) == ["none", "pi", "ntk", "yarn"]
        assert [s["length"] for s in table["methods"]["none"]] == [32, 64, 128]
    assert stored_table(rope_short.meta, 3.0, STORED_WINDOWS) is None


def test_context_scaling_quick_part_takes_under_50_ms_once_the_model_is_loaded(rope_short):
    run_quick("context-scaling", use_cache=False)  # loads the four frequency variants once
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        result = run_quick("context-scaling", use_cache=False)
        times.append(time.perf_counter() - t0)
    assert result.metrics["stored"] == 1 and result.metrics["windows"] == STORED_WINDOWS
    assert sorted(times)[2] < 0.05, times


def test_context_scaling_reports_loss_and_attention_entropy_at_each_length(rope_short):
    m = run_quick("context-scaling").metrics
    for k in (1, 2, 4):
        assert 0 < m[f"entropy_{k}x_none"] <= m[f"uniform_{k}x"] + 1e-6
        for method in ("none", "pi", "ntk", "yarn"):
            assert 0 < m[f"loss_{k}x_{method}"] < 10
    # the failure past the trained length that the lesson describes
    assert m["loss_4x_none"] > m["loss_2x_none"] > m["loss_1x_none"]
    assert m["entropy_4x_none"] > m["entropy_1x_none"]


def test_context_scaling_with_other_settings_is_measured_now(rope_short):
    result = run_quick("context-scaling", {"windows": 4})
    assert result.metrics["stored"] == 0 and result.metrics["windows"] == 4
    assert "Measured now on 4 windows" in result.shown("en").panels[-1].text


@pytest.mark.slow
@pytest.mark.timeout(
    2400
)  # the whole validation split scored 12 times: about 4 min here, far more on a busy host
def test_stored_tables_are_what_a_fresh_measurement_gives(rope_short):
    from tutor.experiments.course.extension import measured
    from tutor.experiments.run_context import RunContext

    p = ContextScalingParams()
    stored = run_quick("context-scaling", p).metrics
    assert stored["stored"] == 1
    without = SimpleNamespace(model=rope_short.model, tokenizer=rope_short.tokenizer, meta={})
    table, was_stored = measured(p, RunContext(), without)  # scores the whole validation split again
    assert not was_stored
    for method, scores in table["methods"].items():
        for k, score in zip((1, 2, 4), scores, strict=True):
            assert score["loss"] == pytest.approx(stored[f"loss_{k}x_{method}"], abs=1e-4)
            assert score["entropy"] == pytest.approx(stored[f"entropy_{k}x_{method}"], abs=1e-4)


def test_context_finetune_scores_each_method_before_and_after_its_fine_tune(rope_short):
    events: list[dict] = []
    params = {"steps": 2, "batch": 2, "windows": 2, "methods": ["none", "yarn"]}
    result = run_here("context-finetune", params, on_event=events.append, use_cache=False)
    m = result.metrics
    assert m["trained_length"] == 32 and m["length"] == 128
    for method in ("none", "yarn"):
        for key in ("before_1x", "after_1x", "before_long", "after_long"):
            assert 0 < m[f"{key}_{method}"] < 12
        assert m[f"before_long_{method}"] != m[f"after_long_{method}"]  # the weights did move
    assert m["before_long_none"] == pytest.approx(
        run_quick("context-scaling", {"windows": 2}).metrics["loss_4x_none"]
    )
    progress = [e for e in events if e["event"] == "progress"]
    assert {e["run"] for e in progress} == {1, 2} and progress[-1]["step"] == 2
    # the shipped checkpoint is only read
    assert cache.checkpoint(cache.ROPE_SHORT).model is rope_short.model


@pytest.mark.slow
async def test_context_finetune_runs_in_a_child_with_progress(home):
    events: list[dict] = []
    params = {"steps": 20, "windows": 16, "methods": ["pi", "yarn"]}
    result = await run_in_child("context-finetune", params, events.append, home=home, use_cache=False)
    assert [e["run"] for e in events if e["event"] == "progress"][-1] == 2
    for method in ("pi", "yarn"):
        assert result.metrics[f"after_long_{method}"] < result.metrics[f"before_long_{method}"]


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_the_lesson_says_what_a_default_train_compare_run_reads(lang):
    from pathlib import Path

    p = TrainCompareParams()
    text = (Path(__file__).resolve().parents[1] / "tutor/lessons/01-multi-head" / f"{lang}.md").read_text(
        "utf-8"
    )
    assert f"{p.steps} × {p.batch} " in text and f" {p.context} " in text
