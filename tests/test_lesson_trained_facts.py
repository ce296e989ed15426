"""Every number a lesson quotes from a trained model, tied to the shipped checkpoint it came from.

Lesson 1 describes what the heads of gpt-learned.pt look at, from the profile stored in its metadata
(tutor/model/heads.py, shown by the heads experiment); lesson 3 quotes what gpt-rope-short.pt does past its
trained length, from the context-scaling tables stored in its metadata (tutor/model/context.py). Each claim is
checked against those figures, and each figure against the prose in all three languages (German writes
0,26 for 0.26). The slow tests measure the stored figures again from the checkpoint and the corpus.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tutor.model.checkpoint import load_checkpoint
from tutor.model.corpus import tang_texts

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = ROOT / "tutor" / "model" / "checkpoints"
LANGS = ("en", "de", "zh")


def _prose(lesson: str, lang: str) -> str:
    return (ROOT / "tutor" / "lessons" / lesson / f"{lang}.md").read_text(encoding="utf-8")


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


def heads_claims(heads, learned) -> list[float]:
    """The figures lesson 1 quotes, each checked for what the prose says about it; returned in prose order."""
    prev_heads = [(1, 1), (3, 3), (3, 4)]
    prev = [heads[k]["previous"] for k in prev_heads]
    prev_lo, prev_hi = _others(heads, "previous", set(prev_heads))
    assert prev == sorted(prev, reverse=True) and min(prev) > prev_hi  # three previous-character heads
    layer_1 = [(1, h) for h in range(1, 5)]
    punct = [heads[k]["punctuation"] for k in layer_1]
    breaks = [heads[k]["line_break"] for k in layer_1]
    rest = [f["punctuation"] for k, f in heads.items() if k[0] > 1]
    assert sum(punct) / 4 > sum(rest) / len(rest) + 0.05  # layer 1 looks back at the marks more than the rest
    same = heads[(4, 4)]
    assert same["half_slot"] == max(f["half_slot"] for f in heads.values())  # the same-slot head ...
    assert same["half_slot"] > 5 * same["half_slot_elsewhere"]  # ... far above the same distance elsewhere
    assert same["line_break"] == max(f["line_break"] for f in heads.values())  # and the line-break head
    weaker = heads[(3, 3)]
    assert sorted(f["half_slot"] for f in heads.values())[-2] == weaker["half_slot"]
    assert weaker["half_slot"] > 5 * weaker["half_slot_elsewhere"]
    rows = _rows(learned, QUATRAIN, 4, 4)
    second = QUATRAIN.index("\n", 1) + 1
    comma = QUATRAIN.index("，", second)
    partners = [rows[comma + j] for j in range(3)]  # ，更上 ...
    assert [QUATRAIN[r.argmax()] for r in partners] == list("欲穷千")  # ... at 欲穷千
    assert QUATRAIN[rows[comma + 4].argmax()] == "目"  # 层 at 目
    partner_weights = [max(r) for r in partners]
    rhyme = [heads[k]["rhyme"] for k in ((4, 2), (4, 1))]
    control = [heads[k]["rhyme_elsewhere"] for k in ((4, 2), (4, 1))]
    _, rhyme_hi = _others(heads, "rhyme", {(4, 2), (4, 1)})
    assert rhyme[0] > rhyme[1] > rhyme_hi  # the rhyme head, and a weak one beside it
    assert rhyme[0] > 10 * control[0] and rhyme[1] > 2 * control[1]
    ceng = _rows(learned, QUATRAIN, 4, 2)[QUATRAIN.index("层")]
    assert QUATRAIN[ceng.argmax()] == "流"
    entropy = sorted(heads, key=lambda k: heads[k]["entropy"])
    assert entropy[:3] == [(3, 3), (4, 4), (1, 1)]  # the three sharpest heads are specialists from the list
    others = [heads[k]["entropy"] for k in entropy[3:]]
    even = sum(math.log(i + 1) for i in range(1, 128)) / 127  # evenly spread over the visible characters
    return [
        *prev,
        prev_lo,
        prev_hi,
        min(punct),
        max(punct),
        min(breaks),
        max(breaks),
        same["half_slot"],
        same["half_slot_elsewhere"],
        min(partner_weights),
        max(partner_weights),
        same["line_break"],
        weaker["half_slot"],
        weaker["half_slot_elsewhere"],
        rhyme[0],
        control[0],
        rhyme[1],
        control[1],
        rhyme_hi,
        max(ceng),
        even,
        *(heads[k]["entropy"] for k in entropy[:3]),
        min(others),
        max(others),
    ]


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_1_quotes_the_head_profile_of_the_shipped_model(heads, learned, lang):
    text = _section(_prose("01-multi-head", lang), "{#what-heads-learn}")
    figures = heads_claims(heads, learned)
    decimals = [2] * 22 + [1] + [2] * 5  # the ln-average 3.9 to one decimal
    at = 0
    for x, d in zip(figures, decimals, strict=True):
        shown = _written(x, lang, d)
        found = text.find(shown, at)
        assert found >= 0, (lang, shown, figures)
        at = found  # in the order the prose gives them


@pytest.mark.slow
def test_the_stored_head_profile_is_what_a_fresh_measurement_gives(learned, heads):
    from tutor.model.heads import profile

    val_text = tang_texts()[1]
    fresh = profile(learned.model, learned.tokenizer, val_text, windows=256)
    for li, layer in enumerate(fresh["heads"]):
        for hi, figures in enumerate(layer):
            for feature, value in figures.items():
                assert value == pytest.approx(heads[(li + 1, hi + 1)][feature], abs=1e-6)


# --- lesson 3: what gpt-rope-short.pt does past its trained length -------------------------------------


@pytest.fixture(scope="module")
def scaling() -> dict:
    from tutor.model.context import stored_table

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
        *none,
        plain[3],
        plain[4],
        plain[6],
        pi[0],
        pi[2],
        *ntk,
        none[0],
        yarn[0],
        yarn[2],
        none[2],
        band["ntk"][6],
        plain[6],
        plain[14],
        band["ntk"][14],
        band["yarn"][14],
        ntk_gap,
        plain[3],
        band["yarn"][3],
        ent["none"][0],
        ent["none"][2],
        *uniform,
        ent["ntk"][2],
        far_ent["yarn"],
        far_ent["none"],
        far_ent["ntk"],
    ]


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


# --- lesson 1: what the heatmaps of the quatrain and of 静夜思 show ----------------------------------------

# as the heads experiment reads them: after the line break that opens a poem (tutor.model.train.poem_starts)
QUATRAIN = "\n白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼"
JINGYESI = "\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。"


def _rows(learned, text: str, layer: int, head: int) -> list:
    """Each query character's attention row of this head, as a list of weights."""
    import torch

    ids = torch.tensor(learned.tokenizer.encode(text, unknown="unk"))
    with torch.no_grad():
        rows = learned.model.attention_maps(ids)[layer - 1, head - 1]
    return [_Row(r.tolist()) for r in rows]


