"""The course manifest (tutor/lessons/course.toml): it fixes the order of lessons and exercises, `check`
reports every lesson or exercise missing from it, listed twice, or listed without existing, and a
course without one keeps the folder order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from tutor.cli import main
from tutor.content.loader import load_course
from tutor.settings import shipped_lessons_dir

CASES = ROOT / "tests" / "content_cases"


def test_the_shipped_course_follows_its_manifest_not_its_folder_names():
    course = load_course(shipped_lessons_dir())
    assert course.problems == []
    order = {lesson.id: [ex.id for ex in lesson.exercises] for lesson in course.lessons}
    assert order == {
        "multi-head": ["split-heads", "head-count"],  # the folders sort head-count first
        "positions": ["three-layers"],
        "rope-alibi": ["rope", "alibi", "context-scaling"],  # the folders sort alibi first
    }
    assert list(order) == ["multi-head", "positions", "rope-alibi"]


def test_without_a_manifest_the_folder_order_is_kept(tmp_path: Path):
    lessons = tmp_path / "lessons"
    shutil.copytree(shipped_lessons_dir(), lessons, ignore=shutil.ignore_patterns("__pycache__"))
    (lessons / "course.toml").unlink()
    course = load_course(lessons)
    assert course.problems == []
    assert [lesson.id for lesson in course.lessons] == ["multi-head", "positions", "rope-alibi"]
    assert [ex.id for ex in course.lesson("rope-alibi").exercises] == ["alibi", "context-scaling", "rope"]


def _two_lessons(root: Path) -> Path:
    """01-basics (exercise first-steps) and 02-more (exercise more-steps), no manifest yet."""
    shutil.copytree(CASES / "good" / "01-basics", root / "01-basics")
    more = root / "02-more"
    shutil.copytree(CASES / "duplicate-exercise-ids" / "02-more", more)
    (more / "exercises" / "first-steps").rename(more / "exercises" / "more-steps")
    toml = more / "exercises" / "more-steps" / "exercise.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace('"first-steps"', '"more-steps"'), encoding="utf-8"
    )
    return root


def test_the_manifest_orders_lessons_and_an_order_that_disagrees_is_a_warning(tmp_path: Path):
    root = _two_lessons(tmp_path / "course")
    (root / "course.toml").write_text(
        '[[lesson]]\nfolder = "02-more"\nexercises = ["more-steps"]\n\n'
        '[[lesson]]\nfolder = "01-basics"\nexercises = ["first-steps"]\n',
        encoding="utf-8",
    )
    course = load_course(root)
    assert [lesson.id for lesson in course.lessons] == ["more", "basics"]
    assert course.errors == []
    assert sorted(
        (p.file.relative_to(root).as_posix(), p.line, p.field, p.message) for p in course.problems
    ) == [
        (
            "01-basics/lesson.toml",
            2,
            "order",
            "1, but course.toml lists this lesson as number 2; set order = 2",
        ),
        (
            "02-more/lesson.toml",
            2,
            "order",
            "2, but course.toml lists this lesson as number 1; set order = 1",
        ),
    ]


MANIFEST_WITH_PROBLEMS = """\
# 02-more is missing, 03-gone does not exist, one exercise is misspelt and one listed twice
[[lesson]]
folder = "01-basics"
exercises = ["first-step", "first-steps", "first-steps"]

[[lesson]]
folder = "03-gone"

[[lesson]]
folder = "01-basics"
"""


def test_check_names_every_manifest_problem_with_file_line_and_field(tmp_path: Path, capsys, monkeypatch):
    root = _two_lessons(tmp_path / "course")
    (root / "course.toml").write_text(MANIFEST_WITH_PROBLEMS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--lessons", "course"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert [line.strip() for line in out if "course.toml" in line] == [
        "course/course.toml: lesson: lesson folder '02-more' is not listed; add a [[lesson]] with folder = '02-more'",
        "course/course.toml:4: lesson[01-basics].exercises: exercise 'first-steps' listed twice",
        "course/course.toml:4: lesson[01-basics].exercises: no exercise folder 01-basics/exercises/first-step/ "
        "(exercises: first-steps)",
        "course/course.toml:7: lesson[03-gone].folder: no lesson folder '03-gone' (folders: 01-basics, 02-more)",
        "course/course.toml:10: lesson[01-basics].folder: listed twice (also lesson #1)",
    ]
    assert out[-1] == "lessons loaded: 2; errors: 5, warnings: 0"  # the lessons themselves still load


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[lesson]]\nfolder = "01-basics"\nexcercises = []\n',
            "course.toml:3: lesson[#1].excercises: unknown key",
        ),
        ("[[lesson]\n", "course.toml:1: "),
    ],
    ids=["unknown-key", "bad-toml"],
)
def test_a_manifest_that_does_not_read_is_reported_and_the_folder_order_used(tmp_path: Path, text, expected):
    root = _two_lessons(tmp_path / "course")
    (root / "course.toml").write_text(text, encoding="utf-8")
    course = load_course(root)
    assert [lesson.id for lesson in course.lessons] == ["basics", "more"]
    assert any(p.format(root).startswith(expected) for p in course.errors), [
        p.format(root) for p in course.errors
    ]
