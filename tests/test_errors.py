"""Errors have one root each: TutorError for what the tutor could not do (the CLI prints it and
exits 2), CheckFailure for a learner's work that did not pass. The rest are signals that a run was
stopped, caught inside the tutor and never shown as an error."""

from __future__ import annotations

import ast
import importlib

from conftest import ROOT

from tests.source import code_files
from tutor.errors import CheckFailure, TutorError

# Raised and caught inside the tutor: "stop", not "something went wrong".
SIGNALS = {
    "tutor.experiments.errors.Cancelled": "a run stopped because its caller asked",
    "tutor.proc.child.ChildTimeout": "a child passed its deadline; the caller says what timed out",
    "tutor.proc.child.ChildCancelled": "a child was stopped because its caller asked",
    "tutor.proc.forkserver.ServerGone": "a fork server exited; the caller says what could not be started",
    "tutor.grading.judging.remote.Stopped": "the sandboxed worker can answer no more; the judge reports why",
    "tutor.grading.box.wire.WireError": "a message from the worker that is not plain data; the judge voids the run",
    "tutor.quiz.numbers.NotANumber": "an answer that is not a number; the quiz asks again",
    "tutor.quiz.terminal._Stop": "the end of the plain quiz's input; everything answered is saved",
    "tutor.grading.box.sandbox.RootRefused": "a mount the system refused; the worker goes on and the grade names the layer",
    "tutor.grading.instructor.collect._Full": "a batch took its --max-files; a row says where it stopped",
}


def _exception_classes() -> list[str]:
    found = []
    for file in code_files(model=False):  # the course GPT's errors have their own root (ModelError)
        if file.name == "__main__.py":
            continue
        module = ".".join(file.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(file.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                cls = getattr(importlib.import_module(module), node.name)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    found.append(f"{module}.{node.name}")
    return found


def test_every_error_of_the_tutor_has_one_of_the_two_roots():
    classes = _exception_classes()
    assert "tutor.content.latex.LatexError" in classes and "tutor.ui.grading_client.GradeFailed" in classes
    assert "tutor.grading.judging.voice.CheckFailed" in classes and "tutor.quiz.check.AnswerError" in classes
    wrong = []
    for name in classes:
        module, _, attr = name.rpartition(".")
        cls = getattr(importlib.import_module(module), attr)
        if name not in SIGNALS and not issubclass(cls, TutorError | CheckFailure):
            wrong.append(name)
    assert wrong == []
    assert not issubclass(CheckFailure, TutorError)  # two roots: a failed check is not a tutor error