class _Row(list):
    def argmax(self) -> int:
        return max(range(len(self)), key=self.__getitem__)


def _brightest(learned, text: str, layer: int, head: int) -> list[str]:
    """Per query character, the character its row of this head's heatmap is brightest at."""
    return [text[r.argmax()] for r in _rows(learned, text, layer, head)]


@pytest.mark.parametrize("lang", LANGS)
def test_the_heads_experiments_in_lesson_1_draw_the_quatrain_and_jingyesi(lang):
    text = _section(_prose("01-multi-head", lang), "{#what-heads-learn}")
    for poem in (QUATRAIN, JINGYESI):
        assert 'text = "' + poem[1:].replace("\n", "\\n") + '"' in text


def test_the_quatrains_heatmaps_show_what_lesson_1_says(learned):
    l1h1 = _brightest(learned, QUATRAIN, 1, 1)
    previous = sum(l1h1[i] == QUATRAIN[i - 1] for i in range(1, len(QUATRAIN)))
    assert previous >= 0.8 * (len(QUATRAIN) - 1)  # just left of the diagonal, in most rows (20 of 24)


def test_jingyesis_heatmaps_show_what_lesson_1_says(learned):
    l4h4 = _brightest(learned, JINGYESI, 4, 4)
    first_comma = JINGYESI.index("，")
    assert l4h4[first_comma] == "床"  # the partner from the comma ...
    assert l4h4[first_comma + 1 : first_comma + 5] == ["\n"] * 4  # ... then back at the line break: 疑是地上
    second = JINGYESI.index("\n", 1) + 1
    low = JINGYESI.index("低")
    assert (l4h4[low], l4h4[JINGYESI.index("思")]) == ("头", "明")  # the parallel couplet's partners
    assert second < low
    assert _brightest(learned, JINGYESI, 4, 2)[JINGYESI.index("故")] == "霜"  # the rhyme head
