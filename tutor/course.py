"""The course as the CLI and the app open it: the lesson folders, with every experiment reference
checked against the experiment registry.

The content layer does not import the experiments (they store runs, import the model, and would
close a cycle); this module, above both, hands the registry's specs to the loader.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from tutor.content.index import index_of, kept_course
from tutor.content.loader import Course, load_course
from tutor.content.problems import Problem, error
from tutor.texts import Said

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
        said = Said("problem.registry", module=REGISTRY_MODULE, kind=type(err).__name__, detail=str(err))
        return None, error(where, said)


def open_course_cached(lessons_dir: Path) -> Course:
    """`open_course`, reusing the course parsed last time while no lesson file and none of the code
    that parsed it has changed (the start-up cache, tutor.parse_cache); a fresh parse is kept for
    next time, with the cards the home screen lists before the course is loaded."""
    kept = kept_course(lessons_dir)
    if kept is None:  # the folder cannot be read: the loader says why in the learner's words
        return open_course(lessons_dir)
    value = kept.load() or {}  # nothing kept: a KeyError below, as None's TypeError was
    try:
        course = pickle.loads(value["course"])
        if isinstance(course, Course):
            return course
    except Exception:  # nothing kept, or pickled by other code: parse again
        pass
    course = open_course(lessons_dir)
    try:
        course_bytes = pickle.dumps(course, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a course that cannot be pickled is parsed at each start
        return course
    kept.save({"cards": index_of(course), "course": course_bytes})
    return course
