"""The plain mode: `python -m tutor read LESSON` and `python -m tutor --plain`, as real subprocesses
reading a real progress store. A lesson's text and its experiments' results as plain lines (no
markup, no boxes, no escape sequences) in the learner's language, then its quiz answered line by
line from stdin; bad input exits 2 with a message and no traceback."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from conftest import ROOT

from tests.ui_helpers import learner_cli as tutor
from tutor.content.loader import load_course
from tutor.experiments.registry import get_spec, validate_params
from tutor.experiments.values import parse_assignments
from tutor.i18n import pick
from tutor.progress.store import Store
from tutor.texts import say

COURSE = load_course(ROOT / "tutor" / "lessons")
ESCAPE = re.compile(r"\x1b[\[\]()>=]")  # any terminal control sequence: colour, alternate screen, cursor
MARKUP = ("**", "```", "\\_", "\\|", "{#")
BOXES = re.compile(r"[─│┌┐└┘├┤┬┴┼━┃╭╮╰╯▁▂▃▄▅▆▇█]")


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_a_lesson_reads_as_plain_text_in_the_learners_language(home: Path, lang: str) -> None:
    lesson = COURSE.lesson("multi-head")
    done = tutor(home, "read", "multi-head", "--no-run", "--no-quiz", lang=lang)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0] == pick(lesson.title, lang)
    for section in lesson.sections:
        assert f"\n{pick(section.title, lang)}\n" in out
    assert not ESCAPE.search(out) and not BOXES.search(out)
    assert not [m for m in MARKUP if m in out], [m for m in MARKUP if m in out]
    # a table of the prose is read row by row, each cell after its heading
    pair, sep = say("plain.pair", lang, name="{n}", value="{v}"), say("plain.sep", lang)
    assert pair.replace("{n}", "step" if lang == "en" else "").replace("{v}", "") in out
    row = next(line for line in out.splitlines() if "view(B, T, 4, 8)" in line and "(1, 5, 4, 8)" in line)
    assert row.count(sep) == 2
    # code keeps its lines, four spaces in
    assert "\n    q, k, v = self.qkv(x).split(C, dim=2)" in out
    # every experiment is named; not run here, each with the command that runs it, which works
    commands = re.findall(r"(python -m tutor experiment .*)$", out, re.MULTILINE)
    assert len(commands) == sum(len(s.experiments) for s in lesson.sections)
    for command in commands:
        words = shlex.split(command)  # bash's $'..' (a line break in a text) reads as $ and the raw text
        name, sets = words[4], [w[1:].replace("\\n", "\n") if w[0] == "$" else w for w in words[6::2]]
        validate_params(get_spec(name), parse_assignments(get_spec(name), sets))
    assert say("read.trains", lang, command=commands[-1]) in out  # train-compare trains: never run here
    with Store(home) as store:  # every section printed counts as read
        assert {r.section for r in store.sections_read("multi-head")} == {s.id for s in lesson.sections}


def test_the_quiz_after_the_text_takes_answers_line_by_line(home: Path) -> None:
    lesson = COURSE.lesson("positions")
    first = lesson.quiz[0]
    assert first.type == "open"  # answered with a text, then rated (2: hard)
    done = tutor(home, "read", "positions", "--no-run", stdin="the order is lost\n2\n", lang="de")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.index(pick(lesson.sections[-1].title, "de")) < out.index(pick(first.prompt, "de")[:30])
    assert say("quiz.stopped", "de", answered=1, total=len(lesson.quiz)) in " ".join(out.split())
    assert not ESCAPE.search(out)
    with Store(home) as store:
        (answer,) = store.answers("positions")
        assert answer.question == first.id and answer.rating == 2  # rated hard
        assert store.last_location() == {"screen": "quiz", "lesson": "positions"}


def test_quick_experiments_run_and_print_their_results_as_lines(home: Path) -> None:
    done = tutor(home, "read", "positions", "--section", "order-blind", lang="zh")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert say("read.experiment", "zh", title=say("exp.shuffle.title", "zh"), name="shuffle") in out
    assert say("exp.metrics", "zh") in out
    assert "：" in out and "；" in out  # Chinese punctuation between heading and value, and between cells
    assert not BOXES.search(out) and not ESCAPE.search(out)
    assert pick(COURSE.lesson("positions").quiz[0].prompt, "zh")[:20] not in out  # one section: no quiz


def test_plain_without_a_subcommand_reads_the_lesson_last_in(home: Path) -> None:
    tutor(home, "read", "rope-alibi", "--section", "rope-idea", "--no-run")
    done = tutor(home, "--plain", stdin="")
    assert done.returncode == 0, done.stderr
    lesson = COURSE.lesson("rope-alibi")
    assert done.stdout.splitlines()[0] == pick(lesson.title, "en")
    assert "\x1b[?1049h" not in done.stdout  # no full-screen interface
    assert say("quiz.stopped", "en", answered=0, total=len(lesson.quiz)) in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    ("args", "lang", "says"),
    [
        (("read", "nope"), "en", "no lesson 'nope'; lessons: multi-head, positions, rope-alibi"),
        (("read", "1", "--section", "zzz"), "zh", "课程「multi-head」没有小节「zzz」；它的小节：one-head, "),
        (("read", "2", "--section", "zzz"), "de", "die Lektion „positions“ hat keinen Abschnitt „zzz“"),
    ],
)
def test_a_wrong_lesson_or_section_exits_2_with_a_clear_message(home: Path, args, lang, says) -> None:
    done = tutor(home, *args, lang=lang)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
