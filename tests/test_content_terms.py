"""The shipped lesson texts write formulas the terminal can show: every text of every lesson
(sections, quiz, exercises), code left out. (One word per term: tests/test_glossary.py.)"""

from __future__ import annotations

import re
from functools import cache

import pytest
from pydantic import BaseModel

from tutor.content.loader import load_course
from tutor.settings import shipped_lessons_dir

_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def _texts(node, lang: str) -> list[str]:
    if isinstance(node, BaseModel):
        return [t for name in type(node).model_fields for t in _texts(getattr(node, name), lang)]
    if isinstance(node, dict):
        return [node[lang]] if isinstance(node.get(lang), str) else []
    if isinstance(node, list | tuple):
        return [t for item in node for t in _texts(item, lang)]
    return []


@cache
def texts(lang: str) -> tuple[str, ...]:
    """The language's texts, code blocks and code spans removed."""
    lessons = load_course(shipped_lessons_dir()).lessons
    return tuple(_CODE.sub("", t) for lesson in lessons for t in _texts(lesson, lang))


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_formulas_have_no_literal_braces_and_no_half_subscripts(lang: str):
    """`R_{n−m}` showed its braces; `xᵢ₊d/₂` set `d` as a normal letter inside a subscript."""
    braces = [m.group(0) for t in texts(lang) for m in re.finditer(r"\w_\{[^} ]*\}", t)]  # R_(n−m) is fine
    half = [m.group(0) for t in texts(lang) for m in re.finditer(r"[₊₋₌₍][^₀-₉ₐ-ₜᵢ-ᵪ₍₎]", t)]
    assert braces == [] and half == []
