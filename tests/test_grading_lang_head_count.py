"""head-count's grade in German and Chinese holds no English: its checks (graded in this process from
stored training runs and an answer file) say their words from the [messages] of its exercise.toml.
The rule is tests/test_grading_lang.py's."""

from __future__ import annotations

import ast

import pytest
from test_grading_lang import COURSE, LANGS, _shown, english

from tutor.grading.authoring import _message_problems
from tutor.grading.workspace import starter_file


def test_head_count_says_its_words_through_messages():
    ex = COURSE.exercise("head-count")
    tree = ast.parse((ex.folder / "checks.py").read_text(encoding="utf-8"))
    assert ex.messages and not _message_problems(ex, ex.folder / "checks.py", tree)


@pytest.mark.parametrize("lang", LANGS)
def test_head_count_says_no_english(lang):
    from tutor.grading.runs import exercise_checks, grade_runs

    ex = COURSE.exercise("head-count")
    sample = exercise_checks(ex).sample_runs
    full, noisy = sample({1: 5.30, 4: 5.35, 8: 5.40}), sample({1: 5.40, 4: 5.38, 8: 5.39}, spread=0.05)
    partial = [
        r for r in full if r["config"]["model"]["n_head"] != 8 and r["config"]["train"]["seed"] == 1337
    ]
    wrong = b"best_heads = 4\nloss_gap = 0.3\nseed_spread = 0.2\nbeyond_noise = false\nsame_params = false\n"
    right = b"best_heads = 4\nloss_gap = 0.02\nseed_spread = 0.05\nbeyond_noise = false\nsame_params = true\n"
    cases = [
        (starter_file(ex).read_bytes(), full, "fail"),
        (b"best_heads = 1\nloss_gap = nan\n", full, "fail"),
        (wrong, full, "fail"),
        (wrong, partial, "fail"),
        (wrong, [], "fail"),
        (right, noisy, "pass"),
        (right.replace(b"false\nsame", b"true\nsame"), noisy, "fail"),
        (b"best_heads = = 4\n", full, "error"),
        (b"\xff\xfe", full, "error"),
    ]
    for source, runs, status in cases:
        result = grade_runs(ex, source, "head_count.toml", runs, lang=lang)
        assert result.status == status, (source, [c.message for c in result.checks])
        for check in result.checks:
            assert not english(check.message, lang, ex), (lang, source, check.name, check.message)
        assert not english(_shown(result, ex, lang), lang, ex), (lang, source)
