"""One word per term and language: the glossary (tutor/lessons/glossary.toml) against every text the course
writes (lessons, quizzes, exercise texts, hints and messages) and the app's catalogue (tutor/texts).
Pure file reading; `check` is run in-process on a small course."""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Iterator
from functools import cache, partial
from pathlib import Path

import pytest
from conftest import ROOT

from tutor.cli import main
from tutor.content.glossary import (
    GLOSSARY,
    CourseText,
    Glossary,
    lesson_texts,
    problems_in,
    prose,
    read_glossary,
)
from tutor.i18n import LANGS
from tutor.settings import shipped_lessons_dir

LESSONS = shipped_lessons_dir()
CATALOGUE = ROOT / "tutor" / "texts"

_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")  # a [table] or [[array]] header


def catalogue_texts(file: Path, lang: str) -> Iterator[CourseText]:
    """Every text of a catalogue file (tutor/texts/LANG.toml): all of it in one language."""
    lines = file.read_text(encoding="utf-8").splitlines()
    tables = {m.group(1): n for n, line in enumerate(lines) if (m := _TABLE.match(line))}

    def place(loc: tuple) -> int | None:
        """The line of `a.b.c = …`: the key `c` under the header `[a.b]`, else `b.c` under `[a]`, …"""
        for cut in range(len(loc) - 1, -1, -1):
            start = tables.get(".".join(loc[:cut]), -1) if cut else -1
            if cut and start < 0:
                continue
            key = re.compile(r"^\s*" + r"\s*\.\s*".join(f'"?{re.escape(k)}"?' for k in loc[cut:]) + r"\s*=")
            for n in range(start + 1, len(lines)):
                if cut and n > start + 1 and _TABLE.match(lines[n]):
                    break
                if key.match(lines[n]):
                    return n + 1
        return None

    def walk(node: dict, loc: tuple) -> Iterator[CourseText]:
        for key, value in node.items():
            if isinstance(value, dict):
                yield from walk(value, loc + (key,))
            elif isinstance(value, str):
                yield CourseText(lang, file, value, partial(place, loc + (key,)))

    yield from walk(tomllib.loads(file.read_text(encoding="utf-8")), ())


@cache
def shipped() -> Glossary:
    problems: list = []
    glossary = read_glossary(LESSONS, problems)
    assert glossary is not None and problems == [], problems
    return glossary


@cache
def all_texts() -> tuple:
    texts = list(lesson_texts(LESSONS))
    for lang in LANGS:
        texts += catalogue_texts(CATALOGUE / f"{lang}.toml", lang)
    return tuple(texts)


def test_every_text_of_the_course_and_the_app_uses_only_the_fixed_terms():
    texts = all_texts()
    kinds = {(t.lang, t.file.name) for t in texts}
    assert {("de", "de.md"), ("zh", "quiz.toml"), ("zh", "exercise.toml"), ("de", "de.toml")} <= kinds
    assert len(texts) > 2000
    problems = problems_in(shipped(), iter(texts))
    assert problems == [], "\n".join(p.format(ROOT) for p in problems)


def test_every_term_names_its_word_in_every_language_and_that_word_is_written():
    glossary = shipped()
    written = {lang: "\n".join(prose(t.text) for t in all_texts() if t.lang == lang) for lang in LANGS}
    unused = []
    for lang in LANGS:  # a refused word points to one term
        refused = [w for term in glossary.terms.values() for w in term.usage(lang).refuse]
        assert len(refused) == len(set(refused)), lang
    for term_id, term in glossary.terms.items():
        for lang in LANGS:
            usage = term.usage(lang)
            assert usage.use not in usage.refuse, (term_id, lang)
            if not all(part in written[lang] for part in usage.use.split("…")):
                unused.append(f"{term_id}.{lang}: {usage.use!r}")
    assert len(glossary.terms) >= 30 and unused == []


def test_the_terms_the_issue_names_are_fixed():
    terms = shipped().terms
    fixed = {
        ("loss", "de"): ("Verlust", "Loss"),
        ("fine-tuning", "de"): ("Nachtraining", "Fine-Tuning"),
        ("continued-pretraining", "de"): ("fortgesetztes Vortraining", "Weiter-Pretraining"),
        ("key", "de"): ("Key", "Schlüssel"),
        ("heatmap", "de"): ("Heatmap", "Farbkarten"),
        ("batch-size", "de"): ("Batchgröße", "Stapelgröße"),
        ("half-split-form", "de"): ("halbierte Form", "Halbierungs-Form"),
        ("softmax", "de"): ("Softmax", "Softmaxe"),
        ("attention", "de"): ("Attention", "Attentions"),
        ("heatmap", "zh"): ("热力图", "热图"),
        ("key", "zh"): ("key", "键"),
        ("rope-unscaled", "zh"): ("不缩放的 RoPE", "原始 RoPE"),
        ("character", "zh"): ("字", "字符"),
        ("verse", "zh"): ("句", "半句"),
        ("first-verse", "zh"): ("出句", "前半句"),
        ("second-verse", "zh"): ("对句", "后半句"),
        ("quotes", "zh"): ("「…」", "“"),
    }
    for (term_id, lang), (use, refused) in fixed.items():
        usage = terms[term_id].usage(lang)
        assert (usage.use, refused in usage.refuse) == (use, True), (term_id, lang)


