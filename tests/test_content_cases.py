"""The broken-lesson corpus: every case gives a clear problem naming file, line and field; never a traceback.

Each folder under tests/content_cases/ is a lessons directory; its expect.toml lists the problems
`check` must report (message given as a substring) and the exit code.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import PYTHON, ROOT, run_tutor_env

from tutor.cli import main
from tutor.course import open_course

CASES = ROOT / "tests" / "content_cases"
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expect.toml").is_file())


def expectation(name: str) -> dict:
    return tomllib.loads((CASES / name / "expect.toml").read_text(encoding="utf-8"))


def _matches(problem, want: dict, case_dir: Path) -> bool:
    return (
        problem.severity == want["severity"]
        and problem.file == case_dir / want["file"]
        and ("line" not in want or problem.line == want["line"])
        and ("field" not in want or problem.field == want["field"])
        and want["message"] in problem.message
    )


def test_corpus_covers_the_cases_the_issue_names():
    required = {
        "bad-toml",
        "unknown-key",
        "missing-english-file",
        "unknown-experiment",
        "duplicate-section-ids",
        "duplicate-question-ids",
        "duplicate-lesson-ids",
        "duplicate-exercise-ids",
        "wrong-answer-type",
        "empty-file",
        "non-utf8",
        "section-ids-differ",
        "experiment-refs-differ",
        "bad-experiment-params",
        "unknown-prerequisite",
        "missing-translation-text",
    }
    assert required <= set(CASE_NAMES)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_reports_its_problem_with_file_line_and_field(name: str):
    case_dir = CASES / name
    want = expectation(name)
    course = open_course(case_dir)
    for expected in want.get("problem", []):
        assert any(_matches(p, expected, case_dir) for p in course.problems), (
            f"{name}: expected {expected}\ngot:\n" + "\n".join(p.format(case_dir) for p in course.problems)
        )
    if want["exit"] == 2:
        assert course.skipped, "a folder with an error is skipped"
    else:
        assert not course.errors and len(course.lessons) == 1


def _assert_check_output(name: str, out: str, code: int) -> None:
    want = expectation(name)
    assert "Traceback" not in out
    assert code == want["exit"], out
    for expected in want.get("problem", []):
        line = f":{expected['line']}" if "line" in expected else r"(:\d+)?"
        field = re.escape(expected["field"]) + ": " if "field" in expected else ""
        pattern = re.compile(rf"^\s*tests/content_cases/{name}/{re.escape(expected['file'])}{line}: {field}")
        assert any(pattern.match(x) and expected["message"] in x for x in out.splitlines()), out
    assert "errors: " in out.splitlines()[-1]  # the summary line comes last


@pytest.mark.parametrize("name", CASE_NAMES)
def test_check_command_prints_file_line_field_for_case(name: str, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths are printed relative to the working directory
    code = main(["check", "--lessons", str(CASES / name)])
    captured = capsys.readouterr()
    _assert_check_output(name, captured.out + captured.err, code)


# A real process for a few cases (one per kind of file); the rest go through the same `main` in-process.
SUBPROCESS_CASES = [
    "bad-toml",
    "non-utf8",
    "unknown-experiment",
    "wrong-answer-type",
    "missing-translation-file",
]


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_check_cli_process_on_case_exits_cleanly(name: str, tmp_path: Path):
    proc = subprocess.run(
        [PYTHON, "-m", "tutor", "check", "--lessons", str(CASES / name)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(tmp_path),
        cwd=ROOT,
        timeout=60,
    )
    _assert_check_output(name, proc.stdout + proc.stderr, proc.returncode)


def test_a_bad_folder_next_to_a_good_one_does_not_hide_it(tmp_path: Path):
    shutil.copytree(CASES / "good" / "01-basics", tmp_path / "01-basics")
    broken = tmp_path / "02-broken"
    shutil.copytree(CASES / "bad-toml" / "01-basics", broken)
    (broken / "lesson.toml").write_text(
        (broken / "lesson.toml").read_text(encoding="utf-8").replace('"basics"', '"broken"'), encoding="utf-8"
    )
    course = open_course(tmp_path)
    assert [lesson.id for lesson in course.lessons] == ["basics"]
    assert course.skipped == [broken]
    assert [p.file for p in course.errors] == [broken / "lesson.toml"]

    proc = subprocess.run(
        [PYTHON, "-m", "tutor", "lessons", "--lessons", str(tmp_path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(tmp_path),
        timeout=60,
    )
    assert proc.returncode == 0
    assert "basics: Basics of attention" in proc.stdout
    assert "02-broken" in proc.stderr and "1 error;" in proc.stderr and "Traceback" not in proc.stderr


def test_every_problem_of_a_folder_is_reported_at_once(tmp_path: Path):
    lesson = tmp_path / "01-basics"
    shutil.copytree(CASES / "good" / "01-basics", lesson)
    toml = (lesson / "lesson.toml").read_text(encoding="utf-8")
    (lesson / "lesson.toml").write_text(toml.replace("title =", "titel ="), encoding="utf-8")
    quiz = (lesson / "quiz.toml").read_text(encoding="utf-8").replace("answer = 4096", 'answer = "x"')
    (lesson / "quiz.toml").write_text(quiz, encoding="utf-8")
    (lesson / "zh.md").write_bytes(b"\xff\xfe")
    files = {p.file.name for p in open_course(tmp_path).errors}
    assert files == {"lesson.toml", "quiz.toml", "zh.md"}
