"""A check that computes while the worker computes (kit's `learner.name.later(...)`), through the real
judge and worker: the call is out, and the check goes on, before the learner's code has answered, its answer and its errors come
back as a plain call's would, and an answer never asked for does not put the next reply out of turn."""

from __future__ import annotations

import pytest

from tests.grading_helpers import exercise_course
from tutor.content.loader import load_course
from tutor.grading.runner import grade_code

TOML = """
id = "probe"
file_name = "probe.py"
section = "probe"
timeout_s = 20
title = { en = "Probe" }
task = { en = "Write stamp() and boom()." }

[[checks]]
id = "overlap"
title = { en = "the worker runs while the judge works" }
hint = { en = "-" }

[[checks]]
id = "raised"
title = { en = "an error comes back on answer()" }
hint = { en = "-" }

[[checks]]
id = "dropped"
title = { en = "an answer never asked for is dropped" }
hint = { en = "-" }
"""
CHECKS = """
import time

from tutor.grading.kit import expect


def check_overlap(learner):
    answer = learner.stamp.later()  # stamp() works a second, then says when it ended
    back = time.monotonic()  # the judge's own work would start here
    ended = answer()
    assert back < ended, f"later() came back at {back:.3f}, after the learner's call ended ({ended:.3f})"
    return "in parallel"


def check_raised(learner):
    answer = learner.boom.later(7)
    answer()


def check_dropped(learner):
    learner.boom.later(1)  # never answered
    learner.stamp.later()  # nor this
    expect(learner.stamp() > 0, True)
"""
SOLUTION = """
import time


def stamp():
    time.sleep(1.0)
    return time.monotonic()


def boom(n):
    raise ValueError(f"no {n}")
"""


@pytest.fixture(scope="module")
def exercise(tmp_path_factory):
    files = {"exercise.toml": TOML, "checks.py": CHECKS, "solution.py": SOLUTION, "starter.py": SOLUTION}
    return load_course(exercise_course(tmp_path_factory.mktemp("lessons"), files, shipped=False)).exercise(
        "probe"
    )


def test_a_later_call_runs_in_the_worker_while_the_check_works_and_answers_as_a_call_would(exercise):
    result = grade_code(exercise, SOLUTION, "probe.py")
    checks = {c.name: c for c in result.checks}
    assert checks["overlap"].status == "pass", checks["overlap"].message
    assert checks["raised"].status == "error"
    assert "boom(7)" in checks["raised"].message and "no 7" in checks["raised"].message
    assert checks["dropped"].status == "pass", checks["dropped"].message
