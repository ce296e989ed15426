"""The course as the CLI and the app open it: the lesson folders, with every experiment reference
checked against the experiment registry.

The content layer does not import the experiments (they store runs, import the model, and would
close a cycle); this module, above both, hands the registry's specs to the loader.
"""

from __future__ import annotations

from pathlib import Path

from tutor.content.loader import Course, load_course
from tutor.content.problems import Problem, error

REGISTRY_MODULE = "tutor.experiments.registry"


def open_course(lessons_dir: Path) -> Course:
    """`load_course` given the registry. A registry that fails to import is one course-level error
    (so `check` fails) and the lessons still load, their experiments unchecked."""
    specs, problem = _registry(Path(lessons_dir))
    course = load_course(lessons_dir, specs)
    if problem is not None:
        course.problems.insert(0, problem)
    return course


def _registry(where: Path) -> tuple[dict | None, Problem | None]:
    try:
        from tutor.experiments.registry import get_registry

        return dict(get_registry()), None
    except Exception as err:  # a broken registry is reported; it does not stop the lessons loading
        return None, error(
            where, f"{REGISTRY_MODULE} failed to load ({type(err).__name__}: {err}): experiments not checked"
        )
