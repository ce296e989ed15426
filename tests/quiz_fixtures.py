"""A small lesson with one question of every type, as files (for the CLI) and as models (for the
engine); and a learner at a real pseudo-terminal, for driving `python -m tutor quiz` as one would."""

from __future__ import annotations

import fcntl
import os
import platform
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path

from conftest import PYTHON, ROOT, run_tutor_env

from tutor.content.schema import Lesson, MultipleChoice, OpenQuestion, Question, SingleChoice
from tutor.i18n import pick

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

# An answer sheet for QUIZ_TOML: (question id, right answer, wrong answer). Choices are given by id
# (a list): the numbers a learner types depend on the order the sitting shows them in.
ANSWERS = [
    ("same-params", ["same"], ["times8"]),
    ("param-count", "263,168", "65,536"),
    ("head-shape", "[1, 4, 5, 8]", "(1, 5, 4, 8)"),
    ("which-split", ["q", "k"], ["q", "proj"]),
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


# --- a learner at a terminal ---------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CHOICE = re.compile(r"^ +(\d+)\) (.*)$", re.MULTILINE)
OWN_ANSWER = "the heads look at different things"  # typed for every open question
_READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}  # read(2)'s number, as /proc/PID/syscall shows it


class Learner:
    """`python -m tutor ARGS` in a pseudo-terminal of `cols` columns: it sees what a learner sees
    (ANSI styles removed, line ends as "\\n") and types lines, or presses Ctrl-C."""

    def __init__(self, home: Path, *args: str, lang: str = "en", cols: int = 80, rows: int = 24):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = run_tutor_env() | {"TERM": "xterm", "NO_COLOR": "1"}
        env.pop("COLUMNS", None)
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "tutor", *args, "--home", str(home), "--lang", lang],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
        os.close(slave)
        self.transcript = ""
        self.mark = 0  # where the output not yet returned by `prompt` starts
        self.asked: Question | None = None

    def _read(self, timeout: float) -> bool:
        """Add what the program printed within `timeout` s to the transcript; False once it has ended."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the program ended and its side of the terminal is closed
            return False
        self.transcript += _ANSI.sub("", data.decode("utf-8", "replace")).replace("\r\n", "\n")
        return bool(data)

    def _wait(self, done, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if not self._read(0.2) or time.monotonic() > deadline:
                raise AssertionError(f"the program stopped or stalled; it printed:\n{self.transcript}")

    def prompt(self, timeout: float = 60) -> str:
        """Wait until the program asks for input; what it printed since the last prompt."""
        self._wait(lambda: self.transcript[self.mark :].endswith("> "), timeout)
        screen, self.mark = self.transcript[self.mark :], len(self.transcript)
        return screen

    def type(self, line: str) -> None:
        """Type `line` and Enter (the terminal echoes it)."""
        start = len(self.transcript)
        os.write(self.master, line.encode() + b"\r")
        self._wait(lambda: "\n" in self.transcript[start:], 30)
        self.mark = self.transcript.index("\n", start) + 1

    def _reading(self) -> bool:
        """Whether the program sits in read() on its input, i.e. it waits for the learner's line.
        True where /proc cannot tell (then the signal goes at once)."""
        number = _READ_SYSCALL.get(platform.machine())
        try:
            fields = Path(f"/proc/{self.proc.pid}/syscall").read_text().split()
        except OSError:
            return True
        return number is None or fields[:2] == [number, "0x0"]

    def interrupt(self) -> None:
        """Ctrl-C (sent as the signal: the terminal's own echo of "^C" is not the program's), once
        the program waits in read() for its line. A SIGINT that lands after the prompt is printed
        but before read() starts is only noticed at the next keystroke (a learner presses again);
        sent in that gap, the test would wait out its whole deadline (seen in CI)."""
        deadline = time.monotonic() + 30
        while self.proc.poll() is None and not self._reading() and time.monotonic() < deadline:
            time.sleep(0.005)
        self.proc.send_signal(signal.SIGINT)

    def end_input(self) -> None:
        """Ctrl-D at the start of a line: the program reads the end of its input."""
        os.write(self.master, b"\x04")

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Wait for the program to end; its exit code and everything it printed."""
        deadline = time.monotonic() + timeout
        while self._read(0.2) and time.monotonic() < deadline:
            pass
        code = self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        os.close(self.master)
        return code, self.transcript

    def answer(self, questions: Sequence[Question], sheet: dict[str, str | list[str]]) -> Question:
        """At the next prompt, answer the question on screen from `sheet` (question id -> typed text,
        choice ids, or an open question's self-rating); returns that question."""
        screen = self.prompt()
        if not screen.rstrip().endswith("(1-4)>"):  # not the self-rating: a new question, or it again
            self.asked = on_screen(screen, questions) if _asks(screen, questions) else self.asked
        q = self.asked
        assert q is not None, screen
        given = sheet[q.id]
        if isinstance(q, OpenQuestion) and not screen.rstrip().endswith("(1-4)>"):
            given = OWN_ANSWER
        self.type(choice_numbers(screen, q, given) if isinstance(given, list) else given)
        return q


def _asks(screen: str, questions: Sequence[Question], lang: str = "en") -> bool:
    return any(pick(q.prompt, lang)[:30] in screen for q in questions)


def on_screen(screen: str, questions: Sequence[Question], lang: str = "en") -> Question:
    """The question asked last in `screen` (found by the start of its prompt)."""
    found = {screen.rfind(pick(q.prompt, lang)[:30]): q for q in questions}
    return found[max(found)]


def choice_numbers(
    screen: str, question: SingleChoice | MultipleChoice, ids: list[str], lang: str = "en"
) -> str:
    """What a learner types to pick the choices `ids`: their numbers as `screen` shows them."""
    asked = screen[screen.rfind(pick(question.prompt, lang)[:30]) :]
    shown = {int(n): text.strip() for n, text in _CHOICE.findall(asked)}
    texts = {c.id: pick(c.text, lang) for c in question.choices}
    return ", ".join(str(n) for i in ids for n, text in shown.items() if texts[i].startswith(text))
