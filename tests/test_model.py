"""The course GPT: the facts the lessons state, checked on the real model."""

import math

import pytest
import torch
from torch import nn

from tutor.model.gpt import GPT, POS_MODES, GPTConfig
from tutor.model.positions import alibi_bias, alibi_slopes, apply_rope, rope_cos_sin, rope_inv_freq

A, B = "白日依山尽", "山依日白尽"


def n_params(*modules: nn.Module) -> int:
    return sum(p.numel() for m in modules for p in m.parameters())


def tiny(**kw) -> GPT:
    torch.manual_seed(kw.pop("seed", 0))
    return GPT(
        GPTConfig(**{"vocab_size": 64, "n_embd": 32, "n_head": 4, "n_layer": 1, "block_size": 16, **kw})
    ).eval()


def last_logits(model: GPT, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([ids]))[0][0, -1]


def ids_of(text: str) -> list[int]:
    return [ord(c) % 64 for c in text]


def test_fused_qkv_and_proj_parameter_counts_for_n_embd_32():
    attn = tiny().blocks[0].attn
    assert n_params(attn.qkv) == 3168
    assert n_params(attn.proj) == 1056


@pytest.mark.parametrize("n_embd", [32, 128])
def test_attention_parameter_count_does_not_depend_on_heads(n_embd):
    counts = {h: n_params(tiny(n_embd=n_embd, n_head=h).blocks[0].attn) for h in (1, 2, 4, 8)}
    assert set(counts.values()) == {4 * n_embd**2 + 4 * n_embd}


def test_one_linear_vs_four_at_d_model_512():
    assert n_params(nn.Linear(512, 512)) == 262_656
    assert n_params(*(nn.Linear(512, 512) for _ in range(4))) == 1_050_624
    assert n_params(nn.MultiheadAttention(512, 8)) == 1_050_624


def test_head_split_shapes():
    x = torch.randn(1, 5, 32)
    heads = x.view(1, 5, 4, 8).transpose(1, 2)
    assert heads.shape == (1, 4, 5, 8)
    assert (heads @ heads.transpose(-2, -1)).shape == (1, 4, 5, 5)
    assert torch.equal(heads.transpose(1, 2).contiguous().view(1, 5, 32), x)


def test_one_layer_without_positions_ignores_order():
    model = tiny(pos="none")
    gap = (last_logits(model, ids_of(A)) - last_logits(model, ids_of(B))).abs().max().item()
    assert gap < 1e-5


@pytest.mark.parametrize(
    "kw", [dict(pos="learned"), dict(pos="rope"), dict(pos="alibi"), dict(pos="none", n_layer=2)], ids=str
)
def test_order_shows_with_positions_or_two_layers(kw):
    model = tiny(**kw)
    gap = (last_logits(model, ids_of(A)) - last_logits(model, ids_of(B))).abs().max().item()
    assert gap > 1e-4


@pytest.mark.parametrize("pos", POS_MODES)
def test_causal_later_tokens_never_change_earlier_logits(pos):
    model = tiny(pos=pos, n_layer=2)
    x = torch.randint(64, (1, 12))
    y = x.clone()
    y[0, 7:] = (y[0, 7:] + 1) % 64
    with torch.no_grad():
        a, _ = model(x)
        b, _ = model(y)
    assert torch.allclose(a[0, :7], b[0, :7], atol=1e-6)
    assert not torch.allclose(a[0, 7:], b[0, 7:], atol=1e-4)


@pytest.mark.parametrize("pos", POS_MODES)
def test_attention_maps_are_causal_distributions(pos):
    model = tiny(pos=pos, n_layer=2)
    maps = model.attention_maps(torch.randint(64, (9,)))
    assert maps.shape == (2, 4, 9, 9)
    assert torch.allclose(maps.sum(-1), torch.ones(2, 4, 9))
    assert maps.triu(1).abs().max() == 0


def test_weights_path_matches_fast_path():
    model = tiny(pos="rope", n_layer=2)
    x = torch.randint(64, (2, 10))
    with torch.no_grad():
        fast, _ = model(x)
        slow, _, _ = model(x, need_weights=True)
    assert torch.allclose(fast, slow, atol=1e-5)