@pytest.mark.parametrize("lang", LANGS)
def test_each_refused_word_is_found_in_prose_and_left_alone_in_code(lang: str):
    glossary = shipped()
    for term_id, term in glossary.terms.items():
        for word in term.usage(lang).refuse:
            found = glossary.drift(lang, f"Text vor {word} und danach.\n")
            assert [(d.term, d.offset) for d in found] == [(term_id, 9)], (term_id, word, found)
            assert glossary.drift(lang, f"`{word}` und ```\n{word}\n```") == [], (term_id, word)


def test_a_refused_word_is_a_whole_word_and_an_allowed_phrase_is_not_drift():
    glossary = shipped()
    assert [d.word for d in glossary.drift("de", "der Validierungs-Loss, das Glossar, Lossy")] == [
        "Validierungs-Loss"
    ]
    assert [d.word for d in glossary.drift("de", "den\nLoss bei 1×")] == ["Loss"]
    assert glossary.drift("de", "eine Tabelle mit {n} Schlüssel") == []
    assert [d.word for d in glossary.drift("de", "die neuen Schlüssel")] == ["Schlüssel"]
    assert glossary.drift("zh", "关键数值 · 按键 · 字符串 {value}") == []
    assert [d.term for d in glossary.drift("zh", "在一联的前半句里，每个半句")] == ["first-verse", "verse"]
    assert glossary.drift("zh", "热力图") == [] and len(glossary.drift("zh", "热图")) == 1
    assert glossary.drift("zh", '用 `pos="none"` 构建，--batch 选项，{batch} 个窗口') == []


def _course_with_glossary(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    shutil.copytree(ROOT / "tests" / "content_cases" / "good", course)
    shutil.copy(LESSONS / GLOSSARY, course / GLOSSARY)
    return course


def _check(course: Path, capsys, monkeypatch) -> tuple[int, list[str]]:
    monkeypatch.chdir(course)
    code = main(["check", "--lessons", str(course)])
    return code, capsys.readouterr().out.splitlines()


def test_check_reports_a_reintroduced_word_at_its_file_and_line(tmp_path: Path, capsys, monkeypatch):
    course = _course_with_glossary(tmp_path)
    code, out = _check(course, capsys, monkeypatch)
    assert code == 0 and not [x for x in out if "term[" in x], out

    de = course / "01-basics" / "de.md"
    lines = de.read_text(encoding="utf-8").splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("Mischt man"))
    lines[at] += " Der Loss sinkt, die Farbkarten zeigen es; `Loss` im Code ist Code."
    de.write_text("\n".join(lines) + "\n", encoding="utf-8")
    quiz = course / "01-basics" / "quiz.toml"
    text = quiz.read_text(encoding="utf-8")
    zh_at = next(i for i, x in enumerate(text.splitlines()) if re.search(r"\bzh\s*=", x))
    quiz.write_text(re.sub(r'(\bzh\s*=\s*")', r"\1每个半句的热图：", text, count=1), encoding="utf-8")

    code, out = _check(course, capsys, monkeypatch)
    terms = sorted(x.strip() for x in out if "term[" in x)
    assert code == 2, out
    assert terms == sorted(
        [
            f"01-basics/de.md:{at + 1}: term[loss]: de: 'Loss' is not the course's word here; write 'Verlust' (glossary.toml)",
            f"01-basics/de.md:{at + 1}: term[heatmap]: de: 'Farbkarten' is not the course's word here; write 'Heatmap' (glossary.toml)",
            f"01-basics/quiz.toml:{zh_at + 1}: term[verse]: zh: '半句' is not the course's word here; write '句' (glossary.toml)",
            f"01-basics/quiz.toml:{zh_at + 1}: term[heatmap]: zh: '热图' is not the course's word here; write '热力图' (glossary.toml)",
        ]
    ), out


def test_check_reports_a_glossary_term_without_a_language(tmp_path: Path, capsys, monkeypatch):
    course = _course_with_glossary(tmp_path)
    glossary = course / GLOSSARY
    text = glossary.read_text(encoding="utf-8")
    glossary.write_text(text.replace('zh = { use = "损失", refuse = ["loss"] }\n', ""), encoding="utf-8")
    line = text.splitlines().index("[loss]") + 1
    code, out = _check(course, capsys, monkeypatch)
    assert code == 2 and [x for x in out if x.strip().startswith(f"glossary.toml:{line}: loss.zh: ")], out
