"""Every quick experiment's headline numbers match the facts the lessons teach (their published sources),
computed live on the real model code and the shipped checkpoints."""

from __future__ import annotations

import math

import pytest

from tutor.experiments import cache
from tutor.experiments.errors import Cancelled, ExperimentError
from tutor.experiments.result import HeatmapPanel, Result, TablePanel, TextPanel
from tutor.experiments.runner import run_quick


def _need(name: str) -> None:
    if not (cache.checkpoints_dir() / name).is_file():
        pytest.skip(f"shipped checkpoint {name} not trained yet")


@pytest.fixture(scope="module")
def shipped():
    _need(cache.LEARNED)
    return cache.checkpoint()


@pytest.fixture(scope="module")
def rope_short():
    _need(cache.ROPE_SHORT)
    return cache.checkpoint(cache.ROPE_SHORT)


def _table(result: Result, start: str) -> TablePanel:
    """The first table whose English title starts with `start`, its texts and numbers written out."""
    shown = result.shown("en")
    return next(p for p in shown.panels if isinstance(p, TablePanel) and p.title.startswith(start))


def test_heads_walks_through_the_default_shapes_and_counts_parameters(shipped):
    r = run_quick("heads")
    assert r.metrics["qkv_params"] == 3168 and r.metrics["proj_params"] == 1056
    shapes = [row[2] for row in _table(r, "Fresh random layer: shapes").rows]
    assert shapes[0] == "(1, 5, 32)"
    assert "(1, 4, 5, 8)" in shapes and "(1, 4, 5, 5)" in shapes
    assert shapes[-1] == "(1, 5, 32)"
    eight = run_quick("heads", {"n_head": 8})
    assert "(1, 8, 5, 4)" in [row[2] for row in _table(eight, "Fresh random layer: shapes").rows]
    assert eight.metrics["qkv_params"] == 3168  # the head count does not change the weights


def test_heads_shows_every_heads_attention_on_the_trained_model(shipped):
    cfg = shipped.model.cfg
    r = run_quick("heads", {"text": "床前明月光"}).shown("en")
    maps = [p for p in r.panels if isinstance(p, HeatmapPanel)]
    assert len(maps) == cfg.n_layer * cfg.n_head
    assert maps[0].title == "layer 1 · head 1"
    for m in maps:
        assert m.row_labels == m.col_labels == ["↵", *"床前明月光"]  # read after a poem's opening line break
        for i, row in enumerate(m.values):
            assert all(v is None for v in row[i + 1 :])  # the future is masked
            assert math.fsum(row[: i + 1]) == pytest.approx(1.0, abs=1e-5)
    only = run_quick("heads", {"layer": cfg.n_layer}).shown("en")
    titles = [p.title for p in only.panels if isinstance(p, HeatmapPanel)]
    assert titles == [f"layer {cfg.n_layer} · head {h + 1}" for h in range(cfg.n_head)]


def test_heads_says_which_part_is_a_fresh_layer_and_which_the_trained_model(shipped):
    cfg = shipped.model.cfg
    for lang, fresh, trained in [
        ("en", "Fresh random layer", "trained course model"),
        ("zh", "随机", "训练好的"),
    ]:
        eight = run_quick("heads", {"n_head": 8}).shown(lang)
        tables = [p.title for p in eight.panels if isinstance(p, TablePanel)]
        assert tables[0].startswith(fresh) and tables[1].startswith(fresh)
        note = next(p for p in eight.panels if isinstance(p, TextPanel))
        assert trained in note.text and f"{cfg.n_head}" in note.text and "8" in note.text
        # the heatmaps follow the note and stay the trained model's, whatever n_head the walk-through uses
        kinds = [type(p) for p in eight.panels]
        assert kinds.index(TextPanel) < kinds.index(HeatmapPanel)
        assert sum(k is HeatmapPanel for k in kinds) == cfg.n_layer * cfg.n_head


def test_heads_rejects_text_the_model_cannot_read_and_layers_it_does_not_have(shipped):
    with pytest.raises(ExperimentError, match="text: .*'Z'"):
        run_quick("heads", {"text": "白日Z山尽"})
    with pytest.raises(ExperimentError, match="layers 1.."):
        run_quick("heads", {"layer": 32})


def test_params_one_linear_against_four_and_heads_add_no_weights():
    r = run_quick("params")
    assert r.metrics["single_linear"] == 262656
    assert r.metrics["four_linears"] == 1050624
    assert r.metrics["torch_mha_params"] == 1050624
    for h in (1, 2, 4, 8, 16):
        assert r.metrics[f"attention_params_h{h}"] == 4 * 512**2 + 4 * 512
    small = run_quick("params", {"d_model": 32, "heads": [1, 4]})
    assert small.metrics["attention_params"] == 3168 + 1056


def test_dk_scaling_variance_grows_with_dk_and_scaling_restores_it():
    r = run_quick("dk-scaling")
    # 4000 samples: the variance estimate's relative standard error is about 2.5 %
    assert r.metrics["var_unscaled_d64"] == pytest.approx(64, rel=0.1)
    assert r.metrics["var_scaled_d64"] == pytest.approx(1, rel=0.1)
    assert r.metrics["var_unscaled_d256"] == pytest.approx(256, rel=0.1)
    assert r.metrics["max_weight_unscaled_d256"] > 0.8 > r.metrics["max_weight_scaled_d256"]
    assert "var_unscaled_d64" in run_quick("dk-scaling", {"dims": [8]}).metrics  # 64 always measured


