"""The course as the CLI and the app open it: the lesson folders, with every experiment reference
checked against the experiment registry.

The content layer does not import the experiments (they store runs, import the model, and would
close a cycle); this module, above both, hands the registry's specs to the loader.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from tutor.content.index import INDEX_FILE, fingerprint, index_of, save_index
from tutor.content.loader import Course, load_course
from tutor.content.problems import Problem, error
from tutor.texts import Said

REGISTRY_MODULE = "tutor.experiments.registry"
COURSE_FILE = "course.pickle"  # in the app's cache folder, beside the cards (INDEX_FILE)


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


def open_course_cached(lessons_dir: Path, cache_dir: Path) -> Course:
    """`open_course`, reusing the course parsed last time while no lesson file and none of the
    parser's code has changed (tutor.content.index.fingerprint); a fresh parse is saved for next
    time, with the cards the home screen lists before the course is loaded. The cache is the
    tutor's own (the app's home folder): a copy it cannot read or write is parsed again."""
    try:
        key = fingerprint(lessons_dir)
    except OSError:  # e.g. the folder does not exist: the loader says so in the learner's words
        return open_course(lessons_dir)
    saved = Path(cache_dir) / COURSE_FILE
    try:
        with saved.open("rb") as fh:
            stored_key, course = pickle.load(fh)
        if stored_key == key and isinstance(course, Course):
            return course
    except Exception:  # missing, truncated, or pickled by other code: parse again
        pass
    course = open_course(lessons_dir)
    try:
        from models.atomic import atomic_write

        atomic_write(saved, lambda fh: pickle.dump((key, course), fh, protocol=pickle.HIGHEST_PROTOCOL))
        save_index(Path(cache_dir) / INDEX_FILE, key, index_of(course))
    except Exception:  # a read-only home only costs the next start its speed
        pass
    return course
