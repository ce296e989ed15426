"""A check's inputs are neither predictable nor observable from the learner's file (issue 40).

Before, a check's inputs were drawn from the SHA-256 of the file's own text: a file could be made to
draw exactly the inputs it had answers for (tests/seed_attack/alibi.py implements nothing and passed
both bias checks), and the worker could read the seed in its own memory, a copy of the judge's.
Now the seed is an HMAC of the text under a key the grading process keeps to itself, the judge reads it
only after its worker is forked, and `grade --seed S` replays any grade exactly."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.grading_helpers import tutor
from tests.seed_attack.make_alibi import CHECKS, PREPARED, drawn

ATTACK = ROOT / "tests/seed_attack/alibi.py"
NO_TRANSPOSE = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads/broken/no_transpose.py"

# split_heads that returns its input, and on import looks for the grade's seed everywhere it can: its
# own call stack (a fork of the judge's), every object the process holds, and its generators' seeds
PEEK = """
import gc
import random
import re
import sys

import torch

HEX = re.compile(r"[0-9a-f]{15,16}")
found = set()


def look(value, depth):
    if type(value) is str:
        found.update(HEX.findall(value[:4096]))
    elif type(value) is dict and depth < 8:
        for key, item in list(value.items()):
            look(key, depth + 1)
            look(item, depth + 1)
    elif type(value) in (list, tuple) and depth < 8:
        for item in value:
            look(item, depth + 1)


frame = sys._getframe()
while frame is not None:
    look(dict(frame.f_locals), 0)
    frame = frame.f_back
for obj in gc.get_objects():
    look(obj, 6)
found.add(format(torch.initial_seed(), "015x"))
found.add(format(random.getstate()[1][1], "x"))
print("found:", " ".join(sorted(found)))


def split_heads(x, n_head):
    return x


def merge_heads(x):
    return x
"""


def _grade(home: Path, *args: str) -> dict:
    out = tutor(home, "grade", *args, "--json")
    assert out.returncode in (0, 1), out.stdout + out.stderr
    return json.loads(out.stdout)


def test_a_file_with_answers_for_the_inputs_its_own_hash_draws_earns_nothing(tmp_path):
    """The attack: one answer, alibi_bias(2, 10), and a number that made both bias checks of the old
    rule draw exactly (2, 10). Graded now, a check passes only where the grade's secret seed happens to
    draw (2, 10) (about 1 in 2500 a check), so both together never."""
    text = ATTACK.read_text(encoding="utf-8")
    old_seed = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert all(drawn(old_seed, check) == PREPARED for check in CHECKS)  # the attack is intact

    grade = _grade(tmp_path / "home", "alibi", str(ATTACK))
    assert grade["seed"] != old_seed
    status = {c["name"]: c["status"] for c in grade["checks"]}
    for check in CHECKS:
        lucky = drawn(grade["seed"], check) == PREPARED
        assert (status[check] == "pass") == lucky, (check, status, grade["seed"])
    assert not all(status[check] == "pass" for check in CHECKS), grade
    assert grade["score"] <= 2, grade


def test_a_grade_replays_exactly_from_its_seed(tmp_path):
    """Two processes grade the same file with two secret seeds (other inputs, other messages); `--seed`
    with a report's seed gives that report again, apart from timings. Replayed with the old rule's seed,
    the attack meets the inputs it was made for, and its two checks pass again."""
    home = tmp_path / "home"
    old_seed = hashlib.sha256(ATTACK.read_bytes()).hexdigest()[:16]
    runs = [("split-heads", str(NO_TRANSPOSE))] * 2 + [("alibi", str(ATTACK), "--seed", old_seed)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        first, other, attack = pool.map(lambda args: _grade(home, *args), runs)
    replay = _grade(home, "split-heads", str(NO_TRANSPOSE), "--seed", first["seed"])
    assert first["seed"] != other["seed"]
    assert [c["message"] for c in first["checks"]] != [c["message"] for c in other["checks"]]
    for grade in (first, replay):
        grade.pop("duration_s")
    assert replay == first
    assert attack["seed"] == old_seed
    assert [c["status"] for c in attack["checks"] if c["name"] in CHECKS] == ["pass", "pass"]


@pytest.mark.slow  # a batch of three (4 s); the CLI's replay above is the default run's proof
def test_one_process_grades_the_same_file_with_the_same_inputs(tmp_path):
    """Within one process (a batch, the app, --watch) the same text gets the same seed and messages;
    another text another seed."""
    folder = tmp_path / "batch"
    folder.mkdir()
    text = NO_TRANSPOSE.read_text(encoding="utf-8")
    for name, source in (("ann.py", text), ("bob.py", text), ("cy.py", text + "\n# changed\n")):
        (folder / name).write_text(source, encoding="utf-8")
    out = tutor(tmp_path / "home", "grade", "split-heads", "--batch", str(folder), "--format", "json")
    assert out.returncode in (0, 1), out.stdout + out.stderr
    grades = {r["file"]: r["grade"] for r in json.loads(out.stdout)["results"]}
    assert grades["ann.py"]["seed"] == grades["bob.py"]["seed"] != grades["cy.py"]["seed"]
    assert grades["ann.py"]["checks"] == grades["bob.py"]["checks"]


def test_the_worker_finds_no_trace_of_the_seed_in_its_own_memory(tmp_path):
    """The file searches its call stack, every object of its process and its generators' seeds for
    15 or 16 hex digits: the grade's seed is not among them (its first 15 digits neither)."""
    path = tmp_path / "split_heads.py"
    path.write_text(PEEK, encoding="utf-8")
    grade = _grade(tmp_path / "home", "split-heads", str(path))
    found = next(line for line in grade["output"].splitlines() if line.startswith("found:")).split()[1:]
    assert len(found) >= 2, grade["output"]  # it looked: its own generators' seeds at least
    assert grade["seed"] not in found and grade["seed"][:15] not in found, (grade["seed"], found)


def test_a_seed_that_is_not_a_grades_seed_is_refused(tmp_path):
    home = tmp_path / "home"
    for args, words in (
        (("split-heads", str(NO_TRANSPOSE), "--seed", "12345"), "--seed takes a grade's seed"),
        (("split-heads", str(NO_TRANSPOSE), "--seed", "0123456789ABCDEF"), "not '0123456789ABCDEF'"),
        (("split-heads", "--batch", str(tmp_path), "--seed", "0123456789abcdef"), "replays the grade of one"),
    ):
        out = tutor(home, "grade", *args)
        assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr, out.stderr
