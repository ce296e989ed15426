"""Starters and reference solutions in the learner's language: `exercise start --lang de` and
`reset --lang zh` write that language's starter (never over the learner's file), the lab writes the
app's; `exercise solution --lang zh` and the lab show that language's reference, and F5 shows it in
the next; `check` finds a starter or solution variant whose code drifted from the English file, or
one that is missing; and the German and Chinese texts of every starter and solution use the
glossary's words. (That every starter variant gets the English starter's verdicts and every solution
variant full marks from the real grader: tests/test_grading_exercises.py.)"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.grading_helpers import PROBE_CHECKS, PROBE_TOML, SOLUTION, exercise_course
from tests.ui_helpers import answer_predictions, make_app, plain, settle
from tutor.cli import main
from tutor.content.loader import load_course
from tutor.content.variants import ROLES, compare, english_file, variant_path
from tutor.progress.store import Store
from tutor.settings import shipped_lessons_dir

COURSE = load_course(shipped_lessons_dir())
SPLIT = COURSE.exercise("split-heads")
VARIANTS = [
    (ex, role, lang) for ex in COURSE.exercises() for role in ROLES for lang in ("de", "zh")
]  # every shipped exercise has both, of its starter and its solution


def _file(ex, lang: str, role: str = "starter") -> Path:
    return variant_path(english_file(ex, role), lang)


def _starter(ex, lang: str) -> Path:
    return _file(ex, lang, "starter")


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


STARTER = SOLUTION.replace("return", "raise NotImplementedError #")


def _course_with_variants(root: Path, role: str, de: str, zh: str | None) -> Path:
    """A one-exercise course (stdlib only) whose task is in en, de and zh, with variants of its
    starter or its solution (`role`)."""
    toml = PROBE_TOML.replace(
        'task = { en = "Write add, concat, scale and last." }',
        'task = { en = "Write add.", de = "Schreib add.", zh = "写出 add。" }',
    )
    files = {
        "exercise.toml": toml,
        "checks.py": PROBE_CHECKS,
        "solution.py": SOLUTION,
        "starter.py": STARTER,
        f"{role}.de.py": de,
    } | ({f"{role}.zh.py": zh} if zh is not None else {})
    return exercise_course(root, files, shipped=False, order=1)


@pytest.mark.parametrize("role", ROLES)
def test_check_reports_a_drifted_variant_at_its_line_and_a_missing_one(tmp_path, capsys, role):
    english = {"starter": STARTER, "solution": SOLUTION}[role]
    de = '"""Schreib add."""\n' + english.replace("def scale(xs, k):", "def scale(xs, k=2):")
    line = de.splitlines().index("def scale(xs, k=2):") + 1
    lessons = _course_with_variants(tmp_path / "lessons", role, de, None)
    assert main(["check", "--lessons", str(lessons)]) == 2
    out = capsys.readouterr().out
    english_line = english.splitlines().index("def scale(xs, k):") + 1
    assert (
        f"exercises/probe/{role}.de.py:{line}: {role}: not the same code as {role}.py line {english_line}"
        in out
    )
    assert (
        f"exercises/probe/{role}.zh.py: {role}: file is missing: a learner in 'zh' gets the English {role}"
        in out
    )


def test_docstrings_comments_and_raised_messages_may_differ(tmp_path):
    english = tmp_path / "starter.py"
    english.write_text(
        '"""Add."""\n\n\ndef add(a, b):  # two numbers\n    """a + b"""\n'
        '    raise NotImplementedError(f"add({a}, {b}): your code here")\n',
        encoding="utf-8",
    )
    variant = tmp_path / "starter.zh.py"
    variant.write_text(
        '"""加法。"""\n\n\ndef add(a, b):  # 两个数\n    """a + b"""\n'
        '    raise NotImplementedError(f"add({a}, {b})：在这里写你的代码")\n',
        encoding="utf-8",
    )
    assert compare(english, variant) == []
    # the raised error's type and the values it shows are code
    variant.write_text(
        variant.read_text(encoding="utf-8").replace("({a}, {b})", "({b}, {a})"), encoding="utf-8"
    )
    (problem,) = compare(english, variant)
    assert (problem.severity, problem.line) == ("error", 6)
    # a translated message may begin or end with a value where the English one has words
    english.write_text('def f(C, n):\n    raise ValueError(f"cannot split {C} channels into {n} heads")\n')
    variant.write_text('def f(C, n):\n    raise ValueError(f"{C} 个通道无法平均分给 {n} 个头")\n')
    assert compare(english, variant) == []


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


def test_an_explanation_variant_keeps_its_code_and_figures(tmp_path):
    """A runs exercise's solution.md: its code in the same order and the same figures, in any order
    (a translation may order its sentences otherwise); the prose is free."""
    english = tmp_path / "solution.md"
    english.write_text("# Runs\n\n- Six runs of 1000 steps, `same_params = true`.\n- About 23% read once.\n")
    variant = tmp_path / "solution.zh.md"
    variant.write_text("# 训练\n\n- 六次训练，每次 1000 步，`same_params = true`。\n- 只读一遍，约 23%。\n")
    assert compare(english, variant, "solution") == []
    for text, line, start in (
        (
            "# 训练\n\n- 六次训练，每次 1000 步，`same_params = false`。\n- 约 23%。\n",
            3,
            "`same_params = false`",
        ),
        ("# 训练\n\n- 六次训练，每次 1000 步。\n- 约 23%。\n", None, "`same_params = true`"),  # code left out
        ("# 训练\n\n- 六次训练，每次 1000 步，`same_params = true`。\n- 约 32%。\n", 4, "32: a figure"),
        ("# 训练\n\n- 6 次训练，每次 1000 步，`same_params = true`。\n- 约 23%。\n", 3, "6: a figure"),
        (
            "# 训练\n\n- 每次 1000 步，`same_params = true`。\n- 读一遍。\n",
            None,
            "figures of solution.md missing: 23",
        ),
    ):
        variant.write_text(text)
        (problem,) = compare(english, variant, "solution")
        assert (problem.field, problem.line) == ("solution", line) and problem.message.startswith(start), (
            problem
        )


def _prose(path: Path) -> list[str]:
    """What a starter or a solution says to the learner: its comments, and for Python its docstrings
    and the messages it raises (each with a word in it); for Markdown its headings and list items."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return [block.strip() for block in re.split(r"\n(?=#|- )", text) if block.strip()]
    said = [
        tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    said = [
        s.split(" - ", 1)[1] if s.startswith("noqa") else s
        for s in said
        if not s.startswith("noqa") or " - " in s
    ]
    if path.suffix == ".py":
        tree = ast.parse(text)
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)]
        said += [ast.get_docstring(n) for n in nodes if ast.get_docstring(n)]
        said += [
            c.value
            for r in ast.walk(tree)
            if isinstance(r, ast.Raise)
            for c in ast.walk(r)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
    return [s for s in said if re.search(r"[^\W\d_]{2,}", s)]  # not `C = ` of an f-string


@pytest.mark.parametrize("ex,role,lang", VARIANTS, ids=lambda v: v if isinstance(v, str) else v.id)
def test_each_starter_and_solution_is_translated_in_the_glossarys_words(ex, role, lang):
    from tutor.content.glossary import read_glossary

    english, variant = _prose(_file(ex, "en", role)), _prose(_file(ex, lang, role))
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


def _pass(home: Path, exercise: str) -> None:
    """A recorded pass: the reference may be shown."""
    with Store(home) as store:
        store.record_submission(exercise, sha256="0" * 64, status="pass", score=3, max_score=3)


def test_the_solution_command_shows_the_learners_language(home, capsys):
    _pass(home, "split-heads")
    for lang in ("zh", "en"):
        assert main(["exercise", "solution", "split-heads", "--lang", lang, "--home", str(home)]) == 0
        assert capsys.readouterr().out == _file(SPLIT, lang, "solution").read_text(encoding="utf-8")
    assert "个通道无法平均分给" in _file(SPLIT, "zh", "solution").read_text(encoding="utf-8")


def _squeezed(text: str) -> str:
    """Text as drawn, without the wrapping: no spaces, line breaks or continuation marks."""
    return re.sub(r"[\s↪]+", "", text)


async def test_the_lab_shows_the_solution_in_the_apps_language_and_again_after_f5(home):
    _pass(home, "split-heads")
    app = make_app(home, "de")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_exercise("split-heads")
        await pilot.pause()
        screen = app.screen
        await answer_predictions(pilot, screen)  # the predictions first, or `s` is typed into the answer
        await pilot.press("s")
        await settle(app, 0.3)
        solution = screen.query_one("#ex-solution")
        box = screen.query_one("#ex-box")
        assert solution.display and box.region.y <= solution.region.y < box.region.bottom
        shown = {}
        for lang in ("de", "zh"):
            if lang == "zh":
                scroll = box.scroll_y
                await pilot.press("f5")
                await settle(app, 0.3)
                assert app.lang == "zh" and box.scroll_y == scroll  # redrawn where it was
            shown[lang] = _squeezed(plain(solution.content, solution.content_region.width))
        for lang, other in (("de", "zh"), ("zh", "de")):
            comment = next(
                line.strip("# ")
                for line in _file(SPLIT, lang, "solution").read_text(encoding="utf-8").splitlines()
                if line.lstrip().startswith("# ")
            )
            assert _squeezed(comment) in shown[lang] and _squeezed(comment) not in shown[other]