def test_forward_with_need_weights_returns_every_heads_weights_and_the_model_keeps_none():
    model = tiny(pos="alibi", n_layer=2).eval()
    x = torch.randint(64, (3, 10), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits, loss, maps = model(x, torch.zeros_like(x), need_weights=True)
    assert maps.shape == (3, 2, model.cfg.n_head, 10, 10)  # batch, layer, head, query, key
    assert torch.allclose(maps.sum(-1), torch.ones(3, 2, model.cfg.n_head, 10))
    assert maps.triu(1).abs().max() == 0 and loss is not None
    # a batch and a lone sequence take different matmul kernels on some CPUs (AMD EPYC: 3e-8 apart)
    torch.testing.assert_close(maps[1], model.attention_maps(x[1]), rtol=0, atol=1e-6)
    assert [vars(m).get("last_attn") for m in model.modules()] == [None] * len(list(model.modules()))
    assert logits.shape == (3, 10, 64)


def test_rope_scores_depend_only_on_offset_and_keep_norms():
    torch.manual_seed(0)
    d, T = 32, 128
    q, k = torch.randn(d), torch.randn(d)
    cos, sin = rope_cos_sin(torch.arange(T), rope_inv_freq(d)[0])
    Q, K = apply_rope(q.expand(T, d), cos, sin), apply_rope(k.expand(T, d), cos, sin)
    assert torch.allclose(Q.norm(dim=-1), q.norm().expand(T), rtol=1e-6)
    assert torch.equal(Q[0], q)  # position 0 is the identity
    for offset in (0, 1, 2, 4, 8, 16, 32):
        scores = (Q[: T - offset] * K[offset:]).sum(-1)
        assert (scores.max() - scores.min()).item() < 1e-4


def test_rope_scaling_matches_reference_values():
    def freq(d, method):
        return rope_inv_freq(d, 10000.0, method, 4.0, 128)

    assert torch.allclose(freq(8, "none")[0], torch.tensor([1, 0.1, 0.01, 0.001], dtype=torch.float64))
    assert torch.allclose(freq(8, "pi")[0], torch.tensor([0.25, 0.025, 0.0025, 0.00025], dtype=torch.float64))
    ntk = torch.tensor([1, 0.062996052, 0.0039685026, 0.00025], dtype=torch.float64)
    assert torch.allclose(freq(8, "ntk")[0], ntk, rtol=1e-7)
    yarn, factor = freq(8, "yarn")
    assert torch.allclose(yarn, torch.tensor([1, 0.0625, 0.0025, 0.00025], dtype=torch.float64))
    assert factor == pytest.approx(1.1386294, abs=1e-7)
    yarn16 = [1, 0.23717082, 0.05, 0.0079056942, 0.0025, 0.00079056942, 0.00025, 7.9056942e-05]
    assert freq(16, "yarn")[0].tolist() == pytest.approx(yarn16, rel=1e-7)


def test_alibi_slopes_follow_the_paper():
    assert alibi_slopes(8) == [2.0**-k for k in range(1, 9)]
    assert alibi_slopes(4) == [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    assert alibi_slopes(6) == [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]
    assert alibi_slopes(3) == [0.0625, 0.00390625, 0.25]
    twelve = alibi_slopes(12)
    assert twelve[:8] == alibi_slopes(8)
    assert twelve[8:] == pytest.approx([2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5])


def test_alibi_bias_penalises_distance_to_earlier_keys_and_masks_the_future():
    bias = alibi_bias(8, 5)
    assert bias[0, 4, 4] == 0
    assert bias[0, 4, 1] == pytest.approx(-0.5 * 3)
    assert bias[7, 3, 0] == pytest.approx(-3 / 256)
    assert torch.isinf(bias[:, 1, 2]).all() and (bias[:, 1, 2] < 0).all()


@pytest.mark.parametrize(
    "kw, needle",
    [
        (dict(n_embd=30, n_head=4), "divisible"),
        (dict(pos="sinusoid"), "unknown position mode"),
        (dict(rope_scaling="magic"), "unknown RoPE scaling"),
        (dict(pos="rope", n_embd=12, n_head=4), "even"),
    ],
)
def test_bad_configs_raise_clear_value_errors(kw, needle):
    with pytest.raises(ValueError, match=needle):
        GPTConfig(**kw)


def test_learned_table_refuses_positions_past_block_size():
    model = tiny(pos="learned", block_size=8)
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 4, dtype=torch.long), start=5)
    rope = tiny(pos="rope", block_size=8)
    assert rope(torch.zeros(1, 20, dtype=torch.long))[0].shape == (1, 20, 64)


def test_generate_is_reproducible_with_a_seed():
    model = tiny()
    a = model.generate([1, 2, 3], 10, temperature=0.8, top_k=5, seed=7)
    b = model.generate([1, 2, 3], 10, temperature=0.8, top_k=5, seed=7)
    assert torch.equal(a, b) and a.shape == (13,)
    assert a[:3].tolist() == [1, 2, 3]
    with pytest.raises(ValueError):
        model.generate([1], 3, temperature=0)
    with pytest.raises(ValueError, match="top_k"):
        model.generate([1], 3, top_k=0)


def test_yarn_attention_factor_scales_rope_tables():
    _, factor = rope_inv_freq(32, 10000.0, "yarn", 8.0, 128)
    assert factor == pytest.approx(0.1 * math.log(8.0) + 1)


def test_position_modes_are_the_same_in_model_experiments_and_train_cli():
    # three lists, because the experiment parameters and the CLI parser must not import torch
    import argparse
    from typing import get_args

    from tutor.commands import train as train_command
    from tutor.experiments.params import PosMode

    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser, lambda key: key)
    cli_choices = next(a.choices for a in parser._actions if a.dest == "pos")
    assert get_args(PosMode) == tuple(cli_choices) == POS_MODES
