"""`python -m tutor quiz` and `progress` as real subprocesses, driven through stdin (no TTY)."""

from __future__ import annotations

import json
import string
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest
from conftest import PYTHON, ROOT, run_tutor_env
from fsrs import Rating
from quiz_fixtures import ANSWERS, write_lesson

from tutor.content.loader import load_course
from tutor.content.schema import ExactQuestion, Lesson, MultipleChoice, NumberQuestion, SingleChoice, pick
from tutor.progress.store import Store
from tutor.quiz.normalise import format_number
from tutor.quiz.schedule import review
from tutor.quiz.texts import TEXTS


def tutor(home: Path, *args: str, stdin: str = "", lang: str = "en") -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args, "--home", str(home), "--lang", lang],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(),
        cwd=ROOT,
        timeout=60,
    )


def right_lines(q) -> list[str]:
    """Input lines answering question `q` right, as a learner would type them."""
    if isinstance(q, SingleChoice | MultipleChoice):
        return [", ".join(str(i) for i, c in enumerate(q.choices, 1) if c.correct)]
    if isinstance(q, NumberQuestion):
        return [format_number(q.answer)]
    if isinstance(q, ExactQuestion):
        return [q.answer]
    return ["my own attempt", "good"]  # open: own answer, then the self-rating


def right_answers(lesson: Lesson) -> list[str]:
    return [line for q in lesson.quiz for line in right_lines(q)]


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
    # q1: "?" (no hint here), "7" is not a choice (asked again), then wrong; q2: hint, then right; input ends
    result = tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="?\n7\n2\n?\n263168\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "no hint for this one" in out
    assert "'7' is not one of the choices" in out
    assert "why not “grows 8×”: Heads split d_model" in out
    assert "hint: Four d×d weight matrices and four bias vectors." in out
    assert "(read as 263,168)" in out
    with Store(home) as store:  # a right answer after a hint is scheduled as "hard"
        assert [(a.question, a.correct, a.used_hint, a.rating) for a in store.answers()] == [
            ("same-params", False, False, 1),
            ("param-count", True, True, 2),
        ]
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


def test_predictions_through_the_cli_unlock_the_exercise(home: Path) -> None:
    exercise = next(e for e in load_course(ROOT / "lessons").exercises() if e.predict)
    first, *rest = exercise.predict
    wrong = "(9, 9, 9)" if isinstance(first, ExactQuestion) else "999"
    if isinstance(first, SingleChoice | MultipleChoice):
        wrong = str(next(i for i, c in enumerate(first.choices, 1) if not c.correct))
    # the first prediction is missed once, so it comes back after the others
    lines = [wrong, *(line for q in rest for line in right_lines(q)), *right_lines(first)]
    result = tutor(home, "quiz", "--predict", exercise.id, stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("✗ not right") == 1
    assert result.stdout.count("✓ right") == len(exercise.predict)
    assert "All predictions answered: the coding task is open." in result.stdout
    again = tutor(home, "quiz", "--predict", exercise.id)
    assert "All predictions are answered already" in again.stdout


def test_review_offers_capped_new_items_from_a_started_lesson(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    assert (
        tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="1\n").returncode == 0
    )  # started, then EOF
    result = tutor(
        home, "quiz", "--review", "--new", "2", "--lessons", str(lessons), stdin="263168\n1,4,5,8\n"
    )
    assert result.returncode == 0, result.stderr
    assert "2 question(s)" in result.stdout and result.stdout.count("✓ right") == 2
    nothing = tutor(home, "quiz", "--review", "--new", "0", "--lessons", str(lessons))
    assert "Nothing to review today. Next review:" in nothing.stdout


def test_review_counts_leave_out_questions_the_course_no_longer_has(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    with Store(home) as store:  # a question answered wrong long ago, since removed from the lesson
        past = store.now() - timedelta(days=3)
        card = review(None, Rating.Again, past)
        store.record_answer("tiny-heads", "removed-question", "x", False, rating=1, card=card, at=past)
        assert len(store.due_reviews(store.now())) == 1
    quiz = tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="1\n")
    assert quiz.returncode == 0, quiz.stderr
    assert "Stopped. 1 of" in quiz.stdout and "due today" not in quiz.stdout
    nothing = tutor(home, "quiz", "--review", "--new", "0", "--lessons", str(lessons))
    last = nothing.stdout.splitlines()[-1]
    assert last.startswith("Nothing to review today. Next review: ")
    next_review = last.removesuffix(".").rsplit(" ", 1)[1]
    assert next_review > date.today().isoformat()  # the question answered above, not the removed one


def test_the_quiz_speaks_the_chosen_language(home: Path) -> None:
    lesson = load_course(ROOT / "lessons").lessons[0]
    first = lesson.quiz[0]
    result = tutor(home, "quiz", lesson.id, stdin="\n".join(right_lines(first)) + "\n", lang="zh")
    assert result.returncode == 0, result.stderr
    assert pick(lesson.title, "zh") in result.stdout and "测验：" in result.stdout
    assert pick(first.prompt, "zh") in result.stdout
    assert "已停止。已答 1/" in result.stdout


def test_every_quiz_text_exists_in_all_languages_with_the_same_placeholders() -> None:
    for key, entry in TEXTS.items():
        assert set(entry) == {"en", "de", "zh"}, key
        fields = {
            lang: sorted(f for _, f, _, _ in string.Formatter().parse(text) if f)
            for lang, text in entry.items()
        }
        assert fields["de"] == fields["en"] == fields["zh"], key