def test_shuffle_attention_is_permutation_equivariant_without_a_mask():
    r = run_quick("shuffle")
    assert r.metrics["max_diff_aligned"] < 1e-5
    assert r.metrics["max_diff_unaligned"] > 1e-2
    assert r.metrics["max_diff_aligned_causal"] > 1e-3  # the causal mask breaks the symmetry


def test_permutation_one_layer_without_positions_ignores_order(shipped):
    r = run_quick("permutation", {"modes": ["none", "learned", "rope", "alibi"]})
    assert r.metrics["gap_L1_nopos"] < 1e-5
    for key in ("gap_L1_learned", "gap_L2_nopos", "gap_L2_learned", "gap_L3_nopos", "gap_L3_learned"):
        assert r.metrics[key] > 1e-4, key
    assert r.metrics["gap_L1_rope"] > 1e-4 and r.metrics["gap_L1_alibi"] > 1e-4
    assert r.metrics["gap_trained"] > 1e-4


def test_permutation_stops_between_models_when_cancelled(shipped):
    with pytest.raises(Cancelled):
        run_quick("permutation", {"seed": 7}, should_stop=lambda: True, use_cache=False)


def test_rope_scores_depend_only_on_the_offset():
    r = run_quick("rope-relative")
    assert r.metrics["max_spread"] < 1e-4
    assert abs(r.metrics["score_off0"] - r.metrics["score_off1"]) > 1e-3
    assert r.metrics["max_norm_rel_error"] < 1e-6
    f64 = run_quick("rope-relative", {"dtype": "float64", "max_pos": 512})
    assert f64.metrics["max_spread"] < 1e-10


def test_rope_frequencies_pair0_turns_once_per_2pi_positions():
    r = run_quick("rope-frequencies")
    assert r.metrics["period_pair0"] == pytest.approx(2 * math.pi, abs=1e-12)
    assert r.metrics["period_longest"] == pytest.approx(2 * math.pi * 10000 ** (30 / 32), rel=1e-12)
    assert r.metrics["pairs"] == 16
    r8 = run_quick("rope-frequencies", {"d": 8, "base": 100.0})
    assert r8.metrics["period_longest"] == pytest.approx(2 * math.pi * 100 ** (6 / 8), rel=1e-12)


def test_alibi_slopes_follow_the_papers_rule():
    r = run_quick("alibi")
    assert r.metrics["slope_first"] == 0.5 and r.metrics["slope_last"] == 1 / 256
    six = run_quick("alibi", {"n_head": 6, "T": 4})
    slopes = [row[1].value for row in six.panels[0].rows]
    assert slopes == pytest.approx([0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125], rel=1e-4)
    bias = next(p for p in six.panels if isinstance(p, HeatmapPanel))
    for i in range(4):
        for j in range(4):
            expected = None if j > i else -0.25 * (i - j)
            assert bias.values[i][j] == (expected if expected is None else pytest.approx(expected))


def test_context_scaling_measures_all_methods_on_the_short_rope_checkpoint(rope_short):
    r = run_quick("context-scaling")
    for key in ("loss_1x", "loss_4x_none", "loss_4x_pi", "loss_4x_ntk", "loss_4x_yarn"):
        assert 0 < r.metrics[key] < 20, key
    assert r.metrics["loss_1x"] == r.metrics["loss_1x_none"]
    assert r.metrics["trained_length"] == rope_short.model.cfg.block_size == 32
    # the extrapolation failure the lesson shows: plain RoPE is worse at 4× than at its trained length
    assert r.metrics["loss_4x_none"] > r.metrics["loss_1x"]
    table = next(p for p in r.panels if isinstance(p, TablePanel))  # inv_freq per pair and method
    none_col = [row[1].value for row in table.rows[:-1]]
    pi_col = [row[2].value for row in table.rows[:-1]]
    assert pi_col == pytest.approx([v / 4 for v in none_col], rel=1e-3)
    assert _table(r, "inv_freq").rows[-1][-1] == "1.1386"  # YaRN's attention factor 0.1·ln 4 + 1


def test_results_are_cached_by_parameters_and_recomputed_equal():
    first = run_quick("shuffle", {"seed": 3})
    assert run_quick("shuffle", {"seed": 3}) is first
    fresh = run_quick("shuffle", {"seed": 3}, use_cache=False)
    assert fresh is not first and fresh.metrics == first.metrics
    assert run_quick("shuffle", {"seed": 4}).metrics != first.metrics


def test_every_quick_result_round_trips_through_json():
    for name, raw in [("params", {}), ("alibi", {"n_head": 3}), ("rope-relative", {}), ("dk-scaling", {})]:
        r = run_quick(name, raw)
        assert Result.model_validate_json(r.model_dump_json()) == r
        assert r.duration_s > 0


async def test_run_async_runs_a_quick_experiment_in_a_thread():
    from tutor.experiments.runner import run_async

    r = await run_async("alibi", {"n_head": 4}, use_cache=False)
    assert r.metrics["slope_first"] == 0.25 and r.metrics["slope_last"] == 1 / 256
