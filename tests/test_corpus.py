"""The shipped corpora, their deterministic split, the Tang corpus build, the vocabulary policy, and the
importer for learners' corpora."""

from __future__ import annotations

import codecs
import fnmatch
import gzip
import io
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import tomllib
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

import tutor.model.corpus
import tutor.model.corpus_import
from tutor.model.corpus import (
    ALWAYS_TRAIN,
    CorpusError,
    Poem,
    corpus_text,
    load_poems,
    load_tang,
    save_poems,
    split_poems,
)
from tutor.model.corpus_import import (
    SKIP_DUPLICATE,
    SKIP_LOST_GLYPHS,
    SKIP_MALFORMED,
    SKIP_NO_TEXT,
    import_corpus,
)
from tutor.model.data import build_corpus
from tutor.model.errors import ModelError
from tutor.model.tokenizer import MIN_COUNT, UNK, CharTokenizer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tutor" / "model" / "data"
SHIPPED = DATA / "poems.json"

# Frequent characters that exist only in traditional writing (their simplified forms differ). Characters that
# simplified text also uses (乾, 著, 後 as in 皇后 is 后 …) are deliberately left out.
TRADITIONAL_ONLY = set(
    "風雲門來時東為無書長國馬鳥見開歸聲頭對過還遠邊問間樓愛萬與鄉紅綠葉燈夢淚憶隨飛寫雙將從應說誰聽"
    "塵陽陰雞離憐鶴鴻鶯劍顏壯盡幾獨臺舊歲處變漢滿憑煙裡這們會學義亂語讀經樂齊鐘雖發"
)
DENG = ("登鹳雀楼", "王之涣")
DENG_LINES = ("白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。")
DENG_TRADITIONAL = ["白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"]


@pytest.fixture(scope="module")
def poems() -> list[Poem]:
    return load_poems()


@pytest.fixture(scope="module")
def tang() -> list[Poem]:
    return load_tang()


def _segments(poem: Poem) -> list[str]:
    return [s for line in poem.lines for s in re.split("[，。！？；]", line) if s]


def _keys(poems: list[Poem]) -> set[tuple[str, str]]:
    return {(p.title, p.author) for p in poems}


# --- the small corpus of the shipped checkpoints ----------------------------------------------------------------


def test_small_corpus_has_at_least_300_poems_from_tang_and_song(poems: list[Poem]) -> None:
    assert len(poems) >= 300
    assert {p.dynasty for p in poems} == {"唐", "宋"}


def test_default_load_finds_the_shipped_file_via_package_resources(poems: list[Poem]) -> None:
    assert load_poems(SHIPPED) == poems


def test_deng_guan_que_lou_is_present_with_the_lessons_line(poems: list[Poem]) -> None:
    matches = [p for p in poems if (p.title, p.author) == DENG]
    assert len(matches) == 1
    assert matches[0].lines == DENG_LINES
    assert matches[0].text.startswith("白日依山尽")


def test_no_duplicate_title_and_author(poems: list[Poem]) -> None:
    keys = [(p.title, p.author) for p in poems]
    assert len(keys) == len(set(keys))


def test_corpus_is_simplified_chinese_with_full_width_punctuation(poems: list[Poem]) -> None:
    text = corpus_text(poems)
    found = sorted(set(text) & TRADITIONAL_ONLY)
    assert found == [], f"traditional-only characters in the corpus: {found}"
    assert not re.search(r"[A-Za-z0-9,.!?;:]", text)
    for p in poems:
        for line in p.lines:
            assert line[-1] in "。！？", (p.title, line)


def test_most_poems_have_five_character_lines(poems: list[Poem]) -> None:
    five = [p for p in poems if all(len(s) == 5 for s in _segments(p)[1:])]
    assert len(five) / len(poems) >= 0.6


# --- the Tang corpus --------------------------------------------------------------------------------------------


