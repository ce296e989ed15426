"""Regenerate the broken-lesson corpus: each case = good/ plus one mutation, and an expect.toml.

Run `python tests/content_cases/make_cases.py` after changing good/; the output is committed.
"""

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent
GOOD = ROOT / "good" / "01-basics"
L = "01-basics"


def case(name, mutate, problems, exit=2, extra=None):
    d = ROOT / name
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(GOOD, d / L)
    mutate(d / L)
    if extra:
        extra(d)
    lines = [
        f"# {name}: expected result of `python -m tutor check --lessons tests/content_cases/{name}`",
        f"exit = {exit}",
        "",
    ]
    for p in problems:
        lines.append("[[problem]]")
        for k, v in p.items():
            lines.append(f"{k} = {json.dumps(v, ensure_ascii=False)}")  # a JSON string is a TOML string
        lines.append("")
    (d / "expect.toml").write_text("\n".join(lines), encoding="utf-8")


def edit(file, old, new, count=1):
    def f(lesson):
        p = lesson / file
        t = p.read_text(encoding="utf-8")
        assert old in t, (file, old)
        p.write_text(t.replace(old, new, count), encoding="utf-8")

    return f


def both(*fs):
    def f(lesson):
        for fn in fs:
            fn(lesson)

    return f


E = "error"
case(
    "bad-toml",
    edit("lesson.toml", "order = 1", "order = = 1"),
    [dict(severity=E, file=f"{L}/lesson.toml", line=2, message="invalid TOML")],
)
case(
    "unknown-key",
    edit("lesson.toml", "title = ", "titel = "),
    [
        dict(
            severity=E,
            file=f"{L}/lesson.toml",
            line=4,
            field="titel",
            message="unknown key 'titel' (did you mean 'title'?)",
        ),
        dict(severity=E, file=f"{L}/lesson.toml", field="title", message="required key is missing"),
    ],
)
case(
    "missing-required",
    edit("quiz.toml", 'explanation = { en = "B, h, T, d_k."', 'explaination = { en = "B, h, T, d_k."'),
    [
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            field="question[heads-shape].explanation",
            message="required key is missing",
        ),
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            line=24,
            field="question[heads-shape].explaination",
            message="unknown key 'explaination' (did you mean 'explanation'?)",
        ),
    ],
)
case(
    "wrong-answer-type",
    edit("quiz.toml", "answer = 4096", 'answer = "four thousand"'),
    [
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            line=30,
            field="question[params].answer",
            message="valid number",
        )
    ],
)
case(
    "wrong-question-type",
    edit("quiz.toml", 'type = "open"', 'type = "essay"'),
    [dict(severity=E, file=f"{L}/quiz.toml", field="question[why-order]", message="'essay'")],
)
case(
    "two-correct-choices",
    edit("quiz.toml", 'why = { en = "Too much."', 'correct = true\nwhy = { en = "Too much."'),
    [
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            field="question[scale]",
            message="exactly one correct choice, has 2",
        )
    ],
)
case(
    "missing-english-file",
    lambda lesson: (lesson / "en.md").unlink(),
    [dict(severity=E, file=f"{L}/en.md", message="file is missing")],
)
case(
    "missing-translation-file",
    lambda lesson: (lesson / "zh.md").unlink(),
    [dict(severity="warning", file=f"{L}/zh.md", message="no zh translation")],
    exit=0,
)
case(
    "missing-translation-text",
    edit("quiz.toml", ', zh = "太多了。"', ""),
    [
        dict(
            severity="warning",
            file=f"{L}/quiz.toml",
            field="question[scale]",
            message="no zh text for choices[b].why",
        )
    ],
    exit=0,
)
case(
    "empty-file",
    lambda lesson: (lesson / "en.md").write_bytes(b""),
    [dict(severity=E, file=f"{L}/en.md", message="file is empty")],
)
case(
    "empty-lesson-toml",
    lambda lesson: (lesson / "lesson.toml").write_bytes(b"\n\n"),
    [dict(severity=E, file=f"{L}/lesson.toml", message="file is empty")],
)
case(
    "non-utf8",
    lambda lesson: (lesson / "de.md").write_bytes(
        (lesson / "de.md")
        .read_text(encoding="utf-8")
        .replace("Jede Query", "Gr\udcfc\udcdfe")
        .encode("utf-8", "surrogateescape")
    ),
    [dict(severity=E, file=f"{L}/de.md", line=5, message="not UTF-8: byte 0xfc")],
)
case(
    "duplicate-section-ids",
    edit("en.md", "{#order}", "{#scores}"),
    [
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=15,
            field="section[scores]",
            message="duplicate section id (first at line 3)",
        )
    ],
)
case(
    "duplicate-question-ids",
    edit("quiz.toml", 'id = "params"', 'id = "scale"'),
    [
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            line=27,
            field="question[scale]",
            message="duplicate question id",
        )
    ],
)
case(
    "section-ids-differ",
    edit("de.md", "{#order}", "{#reihenfolge}"),
    [
        dict(
            severity=E, file=f"{L}/de.md", field="section", message="missing order; not in en.md: reihenfolge"
        )
    ],
)
case(
    "experiment-refs-differ",
    edit("zh.md", "seq = 5", "seq = 6"),
    [
        dict(
            severity=E,
            file=f"{L}/zh.md",
            line=15,
            field="section[order]",
            message="experiments differ from en.md",
        )
    ],
)
case(
    "unknown-experiment",
    both(*(edit(f, "```experiment shuffle", "```experiment shufle") for f in ("en.md", "de.md", "zh.md"))),
    [
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=19,
            field="section[order].experiment[shufle]",
            message="unknown experiment 'shufle' (did you mean 'shuffle'?)",
        )
    ],
)
case(
    "bad-experiment-params",
    both(*(edit(f, "seq = 5", 'seq = "five"\nspeed = 2') for f in ("en.md", "de.md", "zh.md"))),
    [
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=19,
            field="section[order].experiment[shuffle]",
            message="parameter seq",
        ),
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=19,
            field="section[order].experiment[shuffle]",
            message="parameter speed: unknown parameter",
        ),
    ],
)
case(
    "bad-experiment-toml",
    edit("en.md", "seq = 5", "seq = [5"),
    [
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=19,
            field="section[order].experiment[shuffle]",
            message="parameters: invalid TOML",
        )
    ],
)
case(
    "experiment-without-name",
    edit("en.md", "```experiment shuffle", "```experiment"),
    [
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=19,
            field="section[order]",
            message="experiment fence needs a name",
        )
    ],
)
case(
    "heading-without-id",
    edit("de.md", "## Reihenfolge {#order}", "## Reihenfolge"),
    [dict(severity=E, file=f"{L}/de.md", line=15, field="section", message="section heading has no id")],
)
case(
    "text-before-first-section",
    edit("en.md", "# Basics of attention\n", "# Basics of attention\n\nAn introduction nobody will see.\n"),
    [dict(severity=E, file=f"{L}/en.md", line=3, message="text before the first")],
)
case(
    "unclosed-fence",
    edit("zh.md", "然后比较各行。", "```python\nx = 1"),
    [dict(severity=E, file=f"{L}/zh.md", line=23, field="section[order]", message="never closed")],
)
case(
    "unknown-latex-command",
    edit("en.md", r"\text{softmax}", r"\sofmax"),
    [
        dict(
            severity=E,
            file=f"{L}/en.md",
            line=5,
            field="section[scores]",
            message="unknown LaTeX command \\sofmax",
        )
    ],
)
case(
    "unclosed-math",
    edit("de.md", "Ein Dollarzeichen bleibt eines: \\$5", "Ein Dollarzeichen bleibt eines: $5"),
    [
        dict(
            severity=E,
            file=f"{L}/de.md",
            line=6,
            field="section[scores]",
            message="unclosed $ math (write \\$ for a dollar sign)",
        )
    ],
)
case(
    "latex-error-in-toml",
    edit(
        "quiz.toml", r'explanation = { en = "By $\\sqrt{d_k}$."', r'explanation = { en = "By $\\sqrt{d_k$."'
    ),
    [
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            line=6,
            field="question[scale].explanation.en",
            message="cannot parse",
        )
    ],
)
case(
    "unknown-prerequisite",
    edit("lesson.toml", "prerequisites = []", 'prerequisites = ["multihead"]'),
    [
        dict(
            severity=E,
            file=f"{L}/lesson.toml",
            line=3,
            field="prerequisites",
            message="no lesson with id 'multihead'",
        )
    ],
)
case(
    "unknown-section-ref",
    edit("quiz.toml", 'section = "order"', 'section = "ordering"'),
    [
        dict(
            severity=E,
            file=f"{L}/quiz.toml",
            line=37,
            field="question[why-order].section",
            message="no section 'ordering'",
        )
    ],
)
case(
    "exercise-folder-mismatch",
    edit("exercises/first-steps/exercise.toml", 'id = "first-steps"', 'id = "first-step"'),
    [
        dict(
            severity=E,
            file=f"{L}/exercises/first-steps/exercise.toml",
            line=1,
            field="id",
            message="must match its folder name",
        )
    ],
)
case(
    "exercise-folder-key",
    edit(
        "exercises/first-steps/exercise.toml",
        'file_name = "scores.py"',
        'file_name = "scores.py"\nfolder = "elsewhere"',
    ),
    [
        dict(
            severity=E,
            file=f"{L}/exercises/first-steps/exercise.toml",
            line=5,
            field="folder",
            message="unknown key 'folder'",
        )
    ],
)
case(
    "missing-checks",
    edit("exercises/first-steps/exercise.toml", "[[checks]]", "[[check]]"),
    [
        dict(
            severity=E,
            file=f"{L}/exercises/first-steps/exercise.toml",
            field="checks",
            message="required key is missing",
        ),
        dict(
            severity=E,
            file=f"{L}/exercises/first-steps/exercise.toml",
            line=7,
            field="check",
            message="unknown key 'check' (did you mean 'checks'?)",
        ),
    ],
)


def second_lesson(same_id_as_first, exercise=False):
    def f(d):
        shutil.copytree(d / L, d / "02-more")
        if not same_id_as_first:
            p = d / "02-more" / "lesson.toml"
            p.write_text(
                p.read_text(encoding="utf-8")
                .replace('id = "basics"', 'id = "more"')
                .replace("order = 1", "order = 2"),
                encoding="utf-8",
            )
        if not exercise and (d / "02-more" / "exercises").exists():
            shutil.rmtree(d / "02-more" / "exercises")

    return f


case(
    "duplicate-lesson-ids",
    lambda lesson: shutil.rmtree(lesson / "exercises"),
    [
        dict(
            severity=E,
            file="02-more/lesson.toml",
            field="id",
            message="duplicate lesson id (also in 01-basics/)",
        )
    ],
    extra=second_lesson(True),
)
case(
    "duplicate-exercise-ids",
    lambda lesson: None,
    [
        dict(
            severity=E,
            file="02-more/exercises/first-steps/exercise.toml",
            field="id",
            message="duplicate exercise id (also in 01-basics/)",
        )
    ],
    extra=second_lesson(False, exercise=True),
)
