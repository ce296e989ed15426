"""The content schema: what a lesson folder may contain, as pydantic v2 models.

Every model forbids unknown keys, so a typo in a TOML file is an error, not a silent default.
Localised text is a mapping language -> string; English is required, the others fall back to it
(and `python -m tutor check` warns about each missing translation).

Folder layout (see tutor/lessons/README.md for the author's guide):

    tutor/lessons/NN-slug/lesson.toml      id, order, title, summary, prerequisites
    tutor/lessons/NN-slug/en.md|de.md|zh.md  prose; `## Title {#section-id}` starts a section;
                                       a fenced block ```experiment NAME``` (TOML body = params)
                                       embeds a runnable experiment
    tutor/lessons/NN-slug/quiz.toml        [[question]] tables
    tutor/lessons/NN-slug/exercises/ID/exercise.toml   one exercise (with what its checks say, under
                                                 [messages]); starter.py, solution.py,
                                                 checks.py and broken/*.py beside it
    tutor/lessons/course.toml              the course in order: lessons and, in each, its exercises
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from tutor.settings import COURSE_MODEL, is_course_module

Lang = Literal["en", "de", "zh"]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]


def _needs_english(value: dict[str, str]) -> dict[str, str]:
    if "en" not in value:
        raise ValueError("needs an English ('en') text; other languages fall back to it")
    empty = [lang for lang, text in value.items() if not text.strip()]
    if empty:
        raise ValueError(f"empty text for {', '.join(empty)}")
    return value


LocalText = Annotated[dict[Lang, str], AfterValidator(_needs_english)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- prose -----------------------------------------------------------------------------------


class ExperimentRef(Strict):
    """An experiment embedded in the prose: registry name plus the parameters to start from."""

    name: str
    params: dict[str, Any] = {}
    line: int | None = None  # line of the fence in the English file, for messages


class Section(Strict):
    id: Slug
    title: LocalText
    body: LocalText  # Markdown, math already converted to Unicode; experiment fences kept in place
    experiments: list[ExperimentRef] = []


# --- questions -------------------------------------------------------------------------------


class Choice(Strict):
    id: Annotated[str, Field(pattern=r"^[a-z0-9-]+$")]
    text: LocalText
    correct: bool = False
    why: LocalText | None = None  # shown when this (wrong) choice is picked: the misconception


class _QuestionBase(Strict):
    id: Slug
    prompt: LocalText
    explanation: LocalText  # shown after every answer, right or wrong
    section: Slug | None = None  # where to send a learner who keeps missing it
    hint: LocalText | None = None


class SingleChoice(_QuestionBase):
    type: Literal["single"]
    choices: list[Choice] = Field(min_length=2)

    @model_validator(mode="after")
    def _one_correct(self):
        n = sum(c.correct for c in self.choices)
        if n != 1:
            raise ValueError(f"a single-choice question needs exactly one correct choice, has {n}")
        _unique_choice_ids(self.choices)
        return self


class MultipleChoice(_QuestionBase):
    type: Literal["multiple"]
    choices: list[Choice] = Field(min_length=2)

    @model_validator(mode="after")
    def _some_correct(self):
        if not any(c.correct for c in self.choices):
            raise ValueError("a multiple-choice question needs at least one correct choice")
        _unique_choice_ids(self.choices)
        return self


class NumberQuestion(_QuestionBase):
    type: Literal["number"]
    answer: float
    tolerance: float = Field(0.0, ge=0)  # absolute
    rel_tolerance: float = Field(0.0, ge=0)  # relative to |answer|
    unit: LocalText | None = None


class ExactQuestion(_QuestionBase):
    type: Literal["exact"]
    answer: str
    also: list[str] = []  # further accepted answers
    kind: Literal["shape", "text"] = "text"  # "shape": (1, 4, 5, 8) == 1,4,5,8 == [1, 4, 5, 8]


class OpenQuestion(_QuestionBase):
    type: Literal["open"]
    model_answer: LocalText  # shown after the learner answers; they rate themselves


Question = Annotated[
    SingleChoice | MultipleChoice | NumberQuestion | ExactQuestion | OpenQuestion,
    Field(discriminator="type"),
]


def _unique_choice_ids(choices: list[Choice]) -> None:
    ids = [c.id for c in choices]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate choice id(s): {', '.join(dup)}")


# --- exercises -------------------------------------------------------------------------------


class CheckDecl(Strict):
    """One graded check; `checks.py` beside the exercise implements a function per id."""

    id: Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]
    title: LocalText
    points: int = Field(1, ge=0)
    hint: LocalText


def _placeholders(text: str) -> list[str]:
    """The `{name}` fields of a message, in order; ValueError when it is not a str.format template."""
    fields = []
    for _, name, spec, conversion in string.Formatter().parse(text):
        if name is not None:
            if not name.isidentifier():
                raise ValueError(
                    f"placeholder {{{name}}} must be a plain name (write a literal brace as {{{{ or }}}})"
                )
            fields.append(f"{name}!{conversion}:{spec}" if conversion or spec else name)
    return fields


def _same_placeholders(texts: dict[str, str]) -> dict[str, str]:
    """Every translation of a message fills the same placeholders as its English text."""
    want = sorted(_placeholders(texts["en"]))
    for lang, text in texts.items():
        got = sorted(_placeholders(text))
        if got != want:
            raise ValueError(
                f"the {lang} text fills {{{'}, {'.join(got)}}} but the English text {{{'}, {'.join(want)}}}"
            )
    return texts


MessageKey = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
Message = Annotated[LocalText, AfterValidator(_same_placeholders)]


ModuleName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]
ModelsFile = Annotated[str, Field(pattern=r"^tutor/model/[A-Za-z0-9_./-]+$")]


def _inside(path: str) -> str:
    if ".." in path.split("/") or "//" in path or path.endswith("/"):
        raise ValueError(f"{path!r}: name a file inside tutor/model/, without '..'")
    return path


class WorkerSpec(Strict):
    """What the grading worker of a code exercise is handed besides the standard library (read-only,
    in its private root): installed packages and course modules it may import, and course files it may
    read. Everything else is out of its reach; the course's own implementation of what the learner is
    asked to write must not be among them."""

    # e.g. "torch", "numpy", "tutor.model.gpt" (a course module: just that file)
    imports: list[ModuleName] = []
    # e.g. "tutor/model/checkpoints/gpt-learned.pt"
    files: list[Annotated[ModelsFile, AfterValidator(_inside)]] = []

    @model_validator(mode="after")
    def _no_grader(self) -> WorkerSpec:
        for name in self.imports:
            if name == COURSE_MODEL:
                raise ValueError(
                    f"{name!r}: hand course modules one by one (tutor.model.gpt), not the whole package"
                )
            if name.split(".")[0] == "tutor" and not is_course_module(name):
                raise ValueError(
                    f"{name!r}: the grader's code and the lessons (their solutions and checks) "
                    "are never handed to a worker"
                )
        return self


class TrainSpec(Strict):
    """An exercise whose file builds a whole model (`model`: the function, called with a GPTConfig) can
    have it trained after its checks pass (`python -m tutor exercise train ID`): a short run in the
    grading box, beside the course GPT with `compare` positions trained on the same batches."""

    model: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    steps: int = Field(300, ge=1, le=5000)
    compare: Literal["learned", "none", "rope", "alibi"] = "learned"


class Exercise(Strict):
    id: Slug
    title: LocalText
    task: LocalText  # Markdown
    kind: Literal["code", "runs"] = "code"  # "runs": graded from stored training runs + an answer
    file_name: str  # the learner's file in their workspace, e.g. "rope.py"
    section: Slug | None = None
    timeout_s: float = Field(20.0, gt=0, le=600)
    # what the learner is told before starting (the exercise list, the lab): about how long it takes, its
    # predictions and any training included, and how hard it is (1 easy, 2 medium, 3 hard)
    minutes: int | None = Field(None, ge=1, le=600)
    difficulty: int | None = Field(None, ge=1, le=3)
    hints: list[LocalText] = []  # general hints, revealed one at a time
    checks: list[CheckDecl] = Field(min_length=1)
    predict: list[Question] = []  # answer these before the task opens
    # what checks.py says to the learner (tutor.grading.kit.msg), {key: {lang: str.format template}}
    messages: dict[MessageKey, Message] = {}
    worker: WorkerSpec = WorkerSpec()  # what the grading worker is handed (code exercises)
    train: TrainSpec | None = None  # the learner's model can be trained once the checks pass
    # what each broken/ file must do (`python -m tutor check`): fail the check its first line names before
    # any other ("first": a later check that builds on that one may fail too), or fail that check alone
    # ("only": the checks are independent of each other)
    broken_fails: Literal["first", "only"] = "first"
    folder: Path | None = None  # set by the loader: where starter.py, solution.py, checks.py live


# --- the files as written (the loader builds `Lesson` from these) --------------------------------


class LessonFile(Strict):
    """lesson.toml: only the metadata; sections come from the Markdown files, the quiz from quiz.toml."""

    id: Slug
    order: int
    title: LocalText
    summary: LocalText | None = None
    prerequisites: list[Slug] = []


class Lesson(LessonFile):
    """A lesson as the tutor uses it: lesson.toml's metadata with what the loader adds from the
    other files."""

    sections: list[Section] = []
    quiz: list[Question] = []
    exercises: list[Exercise] = []
    folder: Path | None = None  # set by the loader


class CourseLesson(Strict):
    """One `[[lesson]]` of course.toml: a lesson folder and its exercises, in course order."""

    folder: str  # the lesson's folder, e.g. "01-multi-head"
    exercises: list[Slug] = []  # exercise ids (their folder names under exercises/)


class CourseFile(Strict):
    """course.toml: the lessons in course order (rustlings' info.toml is the model)."""

    lesson: list[CourseLesson] = []


class QuizFile(Strict):
    """quiz.toml: `[[question]]` tables."""

    question: list[Question] = []
