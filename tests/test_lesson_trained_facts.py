"""Every number a lesson quotes from a trained model, tied to the shipped checkpoint it came from.

Lesson 1 describes what the heads of gpt-learned.pt look at, from the profile stored in its metadata
(models/heads.py, shown by the heads experiment); lesson 3 quotes what gpt-rope-short.pt does past its
trained length, from the context-scaling tables stored in its metadata (models/context.py). Each claim is
checked against those figures, and each figure against the prose in all three languages (German writes
0,26 for 0.26). The slow tests measure the stored figures again from the checkpoint and the corpus.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from models.checkpoint import load_checkpoint
from models.corpus import tang_texts

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = ROOT / "models" / "checkpoints"
LANGS = ("en", "de", "zh")


def _prose(lesson: str, lang: str) -> str:
    return (ROOT / "lessons" / lesson / f"{lang}.md").read_text(encoding="utf-8")


def _written(x: float, lang: str, decimals: int = 2) -> str:
    text = f"{x:.{decimals}f}"
    return text.replace(".", ",") if lang == "de" else text


def _section(text: str, anchor: str) -> str:
    start = text.index(anchor)
    end = text.find("\n## ", start)
    return text[start : end if end >= 0 else len(text)]


# --- lesson 1: what the heads of gpt-learned.pt look at ------------------------------------------------


@pytest.fixture(scope="module")
def learned():
    return load_checkpoint(CHECKPOINTS / "gpt-learned.pt")


@pytest.fixture(scope="module")
def heads(learned) -> dict[tuple[int, int], dict[str, float]]:
    profile = learned.meta["head_profile"]
    assert profile["windows"] == 256 and profile["length"] == 128
    return {(li + 1, hi + 1): f for li, layer in enumerate(profile["heads"]) for hi, f in enumerate(layer)}


def _others(heads, feature: str, named: set[tuple[int, int]]) -> tuple[float, float]:
    values = [f[feature] for key, f in heads.items() if key not in named]
    return min(values), max(values)


def heads_claims(heads) -> list[float]:
    """The figures lesson 1 quotes, each checked for what the prose says about it; returned in prose order."""
    prev_heads = [(1, 4), (3, 1), (3, 2)]
    prev = [heads[k]["previous"] for k in prev_heads]
    prev_lo, prev_hi = _others(heads, "previous", set(prev_heads))
    assert prev == sorted(prev, reverse=True) and min(prev) > prev_hi  # three previous-character heads
    assert prev[0] > 2 * prev[1]  # one of them far ahead
    layer_1 = [(1, 1), (1, 2), (1, 3)]
    punct = [heads[k]["punctuation"] for k in layer_1]
    punct_lo, punct_hi = _others(heads, "punctuation", set(layer_1))
    assert min(punct) > punct_hi  # layer 1's first three heads look at the punctuation ...
    breaks_l1 = [heads[k]["line_break"] for k in layer_1]  # ... and at the line breaks
    assert min(breaks_l1) > 0.2
    breaks = heads[(3, 4)]["line_break"]
    breaks_lo, breaks_hi = _others(heads, "line_break", {(3, 4)})
    assert breaks > breaks_hi  # the line-break head
    rhyme = [heads[k]["rhyme"] for k in ((4, 2), (4, 1))]
    above = [heads[k]["line_above"] for k in ((4, 2), (4, 1))]
    _, rhyme_hi = _others(heads, "rhyme", {(4, 2), (4, 1)})
    assert rhyme[0] > rhyme[1] > rhyme_hi  # the rhyme slot: layer 4, heads 2 and 1 ...
    assert rhyme[0] > 2.5 * above[0] and rhyme[1] > 2 * above[1]  # ... far above the same place elsewhere
    entropy = sorted(heads, key=lambda k: heads[k]["entropy"])
    assert entropy[:3] == [(3, 1), (1, 4), (3, 4)]  # the three sharpest heads are specialists from the list
    rest = [heads[k]["entropy"] for k in entropy[3:]]
    even = sum(math.log(i + 1) for i in range(1, 128)) / 127  # evenly spread over the visible characters
    return [
        *prev, prev_lo, prev_hi, *punct, punct_lo, punct_hi, *breaks_l1, breaks, breaks_lo, breaks_hi,
        rhyme[0], above[0], rhyme[1], above[1], rhyme_hi,
        even, *(heads[k]["entropy"] for k in entropy[:3]), min(rest), max(rest),
    ]  # fmt: skip


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_1_quotes_the_head_profile_of_the_shipped_model(heads, lang):
    text = _section(_prose("01-multi-head", lang), "{#what-heads-learn}")
    figures = heads_claims(heads)
    decimals = [2] * 21 + [1] + [2] * 5  # the ln-average 3.9 to one decimal
    at = 0
    for x, d in zip(figures, decimals, strict=True):
        shown = _written(x, lang, d)
        found = text.find(shown, at)
        assert found >= 0, (lang, shown, figures)
        at = found  # in the order the prose gives them


@pytest.mark.slow
def test_the_stored_head_profile_is_what_a_fresh_measurement_gives(learned, heads):
    from models.heads import profile

    val_text = tang_texts()[1]
    fresh = profile(learned.model, learned.tokenizer, val_text, windows=256)
    for li, layer in enumerate(fresh["heads"]):
        for hi, figures in enumerate(layer):
            for feature, value in figures.items():
                assert value == pytest.approx(heads[(li + 1, hi + 1)][feature], abs=1e-6)


# --- lesson 3: what gpt-rope-short.pt does past its trained length -------------------------------------


@pytest.fixture(scope="module")
def scaling() -> dict:
    from models.context import stored_table

    ck = load_checkpoint(CHECKPOINTS / "gpt-rope-short.pt")
    table = stored_table(ck.meta, 4.0, 2048)
    assert table["trained_length"] == 32
    return {m: {s["length"]: s for s in scores} for m, scores in table["methods"].items()}


def _bands(values: list[float], size: int = 8) -> list[float]:
    """Means over stretches of `size` positions, as the experiment's by-position table shows them."""
    return [sum(values[i : i + size]) / size for i in range(0, len(values), size)]


