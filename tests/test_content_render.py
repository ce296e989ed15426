"""The shipped lessons read exactly as they did before the scanner moved to markdown-it-py.

tests/lesson_render.json holds, per lesson folder, a hash of its .md and .toml files and a hash
of everything tutor.content.markdown made of them (tests/lesson_render.py). A lesson edited since
is not compared: check its output with `python tests/lesson_render.py --dump` and rewrite the
fixture with `--write`.
"""

from __future__ import annotations

import json

import lesson_render
import pytest


def test_every_shipped_lesson_converts_as_the_fixture_records():
    fixture = json.loads(lesson_render.FIXTURE.read_text(encoding="utf-8"))
    folders = {folder.name: folder for folder in lesson_render.shipped()}
    compared, differ = [], []
    for name, want in fixture.items():
        folder = folders.get(name)
        if folder is None or lesson_render.source_hash(folder) != want["source"]:
            continue  # the lesson was edited: its output is new, not a change of the scanner
        compared.append(name)
        if lesson_render.output_hash(lesson_render.render(folder)) != want["output"]:
            differ.append(name)
    if not compared:
        pytest.skip(f"every lesson was edited since {lesson_render.FIXTURE.name}: rewrite it (--write)")
    assert differ == [], f"converted differently: {differ} (diff `python tests/lesson_render.py --dump`)"
