"""`python -m tutor quiz` and `progress` as real subprocesses, driven through stdin (no TTY)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import PYTHON, ROOT, run_tutor_env
from quiz_fixtures import ANSWERS, write_lesson

from tutor.content.loader import load_course
from tutor.content.schema import ExactQuestion, Lesson, MultipleChoice, NumberQuestion, SingleChoice
from tutor.quiz.normalise import format_number


def tutor(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args, "--home", str(home)],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(),
        cwd=ROOT,
        timeout=60,
    )


def right_answers(lesson: Lesson) -> list[str]:
    """Input lines answering every question of `lesson` right, as a learner would type them."""
    lines = []
    for q in lesson.quiz:
        if isinstance(q, SingleChoice | MultipleChoice):
            lines.append(", ".join(str(i) for i, c in enumerate(q.choices, 1) if c.correct))
        elif isinstance(q, NumberQuestion):
            lines.append(format_number(q.answer))
        elif isinstance(q, ExactQuestion):
            lines.append(q.answer)
        else:
            lines += ["my own attempt", "good"]  # open: own answer, then the self-rating
    return lines


def progress_json(home: Path, *extra: str) -> dict:
    result = tutor(home, "progress", "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_full_shipped_lesson_quiz_through_stdin_shows_in_progress(home: Path) -> None:
    course = load_course(ROOT / "lessons")
    lesson = course.lessons[0]
    assert len(lesson.quiz) >= 10
    result = tutor(home, "quiz", lesson.id, stdin="\n".join(right_answers(lesson)) + "\n")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    n = len(lesson.quiz)
    assert f"Score: {n}/{n} right at the first attempt (100%)" in result.stdout
    assert result.stdout.count("✓ right") == sum(q.type != "open" for q in lesson.quiz)
    (shown,) = [x for x in progress_json(home)["lessons"] if x["id"] == lesson.id]
    assert shown["quiz"] == {"questions": n, "answered": n, "correct": n, "due": 0}


def test_wrong_answers_refusals_hints_and_eof_mid_quiz(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    # q1: "7" is not a choice (asked again), then wrong; q2: hint asked, then right; then input ends
    result = tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="7\n2\n?\n263168\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "'7' is not one of the choices" in out
    assert "why not “grows 8×”: Heads split d_model" in out
    assert "no hint for this one" in out
    assert "(read as 263,168)" in out
    assert "Stopped. 2 of 6 answered; every answer so far is saved." in out
    assert "Traceback" not in result.stderr
    quiz = progress_json(home, "--lessons", str(lessons))["lessons"][0]["quiz"]
    assert quiz == {"questions": 6, "answered": 2, "correct": 1, "due": 0}


def test_missed_items_come_back_in_the_same_sitting(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    lines = [wrong if qid == "head-shape" else right for qid, right, wrong in ANSWERS]
    lines.insert(5, "")  # the open question first asks for the learner's own answer (skipped)
    result = tutor(
        home, "quiz", "tiny-heads", "--lessons", str(lessons), stdin="\n".join(lines + ["1,4,5,8"]) + "\n"
    )
    assert result.returncode == 0, result.stderr
    assert "Once more, the ones you missed (not scored):" in result.stdout
    assert "Score: 5/6 right at the first attempt (83%)" in result.stdout


def test_export_import_and_reset_through_the_cli(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    lines = [right for _, right, _ in ANSWERS]
    lines.insert(5, "")
    assert tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="\n".join(lines) + "\n").returncode == 0
    before = progress_json(home, "--lessons", str(lessons))
    export = tmp_path / "moved.json"
    assert tutor(home, "progress", "--export", str(export)).returncode == 0
    other = tmp_path / "other-home"
    result = tutor(other, "progress", "--import", str(export))
    assert result.returncode == 0 and "imported 13 new or newer record(s)" in result.stdout
    after = progress_json(other, "--lessons", str(lessons))
    assert after["lessons"] == before["lessons"] and after["last_location"] == before["last_location"]

    declined = tutor(home, "progress", "--reset", stdin="no\n")
    assert declined.returncode == 1 and "nothing deleted" in declined.stdout
    assert progress_json(home, "--lessons", str(lessons))["lessons"] == before["lessons"]
    done = tutor(home, "progress", "--reset", stdin="yes\n")
    assert done.returncode == 0 and "backup" in done.stdout
    assert progress_json(home, "--lessons", str(lessons))["lessons"][0]["quiz"]["answered"] == 0
    assert len(list((home / "backups").glob("progress-before-reset-*.json"))) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("quiz", "no-such-lesson"), "no lesson 'no-such-lesson'"),
        (("quiz",), "name a lesson"),
        (("quiz", "--predict", "nope"), "no exercise 'nope'"),
        (("progress", "--import", "/does/not/exist.json"), "cannot read /does/not/exist.json"),
        (("progress", "--yes"), "--yes only goes with --reset"),
    ],
)
def test_bad_input_exits_2_with_a_message(home: Path, args: tuple[str, ...], message: str) -> None:
    result = tutor(home, *args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_corrupt_store_is_reported_and_the_quiz_still_runs(home: Path, tmp_path: Path) -> None:
    (home / "progress.sqlite3").write_text("not a database")
    lessons = write_lesson(tmp_path / "lessons")
    result = tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="1\n")
    assert result.returncode == 0
    assert "could not be used (not an SQLite database)" in result.stderr
    assert len(list(home.glob("progress.sqlite3.corrupt-*"))) == 1
    assert progress_json(home, "--lessons", str(lessons))["lessons"][0]["quiz"]["answered"] == 1