def test_tang_corpus_has_40000_simplified_regular_poems_and_deng_guan_que_lou_in_train(
    tang: list[Poem],
) -> None:
    assert len(tang) >= 40_000
    assert {p.dynasty for p in tang} == {"唐"}
    assert [p for p in tang if build_corpus.verse_problem(p)] == []
    text = corpus_text(tang)
    assert sorted(set(text) & TRADITIONAL_ONLY) == []
    assert len({p.text for p in tang}) == len(tang)  # deduplicated
    train, val = split_poems(tang)
    assert DENG in _keys(train) and DENG not in _keys(val)
    assert [p.lines for p in train if (p.title, p.author) == DENG] == [DENG_LINES]
    assert 0.08 <= len(val) / len(tang) <= 0.12


def test_tang_corpus_ships_compressed_with_its_source_and_licence() -> None:
    shipped = DATA / tutor.model.corpus.TANG_CORPUS
    assert shipped.stat().st_size <= 8_000_000
    source = json.loads(gzip.decompress(shipped.read_bytes()))["source"]
    assert source["package"] == "chinese-poetry@2.0.1" and source["integrity"].startswith("sha512-")
    assert "MIT" in source["licence"] and "t2s" in source["conversion"]
    licence = (DATA / "LICENSE-chinese-poetry.txt").read_text(encoding="utf-8")
    assert "The MIT License" in licence and "Copyright (c) 2016 JackeyGao" in licence
    # the installed package carries both (setuptools matches package-data patterns like fnmatch)
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "tutor.model"
    ]
    for name in ("data/tang.json.gz", "data/LICENSE-chinese-poetry.txt", "data/poems.json"):
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


# --- the build script: filter, conversion, deduplication --------------------------------------------------------


def _tang_entry(title: str, author: str, paragraphs: list[str]) -> dict:
    return {"author": author, "paragraphs": paragraphs, "title": title, "id": "x"}


TANG_FILES = {
    "package/dist/quantangshi/poet.tang.0.json": [
        _tang_entry("登樓", "朱斌", DENG_TRADITIONAL),  # the same poem under another name, and first
        _tang_entry("春曉", "孟浩然", ["春眠不覺曉，處處聞啼鳥。", "夜來風雨聲，花落知多少。"]),
        _tang_entry("江雪", "柳宗元", ["千山鳥飛絕，萬徑人蹤滅。", "孤舟蓑笠翁，獨釣寒江雪。", "。"]),
        _tang_entry("注", "某", ["白雲千載空悠悠，「一作空」青山。"]),
        _tang_entry("缺", "某", ["□□依山盡，黃河入海流。"]),
        _tang_entry("雜言", "某", ["一二三四，五六七八九。"]),
        _tang_entry("數", "某", ["年年歲歲3花相似，歲歲年年人不同。"]),
    ],
    "package/dist/quantangshi/poet.tang.1000.json": [
        _tang_entry("登鸛雀樓", "王之渙", DENG_TRADITIONAL),
        _tang_entry("春曉", "孟浩然", ["春眠不覺曉，處處聞啼鳥。", "夜來風雨聲，花落知多少。"]),
    ],
    "package/dist/quantangshi/poet.song.0.json": [
        _tang_entry("宋", "某", ["春風又綠江南岸，明月何時照我還。"])
    ],
}