def scaling_claims(scaling) -> list[float]:
    """The figures lesson 3 quotes at scale 4, each checked for what the prose says about it, in prose order."""
    loss = {m: [scaling[m][n]["loss"] for n in (32, 64, 128)] for m in scaling}
    ent = {m: [scaling[m][n]["entropy"] for n in (32, 64, 128)] for m in scaling}
    uniform = [scaling["none"][n]["uniform"] for n in (32, 128)]
    none, pi, ntk, yarn = loss["none"], loss["pi"], loss["ntk"], loss["yarn"]
    assert none == sorted(none)  # plain RoPE gets worse with length
    band = {m: _bands(scaling[m][128]["loss_by_position"]) for m in scaling}  # band k: positions 8k..8k+7
    plain = band["none"]
    assert plain[3] < plain[4] < plain[6] and min(plain[8:]) > 6.4  # 24-31, 32-39, 48-55; above 6.4 from 64
    assert min(pi) > max(none)  # PI untuned is worse everywhere
    # best on average at 4×, far from 1×
    assert min(loss, key=lambda m: loss[m][2]) == "ntk" and ntk[2] > none[0]
    assert yarn[2] < none[2] and none[2] - yarn[2] < 0.05  # hardly better than plain RoPE on average
    lowest = [min(band, key=lambda m: band[m][k]) for k in range(16)]
    assert lowest[:4] == ["none"] * 4  # inside the trained length plain RoPE is lowest ...
    assert lowest[4:9] == ["ntk"] * 5 and lowest[9:] == ["yarn"] * 7  # ... NTK on 32-71, YaRN from 72 on
    ntk_gap = max(plain[k] - band["ntk"][k] for k in range(12, 16))
    # NTK within 0.09 of plain RoPE from position 96 on, and below it
    assert 0 < ntk_gap < 0.09 and min(plain[k] - band["ntk"][k] for k in range(12, 16)) > 0
    # the entropy grows with the keys but stays under half of evenly spread attention, without a jump at 32
    assert ent["none"][2] > ent["none"][0] and ent["none"][2] < uniform[1] / 2
    e = scaling["none"][128]["entropy_by_position"]
    step = [sum(e[i : i + 8]) / 8 for i in range(0, 48, 8)]
    assert step[4] - step[3] <= step[3] - step[2] + 0.02  # no jump past position 32 ...
    assert plain[6] - plain[3] > 1.0  # ... where the loss jumps
    assert round(ent["ntk"][2], 2) - round(ent["none"][2], 2) <= 0.01  # the same entropy, a lower loss near
    far_ent = {m: _bands(scaling[m][128]["entropy_by_position"])[14] for m in scaling}
    assert min(far_ent, key=far_ent.get) == "yarn"  # the sharpest far out, where it is lowest
    return [
        *none, plain[3], plain[4], plain[6], pi[0], pi[2], *ntk, none[0], yarn[0], yarn[2], none[2],
        band["ntk"][6], plain[6], plain[14], band["ntk"][14], band["yarn"][14], ntk_gap, plain[3], band["yarn"][3],
        ent["none"][0], ent["none"][2], *uniform, ent["ntk"][2], far_ent["yarn"], far_ent["none"], far_ent["ntk"],
    ]  # fmt: skip


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_3_quotes_the_context_scaling_tables_of_the_shipped_rope_model(scaling, lang):
    text = _section(_prose("03-rope-alibi", lang), "{#longer-contexts}")
    figures = scaling_claims(scaling)
    at = 0
    for x in figures:
        # the gap is quoted as a bound ("within 0.09"): the next hundredth up
        shown = _written(math.ceil(x * 100) / 100 if x < 0.1 else x, lang)
        found = text.find(shown, at)
        assert found >= 0, (lang, shown, figures)
        at = found
    assert _written(6.4, lang, 1) in text  # "above 6.4 from position 64 on"


