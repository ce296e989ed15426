"""The shipped poem corpus, its deterministic split, and the importer for learners' corpora."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from models.corpus import (
    ALWAYS_TRAIN,
    CorpusError,
    Poem,
    corpus_text,
    import_corpus,
    load_poems,
    save_poems,
    split_poems,
)
from tutor.errors import TutorError

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "models" / "data" / "poems.json"

# Frequent characters that exist only in traditional writing (their simplified forms differ). Characters that
# simplified text also uses (乾, 著, 後 as in 皇后 is 后 …) are deliberately left out.
TRADITIONAL_ONLY = set(
    "風雲門來時東為無書長國馬鳥見開歸聲頭對過還遠邊問間樓愛萬與鄉紅綠葉燈夢淚憶隨飛寫雙將從應說誰聽"
    "塵陽陰雞離憐鶴鴻鶯劍顏壯盡幾獨臺舊歲處變漢滿憑煙裡這們會學義亂語讀經樂齊鐘雖發"
)
DENG = ("登鹳雀楼", "王之涣")
DENG_LINES = ("白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。")


@pytest.fixture(scope="module")
def poems() -> list[Poem]:
    return load_poems()


def _segments(poem: Poem) -> list[str]:
    return [s for line in poem.lines for s in re.split("[，。！？；]", line) if s]


# --- the shipped corpus -----------------------------------------------------------------------------------------


def test_shipped_corpus_has_at_least_300_poems_from_tang_and_song(poems: list[Poem]) -> None:
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


# --- split ------------------------------------------------------------------------------------------------------


def test_split_is_disjoint_covers_everything_and_val_is_non_empty(poems: list[Poem]) -> None:
    train, val = split_poems(poems)
    assert val and train
    keys = lambda ps: {(p.title, p.author) for p in ps}  # noqa: E731
    assert not keys(train) & keys(val)
    assert keys(train) | keys(val) == keys(poems)
    assert len(train) + len(val) == len(poems)
    assert 0.05 <= len(val) / len(poems) <= 0.15


def test_split_does_not_depend_on_input_order(poems: list[Poem]) -> None:
    shuffled = list(poems)
    random.Random(7).shuffle(shuffled)
    assert split_poems(shuffled) == split_poems(poems)


def test_split_is_the_same_in_processes_with_different_hash_seeds() -> None:
    code = (
        "from models.corpus import load_poems, split_poems\n"
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
        assert DENG in {(p.title, p.author) for p in train}
        assert DENG not in {(p.title, p.author) for p in val}
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
    assert a.text == "一二三四五，\n六七八九十。"
    assert corpus_text([a, b]) == "一二三四五，\n六七八九十。\n\n春眠不觉晓。"


# --- save / load ------------------------------------------------------------------------------------------------


def test_save_then_load_round_trips_and_leaves_no_temp_file(tmp_path: Path, poems: list[Poem]) -> None:
    target = tmp_path / "sub" / "mine.json"
    save_poems(poems[:5], target)
    save_poems(poems[:20], target)  # overwrite in place
    assert load_poems(target) == poems[:20]
    assert [p.name for p in target.parent.iterdir()] == ["mine.json"]


def test_malformed_own_format_names_file_and_entry(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    entry = {"title": "甲", "author": "某", "dynasty": "唐", "lines": "not a list"}
    bad.write_text(json.dumps({"format": 1, "poems": [entry]}, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.json: poems\[0\] \(甲\): field 'lines'") as info:
        load_poems(bad)
    assert isinstance(info.value, TutorError)
    bad.write_text(json.dumps({"format": 2, "poems": []}), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.json: field 'format' must be 1"):
        load_poems(bad)


# --- importer ---------------------------------------------------------------------------------------------------


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_import_open_layout_with_paragraphs_keeps_traditional_characters(tmp_path: Path) -> None:
    src = _write_json(
        tmp_path / "poet.tang.0.json",
        [
            {
                "author": "王之渙",
                "paragraphs": ["白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"],
                "title": "登鸛雀樓",
                "id": "x",
            }
        ],
    )
    assert import_corpus(src) == [
        Poem("登鸛雀樓", "王之渙", "", ("白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"))
    ]


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
        ],
    )
    got = import_corpus(src)
    assert [(p.title, p.author, p.dynasty) for p in got] == [
        ("春晓", "孟浩然", "唐"),
        ("江雪", "柳宗元", ""),
        ("如梦令", "李清照", ""),
    ]
    assert got[1].lines == ("千山鸟飞绝，万径人踪灭。", "孤舟蓑笠翁，独钓寒江雪。")


def test_import_directory_of_json_files_in_name_order(tmp_path: Path) -> None:
    _write_json(tmp_path / "b.json", [{"title": "乙", "author": "某", "paragraphs": ["秋月。"]}])
    _write_json(tmp_path / "a.json", [{"title": "甲", "author": "某", "paragraphs": ["春风。"]}])
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    assert [p.title for p in import_corpus(tmp_path)] == ["甲", "乙"]


def test_import_accepts_our_own_format(tmp_path: Path, poems: list[Poem]) -> None:
    target = tmp_path / "ours.json"
    save_poems(poems[:3], target)
    assert import_corpus(target) == poems[:3]


def test_import_plain_text_with_titles_and_untitled_poems(tmp_path: Path) -> None:
    src = tmp_path / "mine.txt"
    src.write_text(
        "静夜思\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n \n"
        "千山鸟飞绝，万径人踪灭。\n孤舟蓑笠翁，独钓寒江雪。\r\n\r\n"
        "春眠不觉晓\n处处闻啼鸟\n",
        encoding="utf-8",
    )
    got = import_corpus(src)
    assert got[0] == Poem("静夜思", "", "", ("床前明月光，疑是地上霜。", "举头望明月，低头思故乡。"))
    assert got[1] == Poem("", "", "", ("千山鸟飞绝，万径人踪灭。", "孤舟蓑笠翁，独钓寒江雪。"))
    # A short unpunctuated first line is taken as the title: that is the documented rule.
    assert got[2] == Poem("春眠不觉晓", "", "", ("处处闻啼鸟",))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "latin1.txt",
            "静夜思".encode("gbk"),
            r"latin1\.txt: not UTF-8 text \(invalid byte at offset 0, line 1\)",
        ),
        ("empty.txt", b"  \n\n", r"empty\.txt: file is empty"),
        ("broken.json", b'[\n{"title": "x",\n', r"broken\.json: invalid JSON at line 3"),
        (
            "notext.json",
            '[{"title": "甲", "author": "某"}]'.encode(),
            r"notext\.json: entry \[0\] \(甲\): missing",
        ),
        (
            "noauthor.json",
            '[{"title": "甲", "lines": ["春。"]}]'.encode(),
            r"entry \[0\] \(甲\): missing .*'author'",
        ),
        (
            "notitle.json",
            '[{"author": "某", "lines": ["春。"]}]'.encode(),
            r"notitle\.json: entry \[0\]: .*'title'",
        ),
        ("scalar.json", b"42", r"scalar\.json: expected a JSON list"),
        ("blank.json", '[{"title": "甲", "author": "某", "lines": [" "]}]'.encode(), r"poem has no text"),
    ],
)
def test_bad_corpus_files_raise_corpus_error_naming_file_and_position(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        import_corpus(path)


def test_missing_file_is_a_corpus_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"nowhere\.json: file not found"):
        import_corpus(tmp_path / "nowhere.json")
    with pytest.raises(CorpusError, match=r"nowhere\.json: file not found"):
        load_poems(tmp_path / "nowhere.json")


def test_corpus_module_does_not_import_torch_or_textual() -> None:
    code = "import sys, models.corpus; print(sorted({'torch', 'textual'} & set(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