def _tarball(path: Path, files: dict[str, list[dict]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, entries in files.items():
            data = json.dumps(entries, ensure_ascii=False, indent=4).encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_build_keeps_clean_simplified_verse_and_reports_what_it_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tarball = _tarball(tmp_path / "chinese-poetry-2.0.1.tgz", TANG_FILES)
    out = tmp_path / "tang.json.gz"
    assert build_corpus.main([str(tarball), "--out", str(out)]) == 0
    built = load_poems(out)
    assert [(p.title, p.author, p.dynasty) for p in built] == [
        ("登鹳雀楼", "王之涣", "唐"),  # replaced 朱斌's earlier copy, in its place
        ("春晓", "孟浩然", "唐"),
        ("江雪", "柳宗元", "唐"),
    ]
    assert built[0].lines == DENG_LINES
    assert built[2].lines == (
        "千山鸟飞绝，万径人踪灭。",
        "孤舟蓑笠翁，独钓寒江雪。",
    )  # the lone "。" line dropped
    report = capsys.readouterr().out
    assert "kept 3 poems" in report
    for count, reason in [
        (2, SKIP_DUPLICATE),
        (1, build_corpus.SKIP_BRACKETS),
        (1, SKIP_LOST_GLYPHS),
        (1, build_corpus.SKIP_IRREGULAR),
        (1, build_corpus.SKIP_DIGITS_LATIN),
    ]:
        assert re.search(rf"dropped +{count}  {re.escape(reason)}", report), reason
    assert "poet.tang.0.json: entry [3] (注)" in report  # where the first bracketed poem was
    first = out.read_bytes()
    build_corpus.main([str(tarball), "--out", str(out)])
    assert out.read_bytes() == first  # reproducible to the byte


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (["白日依山尽，黄河入海流。"], None),
        (["朝辞白帝彩云间，千里江陵一日还。"], None),
        (["白日依山尽，朝辞白帝彩云间。"], None),  # five and seven may mix
        (["君不见，黄河之水天上来。"], build_corpus.SKIP_IRREGULAR),
        (["白日依山尽，黄河入海流"], build_corpus.SKIP_IRREGULAR),  # every clause ends in punctuation
        (["白日依山尽，，黄河入海流。"], build_corpus.SKIP_IRREGULAR),
        (["白日依山尽：黄河入海流。"], build_corpus.SKIP_IRREGULAR),
        (["白日依山尽，黄河入海流。（一作江）"], build_corpus.SKIP_BRACKETS),
        (["白日依山尽，《黄河》入海流。"], build_corpus.SKIP_BRACKETS),
        (["白日依山尽，黄河入海A。"], build_corpus.SKIP_DIGITS_LATIN),
        (["白日依山尽，黄河入海１。"], build_corpus.SKIP_DIGITS_LATIN),
    ],
)
def test_verse_filter(lines: list[str], problem: str | None) -> None:
    assert build_corpus.verse_problem(Poem("题", "某", "唐", lines)) == problem


# --- vocabulary policy ------------------------------------------------------------------------------------------


def test_vocabulary_keeps_characters_seen_min_count_times_in_training_and_maps_the_rest_to_id_0() -> None:
    assert MIN_COUNT == 3
    train_text = "春春春风风风雨\n春风雨。\n\n春风。"
    tok = CharTokenizer.for_training(train_text)
    assert tok.chars == [UNK, "\n", "春", "风"]  # 雨 and 。 are seen twice: below the count
    assert tok.encode("春雨", unknown="unk") == [2, 0]
    assert tok.encode("春花", unknown="unk") == [2, 0]  # never seen at all: the same id
    with pytest.raises(ValueError, match="'雨' at 1"):
        tok.encode("春雨")  # by default an unknown character is an error, not silently id 0
    assert (
        CharTokenizer.for_training(train_text, min_count=1).chars == CharTokenizer.from_text(train_text).chars
    )
    with pytest.raises(ValueError, match="min_count"):
        CharTokenizer.for_training(train_text, min_count=0)


def test_vocabulary_round_trips_and_old_tokenizers_still_load() -> None:
    tok = CharTokenizer.for_training("白日依山尽" * 3)
    assert CharTokenizer.from_dict(tok.to_dict()).chars == tok.chars
    old = CharTokenizer.from_dict(
        {"kind": "char", "chars": UNK + "\n白日"}
    )  # as the shipped checkpoints hold
    assert old.encode("白日\n") == [2, 3, 1]


def test_vocabulary_of_the_tang_training_split_is_about_six_thousand(tang: list[Poem]) -> None:
    train_text = corpus_text(split_poems(tang)[0])
    tok = CharTokenizer.for_training(train_text)
    assert 5_000 <= tok.vocab_size <= 8_000
    counts = Counter(train_text)
    unknown = sum(n for c, n in counts.items() if c not in tok.stoi) / len(train_text)
    assert unknown < 0.002  # id 0 stands for a sliver of the text


# --- split ------------------------------------------------------------------------------------------------------


