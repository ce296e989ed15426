"""Starters in the learner's language: `exercise start --lang de` and `reset --lang zh` write that
language's starter (never over the learner's file), the lab writes the app's, `check` finds a
variant whose code drifted from the English starter, and the German and Chinese texts of every
starter use the glossary's words. (That every variant gets the English starter's verdicts from the
real grader: tests/test_grading_exercises.py.)"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.grading_helpers import PROBE_CHECKS, PROBE_TOML, SOLUTION, exercise_course
from tests.ui_helpers import make_app
from tutor.cli import main
from tutor.content.loader import load_course
from tutor.content.starters import compare, variant_path
from tutor.settings import shipped_lessons_dir

COURSE = load_course(shipped_lessons_dir())
SPLIT = COURSE.exercise("split-heads")
VARIANTS = [
    (ex, lang) for ex in COURSE.exercises() for lang in ("de", "zh")
]  # every shipped exercise has both


def _starter(ex, lang: str) -> Path:
    return variant_path(ex.folder, ex.file_name, lang)


def test_start_writes_the_learners_language_and_reset_puts_another_back(tmp_path, capsys):
    home = tmp_path / "home"
    work = home / "workspace/split-heads/split_heads.py"
    assert main(["exercise", "start", "split-heads", "--lang", "de", "--home", str(home)]) == 0
    assert work.read_bytes() == _starter(SPLIT, "de").read_bytes()
    assert "hier kommt dein Code hin" in work.read_text(encoding="utf-8")

    # a file already there is the learner's, whatever language it was started in
    work.write_text("# meine Arbeit\n" + work.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["exercise", "start", "split-heads", "--lang", "zh", "--home", str(home)]) == 0
    assert work.read_text(encoding="utf-8").startswith("# meine Arbeit\n")

    capsys.readouterr()
    assert main(["exercise", "reset", "split-heads", "--lang", "zh", "--yes", "--home", str(home)]) == 0
    assert work.read_bytes() == _starter(SPLIT, "zh").read_bytes()
    (backup,) = work.parent.glob("split_heads.py.*.bak")
    assert backup.read_text(encoding="utf-8").startswith("# meine Arbeit\n")
    assert "已在" in capsys.readouterr().out  # said in Chinese


def _course_with_variants(root: Path, de: str, zh: str | None) -> Path:
    """A one-exercise course (stdlib only) whose task is in en, de and zh, with its starter variants."""
    starter = SOLUTION.replace("return", "raise NotImplementedError #")
    toml = PROBE_TOML.replace(
        'task = { en = "Write add, concat, scale and last." }',
        'task = { en = "Write add.", de = "Schreib add.", zh = "写出 add。" }',
    )
    files = {"exercise.toml": toml, "checks.py": PROBE_CHECKS, "solution.py": SOLUTION, "starter.py": starter,
             "starter.de.py": de} | ({"starter.zh.py": zh} if zh is not None else {})  # fmt: skip
    return exercise_course(root, files, shipped=False, order=1)


def test_check_reports_a_drifted_variant_at_its_line_and_a_missing_one(tmp_path, capsys):
    starter = SOLUTION.replace("return", "raise NotImplementedError #")
    de = '"""Schreib add."""\n' + starter.replace("def scale(xs, k):", "def scale(xs, k=2):")
    line = de.splitlines().index("def scale(xs, k=2):") + 1
    lessons = _course_with_variants(tmp_path / "lessons", de, None)
    assert main(["check", "--lessons", str(lessons)]) == 2
    out = capsys.readouterr().out
    english_line = starter.splitlines().index("def scale(xs, k):") + 1
    assert (
        f"exercises/probe/starter.de.py:{line}: starter: not the same code as starter.py line {english_line}"
        in out
    )
    assert (
        "exercises/probe/starter.zh.py: starter: file is missing: a learner in 'zh' gets the English" in out
    )


def test_docstrings_comments_and_raised_messages_may_differ(tmp_path):
    english = tmp_path / "starter.py"
    english.write_text(
        '"""Add."""\n\n\ndef add(a, b):  # two numbers\n    """a + b"""\n'
        '    raise NotImplementedError(f"add({a}, {b}): your code here")\n', encoding="utf-8",
    )  # fmt: skip
    variant = tmp_path / "starter.zh.py"
    variant.write_text(
        '"""加法。"""\n\n\ndef add(a, b):  # 两个数\n    """a + b"""\n'
        '    raise NotImplementedError(f"add({a}, {b})：在这里写你的代码")\n', encoding="utf-8",
    )  # fmt: skip
    assert compare(english, variant) == []
    # the raised error's type and the values it shows are code
    variant.write_text(
        variant.read_text(encoding="utf-8").replace("({a}, {b})", "({b}, {a})"), encoding="utf-8"
    )
    (problem,) = compare(english, variant)
    assert (problem.severity, problem.line) == ("error", 6)


def test_an_answer_file_variant_keeps_keys_order_and_values(tmp_path):
    english = tmp_path / "starter.toml"
    english.write_text('# How many?\nbest = 0\n\n# Why?\nwhy = ""\n', encoding="utf-8")
    variant = tmp_path / "starter.de.toml"
    variant.write_text('# Wie viele?\nbest = 0\n\n# Warum?\nwhy = ""\n', encoding="utf-8")
    assert compare(english, variant) == []
    for text, line, key in (
        ('# Wie viele?\nbest = 1\n\n# Warum?\nwhy = ""\n', 2, "best"),  # another value
        ('# Warum?\nwhy = ""\n\n# Wie viele?\nbest = 0\n', 2, "why"),  # another order
        ("# Wie viele?\nbest = 0\n", None, "why"),  # a key left out
    ):
        variant.write_text(text, encoding="utf-8")
        (problem,) = compare(english, variant)
        assert problem.line == line and problem.message.startswith(f"{key}: not as in starter.toml"), problem


def _prose(path: Path) -> list[str]:
    """What a starter says to the learner: its comments, and for Python its docstrings and the
    messages it raises."""
    text = path.read_text(encoding="utf-8")
    said = [tok.string.lstrip("#").strip() for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT]  # fmt: skip
    said = [
        s.split(" - ", 1)[1] if s.startswith("noqa") else s
        for s in said
        if not s.startswith("noqa") or " - " in s
    ]
    if path.suffix == ".py":
        tree = ast.parse(text)
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)]
        said += [ast.get_docstring(n) for n in nodes if ast.get_docstring(n)]
        said += [c.value for r in ast.walk(tree) if isinstance(r, ast.Raise) for c in ast.walk(r)
                 if isinstance(c, ast.Constant) and isinstance(c.value, str)]  # fmt: skip
    return [s for s in said if s]


@pytest.mark.parametrize("ex,lang", VARIANTS, ids=lambda v: v if isinstance(v, str) else v.id)
def test_each_starter_is_translated_in_the_glossarys_words(ex, lang):
    from tutor.content.glossary import read_glossary

    english, variant = _prose(_starter(ex, "en")), _prose(_starter(ex, lang))
    said = [s for s in variant if not s.startswith("python -m tutor")]  # a command is code
    assert said and not set(said) & set(english)  # nothing left in English
    assert lang != "zh" or all(re.search("[\u4e00-\u9fff]", s) for s in said), said
    glossary = read_glossary(shipped_lessons_dir(), [])
    assert glossary
    assert [(d.word, d.use) for text in variant for d in glossary.drift(lang, text)] == []


async def test_the_lab_writes_the_starter_in_the_apps_language(home):
    app = make_app(home, "zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_exercise("three-layers")
        await pilot.pause()
        ex = COURSE.exercise("three-layers")
        assert app.screen.file.read_bytes() == _starter(ex, "zh").read_bytes()
