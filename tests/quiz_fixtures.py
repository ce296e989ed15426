"""A small lesson with one question of every type, as files (for the CLI) and as models (for the engine)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tutor.content.schema import Lesson

LESSON_TOML = """\
id = "tiny-heads"
order = 1
title = { en = "Tiny heads", de = "Kleine Köpfe", zh = "小多头" }
summary = { en = "A test lesson.", de = "Eine Testlektion.", zh = "测试课。" }
"""

EN_MD = """\
# Tiny heads

## Splitting heads {#split}

The model dimension is cut into equal slices, one per head.

## Counting parameters {#count}

Four square matrices plus their biases: 4·d² + 4·d.
"""

QUIZ_TOML = """\
[[question]]
id = "same-params"
type = "single"
section = "count"
prompt.en = "Going from 1 head to 8 heads at d_model = 512, the parameter count..."
explanation.en = "Each head works on a slice; the four matrices stay d×d."

[[question.choices]]
id = "same"
correct = true
text.en = "stays the same"

[[question.choices]]
id = "times8"
text.en = "grows 8×"
why.en = "Heads split d_model; they do not add new full-size matrices."

[[question]]
id = "param-count"
type = "number"
section = "count"
prompt.en = "How many parameters has the attention layer at d = 256 (weights and biases)?"
explanation.en = "4·256² + 4·256 = 263,168."
hint.en = "Four d×d weight matrices and four bias vectors."
answer = 263168
rel_tolerance = 0.02
unit.en = "parameters"

[[question]]
id = "head-shape"
type = "exact"
kind = "shape"
section = "split"
prompt.en = "Shape of q after view and transpose, for B=1, T=5, 4 heads of 8?"
explanation.en = "(B, n_head, T, head_dim)."
answer = "(1, 4, 5, 8)"

[[question]]
id = "which-split"
type = "multiple"
section = "split"
prompt.en = "Which tensors are split into heads?"
explanation.en = "Queries, keys and values are all split; the output projection mixes heads."

[[question.choices]]
id = "q"
correct = true
text.en = "queries"

[[question.choices]]
id = "k"
correct = true
text.en = "keys"

[[question.choices]]
id = "proj"
text.en = "the output projection"
why.en = "The output projection works on the concatenated heads."

[[question]]
id = "name"
type = "exact"
section = "split"
prompt.en = "What is the mechanism called?"
explanation.en = "Multi-head attention."
answer = "multi-head attention"
also = ["MHA"]

[[question]]
id = "why-heads"
type = "open"
section = "split"
prompt.en = "Why might several small heads beat one big head?"
explanation.en = "Each head can attend to a different pattern."
model_answer.en = "Different heads can specialise on different relations at the same cost."
"""

# An answer sheet for QUIZ_TOML: (question id, right answer, wrong answer).
ANSWERS = [
    ("same-params", "1", "2"),
    ("param-count", "263,168", "65,536"),
    ("head-shape", "[1, 4, 5, 8]", "(1, 5, 4, 8)"),
    ("which-split", "1, 2", "1, 3"),
    ("name", "Multi-Head Attention", "self attention"),
    ("why-heads", "good", "again"),
]


def write_lesson(root: Path, folder: str = "01-tiny-heads") -> Path:
    """A lesson folder in the writers' format under `root`; returns `root` (the lessons dir)."""
    d = root / folder
    d.mkdir(parents=True)
    (d / "lesson.toml").write_text(LESSON_TOML, encoding="utf-8")
    (d / "en.md").write_text(EN_MD, encoding="utf-8")
    (d / "quiz.toml").write_text(QUIZ_TOML, encoding="utf-8")
    return root


def tiny_lesson(lesson_id: str = "tiny-heads", order: int = 1, predict: list[dict] | None = None) -> Lesson:
    """The same lesson as a model, without the loader."""
    data = tomllib.loads(LESSON_TOML) | {"id": lesson_id, "order": order}
    data["sections"] = [
        {"id": "split", "title": {"en": "Splitting heads"}, "body": {"en": "..."}},
        {"id": "count", "title": {"en": "Counting parameters"}, "body": {"en": "..."}},
    ]
    data["quiz"] = tomllib.loads(QUIZ_TOML)["question"]
    if predict is not None:
        data["exercises"] = [
            {
                "id": "split-heads",
                "title": {"en": "Split heads"},
                "task": {"en": "Write split_heads."},
                "file_name": "heads.py",
                "section": "split",
                "checks": [{"id": "shape", "title": {"en": "shape"}, "hint": {"en": "view then transpose"}}],
                "predict": predict,
            }
        ]
    return Lesson.model_validate(data)