def test_the_context_scaling_experiment_shows_those_tables(scaling):
    from tutor.experiments.runner import run_quick

    m = run_quick("context-scaling").metrics
    assert m["stored"] == 1
    for method, lengths in scaling.items():
        for k, n in ((1, 32), (2, 64), (4, 128)):
            assert m[f"loss_{k}x_{method}"] == lengths[n]["loss"]
            assert m[f"entropy_{k}x_{method}"] == lengths[n]["entropy"]


# --- lesson 1: what the quatrain's heatmaps show --------------------------------------------------------

QUATRAIN = "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼"


def _brightest(learned, layer: int, head: int) -> list[str]:
    """Per query character of the quatrain, the character its row of this head's heatmap is brightest at."""
    import torch

    ids = torch.tensor(learned.tokenizer.encode(QUATRAIN, unknown="unk"))
    with torch.no_grad():
        rows = learned.model.attention_maps(ids)[layer - 1, head - 1]
    return [QUATRAIN[int(row.argmax())] for row in rows]


@pytest.mark.parametrize("lang", LANGS)
def test_the_heads_experiment_in_lesson_1_draws_the_quatrain(lang):
    text = _section(_prose("01-multi-head", lang), "{#what-heads-learn}")
    assert 'text = "' + QUATRAIN.replace("\n", "\\n") + '"' in text


def test_the_quatrains_heatmaps_show_what_lesson_1_says(learned):
    second = QUATRAIN.index("\n") + 1
    comma = QUATRAIN.index("，", second)
    l3h4 = _brightest(learned, 3, 4)
    assert l3h4[second:comma] == ["\n"] * 5  # 欲穷千里目 look at the line break ...
    assert l3h4[comma : len(QUATRAIN) - 1] == list(
        "欲穷千里目"
    )  # ... then ，更上一层 at the partner of the character each predicts
    assert _brightest(learned, 4, 2)[-1] == "流"  # 楼 looks up its rhyme
    l1h4 = _brightest(learned, 1, 4)
    previous = sum(l1h4[i] == QUATRAIN[i - 1] for i in range(1, len(QUATRAIN)))
    assert previous >= len(QUATRAIN) - 2  # just left of the diagonal, all but one row