def test_split_is_disjoint_covers_everything_and_val_is_non_empty(poems: list[Poem]) -> None:
    train, val = split_poems(poems)
    assert val and train
    assert not _keys(train) & _keys(val)
    assert _keys(train) | _keys(val) == _keys(poems)
    assert len(train) + len(val) == len(poems)
    assert 0.05 <= len(val) / len(poems) <= 0.15


def test_split_does_not_depend_on_input_order(poems: list[Poem]) -> None:
    shuffled = list(poems)
    random.Random(7).shuffle(shuffled)
    assert split_poems(shuffled) == split_poems(poems)


def test_split_is_the_same_in_processes_with_different_hash_seeds() -> None:
    code = (
        "from tutor.model.corpus import load_poems, split_poems\n"
        "print('|'.join(p.title + '/' + p.author for p in split_poems(load_poems())[1]))"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_deng_guan_que_lou_is_pinned_to_train_even_when_almost_everything_goes_to_val(
    poems: list[Poem],
) -> None:
    assert DENG in ALWAYS_TRAIN
    for fraction in (0.1, 0.5, 0.99):
        train, val = split_poems(poems, val_fraction=fraction)
        assert DENG in _keys(train)
        assert DENG not in _keys(val)
    train, val = split_poems(poems, val_fraction=0.99)
    assert len(val) > 0.9 * len(poems)


def test_tiny_corpus_still_gets_one_val_poem_and_bad_fraction_is_refused() -> None:
    two = [Poem("甲", "", "", ("春风。",)), Poem("乙", "", "", ("秋月。",))]
    train, val = split_poems(two, val_fraction=0.01)
    assert len(train) == 1 and len(val) == 1
    with pytest.raises(CorpusError, match="val_fraction"):
        split_poems(two, val_fraction=0.0)
    with pytest.raises(CorpusError, match="at least 2 poems"):
        split_poems(two[:1])


def test_corpus_text_joins_lines_by_newline_and_poems_by_blank_line() -> None:
    a = Poem("甲", "某", "唐", ("一二三四五，", "六七八九十。"))
    b = Poem("乙", "某", "唐", ("春眠不觉晓。",))
    assert a.text == "一二三四五，\n六七八九十。" and a.lines == ("一二三四五，", "六七八九十。")
    assert corpus_text([a, b]) == "一二三四五，\n六七八九十。\n\n春眠不觉晓。"


# --- save / load ------------------------------------------------------------------------------------------------


def test_save_then_load_round_trips_and_leaves_no_temp_file(tmp_path: Path, poems: list[Poem]) -> None:
    target = tmp_path / "sub" / "mine.json"
    save_poems(poems[:5], target)
    save_poems(poems[:20], target)  # overwrite in place
    assert load_poems(target) == poems[:20]
    assert [p.name for p in target.parent.iterdir()] == ["mine.json"]
    packed = tmp_path / "mine.json.xz"
    save_poems(poems[:20], packed, source={"note": "test"})
    assert load_poems(packed) == poems[:20]


def test_malformed_own_format_names_file_and_entry(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    entry = {"title": "甲", "author": "某", "dynasty": "唐", "lines": "not a list"}
    bad.write_text(json.dumps({"format": 1, "poems": [entry]}, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.json: poems\[0\] \(甲\): field 'lines'") as info:
        load_poems(bad)
    assert isinstance(info.value, ModelError)
    bad.write_text(json.dumps({"format": 2, "poems": []}), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.json: field 'format' must be 1"):
        load_poems(bad)


# --- importer ---------------------------------------------------------------------------------------------------


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_traditional_chinese_poetry_json_imports_as_simplified_unless_the_script_is_kept(
    tmp_path: Path,
) -> None:
    src = _write_json(tmp_path / "poet.tang.0.json", [_tang_entry("登鸛雀樓", "王之渙", DENG_TRADITIONAL)])
    poems, report = import_corpus(src)
    assert poems == [Poem("登鹳雀楼", "王之涣", "", DENG_LINES)]
    assert (report.poems, report.characters, report.vocabulary, report.converted) == (1, 24, 22, True)
    kept, report = import_corpus(src, keep_script=True)
    assert kept == [Poem("登鸛雀樓", "王之渙", "", DENG_TRADITIONAL)] and not report.converted


def test_import_open_layout_lines_content_rhythmic_and_nested_lists(tmp_path: Path) -> None:
    src = _write_json(
        tmp_path / "mixed.json",
        [
            [{"title": "春晓", "author": "孟浩然", "dynasty": "唐", "lines": ["春眠不觉晓，处处闻啼鸟。"]}],
            [
                {
                    "title": "江雪",
                    "author": "柳宗元",
                    "content": "千山鸟飞绝，万径人踪灭。孤舟蓑笠翁，独钓寒江雪。",
                }
            ],
            {"rhythmic": "如梦令", "author": "李清照", "paragraphs": ["昨夜雨疏风骤，浓睡不消残酒。"]},
            {"title": "关雎", "chapter": "国风", "content": ["关关雎鸠，在河之洲。", "窈窕淑女，君子好逑。"]},
        ],
    )
    got, _ = import_corpus(src)
    assert [(p.title, p.author, p.dynasty) for p in got] == [
        ("春晓", "孟浩然", "唐"),
        ("江雪", "柳宗元", ""),
        ("如梦令", "李清照", ""),
        ("关雎", "", ""),  # 诗经 has no author
    ]
    assert got[1].lines == ("千山鸟飞绝，万径人踪灭。", "孤舟蓑笠翁，独钓寒江雪。")
    assert got[3].lines == ("关关雎鸠，在河之洲。", "窈窕淑女，君子好逑。")


def test_import_reports_what_it_skipped_and_why_with_the_first_position(tmp_path: Path) -> None:
    src = _write_json(
        tmp_path / "poems.json",
        [
            {"title": "春晓", "author": "孟浩然", "paragraphs": ["春眠不覺曉，處處聞啼鳥。"]},
            {"title": "空", "author": "某", "paragraphs": []},
            {
                "title": "春曉",
                "author": "孟浩然",
                "paragraphs": ["春眠不覺曉，處處聞啼鳥。"],
            },  # same once simplified
            {"title": "缺", "author": "某", "paragraphs": ["□□依山尽，黄河入海流。"]},
            {"title": "私", "author": "某", "paragraphs": ["\ue829身思狡兔，侧目似愁胡。"]},
            {"title": "点", "author": "某", "paragraphs": ["。", "！"]},
        ],
    )
    poems, report = import_corpus(src)
    assert [p.title for p in poems] == ["春晓"]
    assert report.skipped == {SKIP_NO_TEXT: 2, SKIP_DUPLICATE: 1, SKIP_LOST_GLYPHS: 2}
    assert re.fullmatch(r".*poems\.json: entry \[1\] \(空\)", report.first_skipped[SKIP_NO_TEXT])
    assert report.first_skipped[SKIP_DUPLICATE].endswith("entry [2] (春曉)")


def test_a_collection_with_lines_as_lists_of_characters_imports_without_those_entries(tmp_path: Path) -> None:
    # The layout of third-party Tang collections (chinese-poetry's shape, "lines" for "paragraphs"), where
    # a few entries hold each line as a list of characters: those are skipped and reported, not the file.
    src = _write_json(
        tmp_path / "tang-collection.json",
        [
            {
                "title": "春曉",
                "author": "孟浩然",
                "lines": ["春眠不覺曉，處處聞啼鳥。", "夜來風雨聲，花落知多少。"],
            },
            {"title": "登鸛雀樓", "author": "王之渙", "lines": [list(line) for line in DENG_TRADITIONAL]},
            {
                "title": "江雪",
                "author": "柳宗元",
                "lines": ["千山鳥飛絕，萬徑人蹤滅。", "孤舟蓑笠翁，獨釣寒江雪。"],
            },
            {"title": "靜夜思", "author": "李白", "lines": [list("床前明月光，疑是地上霜。")]},
            {"title": "乙", "author": 5, "lines": ["春風又綠江南岸。"]},
        ],
    )
    poems, report = import_corpus(src)
    assert [(p.title, p.author) for p in poems] == [("春晓", "孟浩然"), ("江雪", "柳宗元")]
    assert report.skipped == {SKIP_MALFORMED: 3}
    assert report.first_skipped[SKIP_MALFORMED] == (
        f"{src}: entry [1] (登鸛雀樓): field 'lines' must be a list of strings or a string; lines[0] is list"
    )


def test_import_plain_text_with_titles_untitled_poems_duplicates_and_a_bom(tmp_path: Path) -> None:
    src = tmp_path / "mine.txt"
    src.write_text(
        "\ufeff靜夜思\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n \n"
        "千山鸟飞绝，万径人踪灭。\n孤舟蓑笠翁，独钓寒江雪。\r\n\r\n"
        "春眠不觉晓\n处处闻啼鸟\n\n"
        "千山鸟飞绝，万径人踪灭。\n孤舟蓑笠翁，独钓寒江雪。\n",
        encoding="utf-8",
    )
    got, report = import_corpus(src)
    assert got[0] == Poem("静夜思", "", "", ("床前明月光，疑是地上霜。", "举头望明月，低头思故乡。"))
    assert got[1] == Poem("", "", "", ("千山鸟飞绝，万径人踪灭。", "孤舟蓑笠翁，独钓寒江雪。"))
    # A short unpunctuated first line is taken as the title: that is the documented rule.
    assert got[2] == Poem("春眠不觉晓", "", "", ("处处闻啼鸟",))
    assert len(got) == 3 and report.first_skipped == {SKIP_DUPLICATE: f"{src}: poem at line 12"}


def test_import_folder_several_files_our_format_and_compressed_files(
    tmp_path: Path, poems: list[Poem]
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    _write_json(folder / "b.json", [{"title": "乙", "author": "某", "paragraphs": ["秋月。"]}])
    _write_json(folder / "a.json", [{"title": "甲", "author": "某", "paragraphs": ["春风。"]}])
    (folder / "c.txt").write_text("冬雪。\n", encoding="utf-8")
    (folder / "notes.md").write_text("not a corpus", encoding="utf-8")
    assert [p.text for p in import_corpus(folder)[0]] == ["春风。", "秋月。", "冬雪。"]
    ours = tmp_path / "ours.json.gz"
    save_poems(poems[:3], ours, source={"package": "test"})
    got, report = import_corpus([folder / "a.json", ours], keep_script=True)
    assert got == [Poem("甲", "某", "", ("春风。",)), *poems[:3]]
    assert report.files == [str(folder / "a.json"), str(ours)]


def test_the_streaming_reader_gives_the_same_poems_with_tiny_chunks(
    tmp_path: Path, poems: list[Poem], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "ours.json"
    save_poems(poems[:40], src, source={"n": 12345})  # a number, strings and CJK cut at every point
    whole, _ = import_corpus(src, keep_script=True)
    monkeypatch.setattr(tutor.model.corpus_import, "_READ_CHUNK", 3)
    assert import_corpus(src, keep_script=True)[0] == whole == poems[:40]
    with_bom = tmp_path / "bom.json"
    with_bom.write_bytes(codecs.BOM_UTF8 + src.read_bytes())
    monkeypatch.setattr(tutor.model.corpus_import, "_READ_CHUNK", 2)  # the BOM itself cut in two
    assert import_corpus(with_bom, keep_script=True)[0] == whole
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"title": "甲",\n   "lines": ["春风。"]},\n  {"title": "乙" "lines": []}\n]')
    with pytest.raises(
        CorpusError, match=r"broken\.json: invalid JSON in entry \[1\]: parse error: after key and value"
    ):
        import_corpus(broken)


@pytest.mark.slow  # builds and imports a large file twice: a measurement more than a behaviour
def test_importing_a_large_file_costs_about_twice_its_size_in_memory(
    tmp_path: Path, tang: list[Poem]
) -> None:
    sample = tang[:12_000]
    as_json = tmp_path / "poet.tang.json"  # the chinese-poetry layout, as the package writes it
    entries = [_tang_entry(p.title, p.author, list(p.lines)) for p in sample]
    as_json.write_text(json.dumps(entries, ensure_ascii=False, indent=4), encoding="utf-8")
    as_text = tmp_path / "big.txt"  # the densest input there is: nothing but titles and lines
    as_text.write_text("\n\n".join(f"{p.title}\n{p.text}" for p in sample) + "\n", encoding="utf-8")
    tutor.model.corpus_import._converter()  # OpenCC's own tables are not the file's cost
    # Plain text peaks higher: the poems' own strings take 1.9x its size (each poem's title and text carry
    # a 74-byte header), and the duplicate index adds the rest.
    for path, bound in ((as_json, 2.0), (as_text, 2.4)):
        tracemalloc.start()
        try:
            got, _ = import_corpus(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(got) == len(sample)
        assert peak <= bound * path.stat().st_size, (path.name, peak / path.stat().st_size)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("gbk.txt", "静夜思".encode("gbk"), r"gbk\.txt: not UTF-8 text \(invalid byte at offset 0, line 1\)"),
        (
            "gbk.json",
            b'[\n{"title": "' + "静夜思".encode("gbk") + b'"}]',
            r"gbk\.json: not UTF-8 text \(invalid byte at offset 13, line 2\)",
        ),
        ("empty.txt", b"  \n\n", r"empty\.txt: file is empty"),
        (
            "broken.json",
            b'[\n{"title": "x",\n',
            r"broken\.json: invalid JSON in entry \[0\]: parse error: premature EOF",
        ),
        ("scalar.json", b"42", r"scalar\.json: invalid JSON at the start: expected a JSON list"),
        (
            "trailing.json",
            b'[]\n[{"title": "x"}]',
            r"trailing\.json: invalid JSON after the end of the JSON document: parse error: trailing garbage",
        ),
        (
            "numbers.json",
            b"[1, 2]",
            r"numbers\.json: no poems found \(skipped 2 malformed entry; first: .*numbers\.json: entry \[0\]: "
            r"expected an object, found int\)",
        ),
        ("object.json", b'{"poems": []}', r"object\.json: a top-level object must be our format"),
        (
            "notext.json",
            '[{"title": "甲", "author": "某"}]'.encode(),
            r"notext\.json: no poems found \(skipped 1 no text; first: .*notext\.json: entry \[0\] \(甲\)\)",
        ),
        ("nothing.json", b"[]", r"nothing\.json: no poems found$"),
    ],
)
def test_bad_corpus_files_raise_corpus_error_naming_file_and_position(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        import_corpus(path)


def test_missing_file_empty_folder_and_corrupt_archive_are_corpus_errors(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"nowhere\.json: file not found"):
        import_corpus(tmp_path / "nowhere.json")
    with pytest.raises(CorpusError, match=r"nowhere\.json: file not found"):
        load_poems(tmp_path / "nowhere.json")
    with pytest.raises(CorpusError, match="folder holds no .json or .txt files"):
        import_corpus(tmp_path)
    (tmp_path / "poems.json.gz").write_bytes(b"not gzip")
    with pytest.raises(CorpusError, match=r"poems\.json\.gz: cannot read"):
        import_corpus(tmp_path / "poems.json.gz")


def test_train_cli_reports_bad_corpus_input_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"title": "甲", "paragraphs": 5}]', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TUTOR_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "train", "--steps", "1", "--corpus", str(bad), "--lang", "de"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2  # the corpus's own words, framed in the learner's language
    assert done.stderr.startswith(
        f"Fehler: der Korpus lässt sich nicht verwenden: {bad}: no poems found (skipped 1 malformed entry; "
        f"first: {bad}: entry [0] (甲): field 'paragraphs' must be a list of strings or a string, found int)"
    )
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "home" / "runs").exists()


# --- layering ---------------------------------------------------------------------------------------------------


def test_corpus_module_does_not_import_torch_or_textual() -> None:
    code = "import sys, tutor.model.corpus_import; print(sorted({'torch', 'textual'} & set(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
