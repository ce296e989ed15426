"""`python -m tutor quiz` and `progress` as real subprocesses: through stdin (no TTY), or at a real
pseudo-terminal of 80 columns where a learner reads the choices on screen and types their numbers."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from conftest import ROOT, tutor_here
from fsrs import Rating
from quiz_fixtures import ANSWERS, Learner, choice_numbers, write_lesson
from rich.cells import cell_len

from tests.ui_helpers import learner_cli as tutor
from tutor.content.loader import load_course
from tutor.content.schema import ExactQuestion, Lesson, MultipleChoice, NumberQuestion, Question, SingleChoice
from tutor.i18n import pick
from tutor.progress.store import Store
from tutor.quiz.numbers import format_number
from tutor.quiz.schedule import review
from tutor.wrap import NO_LINE_START

WRONG = {qid: wrong for qid, _, wrong in ANSWERS}
# choice ids of the tiny lesson that no text of it contains as a word: never to be seen on screen
HIDDEN_IDS = re.compile(r"\b(times8|proj)\b")


def right_sheet(questions: list[Question]) -> dict[str, str | list[str]]:
    """What a learner who knows every answer gives (choices as ids; open questions: rated good)."""
    sheet: dict[str, str | list[str]] = {}
    for q in questions:
        if isinstance(q, SingleChoice | MultipleChoice):
            sheet[q.id] = [c.id for c in q.choices if c.correct]
        elif isinstance(q, NumberQuestion):
            sheet[q.id] = format_number(q.answer)
        elif isinstance(q, ExactQuestion):
            sheet[q.id] = q.answer
        else:
            sheet[q.id] = "good"
    return sheet


def sit_through(learner: Learner, lesson: Lesson, sheet: dict, prompts: int) -> list[str]:
    """Answer `prompts` prompts from `sheet`; the ids of the questions answered, in order."""
    return [learner.answer(lesson.quiz, sheet).id for _ in range(prompts)]


def flat(screen: str) -> str:
    """The words on screen as one line: what was said, wherever the lines were broken."""
    return " ".join(screen.split())


def choices_shown(out: str, prompt_start: str) -> list[list[str]]:
    """The choice lines ("  1) ...") shown under each asking of the question starting `prompt_start`."""
    blocks = [out[m.end() :].split("> ", 1)[0] for m in re.finditer(re.escape(prompt_start), out)]
    return [re.findall(r"^ +\d+\) .*$", block, re.MULTILINE) for block in blocks]


def progress_json(home: Path, *extra: str, here: bool = True) -> dict:
    """`progress --json`, by default run in this process (the first test below runs it as a real one)."""
    if here:
        result = tutor_here("progress", "--json", *extra, "--home", str(home), "--lang", "en")
    else:
        result = tutor(home, "progress", "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def tiny(tmp_path: Path) -> tuple[Path, Lesson]:
    lessons = write_lesson(tmp_path / "lessons")
    return lessons, load_course(lessons).lessons[0]


def test_a_full_shipped_lesson_quiz_at_a_terminal_shows_in_progress(home: Path) -> None:
    lesson = load_course(ROOT / "tutor" / "lessons").lessons[0]
    assert len(lesson.quiz) >= 10
    learner = Learner(home, "quiz", lesson.id)
    opens = sum(q.type == "open" for q in lesson.quiz)
    sit_through(learner, lesson, right_sheet(lesson.quiz), len(lesson.quiz) + opens)
    code, out = learner.finish()
    assert code == 0, out
    n = len(lesson.quiz)
    assert f"Score: {n}/{n} right at the first attempt (100%)" in out
    assert out.count("✓ Right") == n - opens
    (shown,) = [x for x in progress_json(home, here=False)["lessons"] if x["id"] == lesson.id]
    assert shown["quiz"] == {"questions": n, "answered": n, "correct": n, "due": 0}


def test_refusals_hints_an_explained_miss_and_a_calculation_then_end_of_input(
    home: Path, tmp_path: Path
) -> None:
    lessons, lesson = tiny(tmp_path)
    learner = Learner(home, "quiz", "1", "--lessons", str(lessons))
    screen = learner.prompt()  # q1, a choice: no hint, not a choice, then the wrong one
    learner.type("?")
    assert "no hint for this one" in learner.prompt()
    learner.type("7")
    refused = learner.prompt()
    assert "'7' is not one of the choices: type a number from 1 to 2" in refused
    assert "type ? for a hint" not in refused  # there is none to offer
    learner.type(choice_numbers(screen, lesson.quiz[0], ["times8"]))
    screen = flat(learner.prompt())  # the feedback comes at once, then q2, a number with a hint
    assert "✗ Not quite" in screen and "The answer: stays the same" in screen
    assert "Why not “grows 8×”: Heads split d_model; they do not add new full-size matrices." in screen
    assert "Each head works on a slice; the four matrices stay d×d." in screen  # explained at once
    assert "Next review tomorrow" in screen
    learner.type("sixteen")
    refused = flat(learner.prompt())
    assert "'sixteen' is not a number I can read" in refused and "type ? for a hint" in refused
    learner.type("?")
    assert "Hint: Four d×d weight matrices and four bias vectors." in learner.prompt()
    learner.type("4*256^2 + 4*256")
    assert "read your answer as 263,168" in learner.prompt()
    learner.end_input()
    code, out = learner.finish()
    assert code == 0
    assert not HIDDEN_IDS.search(out)  # no choice id is ever shown
    with Store(home) as store:  # refusals are not recorded; a right answer after a hint is "hard"
        assert [(a.question, a.correct, a.used_hint, a.rating) for a in store.answers()] == [
            ("same-params", False, False, 1),
            ("param-count", True, True, 2),
        ]
    assert "Stopped. 2 of 6 answered; every answer so far is saved." in out
    assert "Score: 1/2 right at the first attempt (50%)" in out  # scored on what was asked
    assert "4 questions not answered yet" in out
    quiz = progress_json(home, "--lessons", str(lessons))["lessons"][0]["quiz"]
    assert quiz == {"questions": 6, "answered": 2, "correct": 1, "due": 0}


def test_a_missed_question_comes_back_with_its_counter_and_the_same_choice_order(
    home: Path, tmp_path: Path
) -> None:
    lessons, lesson = tiny(tmp_path)
    learner = Learner(home, "quiz", "tiny-heads", "--lessons", str(lessons))
    sheet = right_sheet(lesson.quiz) | {"which-split": WRONG["which-split"]}
    asked = sit_through(learner, lesson, sheet, 7)  # six questions, the open one takes two prompts
    assert asked[-1] == "why-heads"
    assert learner.answer(lesson.quiz, right_sheet(lesson.quiz)).id == "which-split"
    code, out = learner.finish()
    assert code == 0, out
    assert "Once more, the ones you missed (not scored):" in out
    assert "[again · 4/6] Which tensors are split into heads?" in out
    first, again = choices_shown(out, "Which tensors")
    assert first == again and len(first) == 3  # the choices in the same order
    assert "Score: 5/6 right at the first attempt (83%)" in out
    assert progress_json(home, "--lessons", str(lessons))["lessons"][0]["quiz"]["correct"] == 5


def test_an_unfinished_sitting_resumes_at_its_first_unanswered_question(home: Path, tmp_path: Path) -> None:
    lessons, lesson = tiny(tmp_path)
    learner = Learner(home, "quiz", "tiny-heads", "--lessons", str(lessons))
    first_screen = learner.prompt()
    learner.type(choice_numbers(first_screen, lesson.quiz[0], ["times8"]))
    learner.answer(lesson.quiz, right_sheet(lesson.quiz))
    learner.prompt()
    learner.end_input()
    learner.finish()
    again = Learner(home, "quiz", "tiny-heads", "--lessons", str(lessons))
    sit_through(again, lesson, right_sheet(lesson.quiz), 6)  # q3..q6 (the open one twice), then q1
    code, out = again.finish()
    assert code == 0, out
    assert "Picking up where you left off: 2 of 6 answered." in out
    assert out.index("[3/6]") < out.index("[4/6]") and "[1/6]" not in out and "[2/6]" not in out
    (before,) = choices_shown(first_screen, "Going from 1 head")
    (after,) = choices_shown(out, "Going from 1 head")
    assert before == after and len(after) == 2  # q1 comes back in the same choice order
    assert "[again · 1/6]" in out
    assert "Score: 5/6 right at the first attempt (83%)" in out


def test_a_finished_sitting_is_not_resumed(home: Path, tmp_path: Path) -> None:
    lessons, lesson = tiny(tmp_path)
    learner = Learner(home, "quiz", "tiny-heads", "--lessons", str(lessons))
    sit_through(learner, lesson, right_sheet(lesson.quiz), 7)
    assert learner.finish()[0] == 0
    second = Learner(home, "quiz", "tiny-heads", "--lessons", str(lessons))
    assert "[1/6]" in second.prompt()
    second.interrupt()
    code, out = second.finish()
    assert "Picking up" not in out
    with Store(home) as store:
        assert {a.session for a in store.answers()} == {"lesson:tiny-heads#1"}


def test_ctrl_c_ends_the_answer_line_and_says_what_was_saved(home: Path, tmp_path: Path) -> None:
    lessons, lesson = tiny(tmp_path)
    learner = Learner(home, "quiz", "tiny-heads", "--lessons", str(lessons))
    learner.answer(lesson.quiz, right_sheet(lesson.quiz))
    learner.prompt()
    learner.interrupt()
    code, out = learner.finish()
    assert code == 130
    assert "interrupted" not in out and "Traceback" not in out
    assert "calculation)> \n\nStopped. 1 of 6 answered; every answer so far is saved." in out


def _lines(out: str) -> list[str]:
    return [line for line in out.split("\n") if line.strip()]


def test_the_plain_quiz_breaks_english_lines_between_words_at_80_columns(home: Path) -> None:
    lesson = load_course(ROOT / "tutor" / "lessons").lesson("multi-head")
    first = lesson.quiz[0]
    assert isinstance(first, ExactQuestion)
    learner = Learner(home, "quiz", "multi-head", cols=80)
    learner.prompt()
    learner.type(first.answer)
    learner.prompt()  # the explanation, then the next question
    learner.interrupt()
    _, out = learner.finish()
    assert max(cell_len(line) for line in _lines(out)) <= 80
    printed = flat(out)
    for text in (first.prompt, first.explanation):  # longer than a line, so they were broken
        assert len(pick(text, "en")) > 160
        assert " ".join(pick(text, "en").split()) in printed  # every word whole, and in order


def test_the_plain_quiz_breaks_chinese_between_characters_never_before_closing_punctuation(
    home: Path,
) -> None:
    lesson = load_course(ROOT / "tutor" / "lessons").lesson("positions")
    learner = Learner(home, "quiz", "positions", lang="zh", cols=80)
    learner.prompt()
    learner.type("顺序")
    screen = learner.prompt()  # the model answer (long Chinese prose), then the rating prompt
    learner.interrupt()
    learner.finish()
    lines = _lines(screen)
    assert max(cell_len(line) for line in lines) <= 80
    assert not [line for line in lines if line.strip()[0] in NO_LINE_START]
    model = pick(lesson.quiz[0].model_answer, "zh")
    assert cell_len(model) > 3 * 80
    wrapped = [line for line in lines if line.strip() and not line.startswith("  你的回答")]
    assert "".join(model.split()) in "".join("".join(wrapped).split())
    assert "你的回答：顺序" in screen  # the learner's own answer beside the model answer
    assert (
        len([line for line in lines if cell_len(line) > 70]) >= 3
    )  # the lines are filled, not broken at spaces


def test_export_import_and_reset_through_the_cli(home: Path, tmp_path: Path) -> None:
    lessons, lesson = tiny(tmp_path)
    learner = Learner(home, "quiz", "1", "--lessons", str(lessons))
    sit_through(learner, lesson, right_sheet(lesson.quiz), 7)
    assert learner.finish()[0] == 0
    before = progress_json(home, "--lessons", str(lessons))
    export = tmp_path / "moved.json"
    assert tutor(home, "progress", "--export", str(export)).returncode == 0
    other = tmp_path / "other-home"
    result = tutor(other, "progress", "--import", str(export))
    assert result.returncode == 0 and "imported 13 new or newer records" in result.stdout
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
        (("quiz", "--review", "--new", "-1"), "--new must be 0 or more"),
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


def test_predictions_explain_a_miss_at_once_and_unlock_the_exercise(home: Path) -> None:
    lesson = load_course(ROOT / "tutor" / "lessons").lesson("positions")
    (exercise,) = [e for e in lesson.exercises if any(q.type == "single" for q in e.predict)]
    first = exercise.predict[0]
    assert isinstance(first, SingleChoice)
    learner = Learner(home, "quiz", "--predict", exercise.id)
    screen = learner.prompt()
    learner.type(choice_numbers(screen, first, [next(c.id for c in first.choices if not c.correct)]))
    sheet = right_sheet(exercise.predict)
    asked = [learner.answer(exercise.predict, sheet).id for _ in range(len(exercise.predict))]
    assert asked == [q.id for q in exercise.predict[1:]] + [first.id]  # the missed one comes back last
    code, out = learner.finish()
    assert code == 0, out
    missed = out[: out.index(pick(exercise.predict[1].prompt, "en")[:30])]
    assert "✗ Not quite" in missed and "The answer: " in missed
    assert pick(first.explanation, "en")[:40] in missed  # the explanation comes with the miss
    assert "Try it again later: it comes back in this sitting." in missed
    assert out.count("✓ Right") == len(exercise.predict)
    assert "All predictions answered: the task is open." in out
    again = tutor(home, "quiz", "--predict", exercise.id)
    assert "All predictions are answered already" in again.stdout


def test_review_asks_due_then_capped_new_questions_and_says_which_is_which(
    home: Path, tmp_path: Path
) -> None:
    lessons, _ = tiny(tmp_path)
    assert (
        tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="1\n").returncode == 0
    )  # started, then EOF
    assert progress_json(home, "--lessons", str(lessons))["reviews_due"] == 0
    result = tutor(
        home, "quiz", "--review", "--new", "2", "--lessons", str(lessons), stdin="263168\n1,4,5,8\n"
    )
    assert result.returncode == 0, result.stderr
    assert "0 due today, 2 new. 2 questions." in result.stdout
    assert result.stdout.count("✓ Right") == 2
    nothing = tutor(home, "quiz", "--review", "--new", "0", "--lessons", str(lessons))
    assert "Nothing to review today. Next review:" in nothing.stdout


def test_review_counts_leave_out_questions_the_course_no_longer_has(home: Path, tmp_path: Path) -> None:
    lessons = write_lesson(tmp_path / "lessons")
    with Store(home) as store:  # a question answered wrong long ago, since removed from the lesson
        past = store.now() - timedelta(days=3)
        card = review(None, Rating.Again, past)
        store.record_answer("tiny-heads", "removed-question", "x", False, rating=1, card=card, at=past)
        assert [s.question for s in store.review_states()] == ["removed-question"]
    quiz = tutor(home, "quiz", "1", "--lessons", str(lessons), stdin="1\n")
    assert quiz.returncode == 0, quiz.stderr
    assert "Stopped. 1 of" in quiz.stdout and "due today" not in quiz.stdout
    nothing = tutor(home, "quiz", "--review", "--new", "0", "--lessons", str(lessons))
    last = nothing.stdout.splitlines()[-1]
    assert last.startswith("Nothing to review today. Next review: ")
    next_review = last.removesuffix(".").rsplit(" ", 1)[1]
    assert next_review > date.today().isoformat()  # the question answered above, not the removed one
    assert progress_json(home, "--lessons", str(lessons))["reviews_due"] == 0


def test_the_quiz_speaks_the_chosen_language(home: Path) -> None:
    lesson = load_course(ROOT / "tutor" / "lessons").lessons[0]
    first = lesson.quiz[0]
    assert isinstance(first, ExactQuestion)
    result = tutor(home, "quiz", lesson.id, stdin=first.answer + "\n", lang="zh")
    assert result.returncode == 0, result.stderr
    assert pick(lesson.title, "zh") in result.stdout and "测验：" in result.stdout
    assert pick(first.prompt, "zh")[:20] in result.stdout
    assert "✓ 正确" in result.stdout and "已停止。已答 1/" in result.stdout
