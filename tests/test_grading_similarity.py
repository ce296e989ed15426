"""The similarity report (`grade ID --batch DIR --similar`): a copy with its names changed, its comments
and strings reworded and its layout redone is found with the lines that match; two solutions written
independently are not; what every file shares with the starter does not count. In-process on the
similarity module, then once through the real CLI (table, JSON, similar.csv).
"""

from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest

from tests.conftest import PYTHON, run_tutor_env
from tests.grading_helpers import PROBE_CHECKS, PROBE_TOML, SOLUTION, exercise_course
from tutor.grading.instructor.similarity import fingerprints, similar_pairs, tokens

STARTER = SOLUTION.replace("return", "raise NotImplementedError #")
ANNA = (
    SOLUTION
    + '''

def summary(values):
    """Mean and spread of the values."""
    total = 0
    count = 0
    for value in values:
        total += value
        count += 1
    mean = total / count
    spread = 0
    for value in values:
        spread += (value - mean) ** 2
    return {"mean": mean, "spread": (spread / count) ** 0.5}


def report(rows):
    lines = []
    for name, values in rows.items():
        stats = summary(values)
        lines.append(f"{name}: {stats['mean']:.2f} +- {stats['spread']:.2f}")
    return "\\n".join(lines)
'''
)
# anna's, renamed, reworded and laid out anew: the same program
COPY = (
    SOLUTION
    + """
# my own work!!
def summary(xs):
    acc = 0
    n = 0
    for x in xs:  # add them up
        acc += x
        n += 1
    m = acc / n
    s = 0
    for x in xs:
        s += (x - m) ** 2
    return {"avg": m, "sd": (s / n) ** 0.5}



def report(table):
    out = []
    for key, xs in table.items():
        st = summary(xs)
        out.append(f"{key} -> {st['avg']:.3f} ({st['sd']:.3f})")
    return "\\n".join(out)
"""
)
BEN = (
    SOLUTION
    + """

import statistics


def summary(values):
    return {"mean": statistics.fmean(values), "spread": statistics.pstdev(values)}


def report(rows):
    return "\\n".join(
        "{}: {:.2f} +- {:.2f}".format(name, *summary(values).values()) for name, values in sorted(rows.items())
    )
"""
)
CY = (
    SOLUTION
    + """

def summary(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {"median": median, "range": ordered[-1] - ordered[0]}


def report(rows):
    text = ""
    while rows:
        name, values = rows.popitem()
        text = f"{name}={summary(values)}\\n" + text
    return text.strip()
"""
)


def test_identifiers_literals_and_comments_do_not_count():
    assert [w for w, _ in tokens("x = 1  # one\nprint('hi')\n")] == ["v", "=", "n", "v", "(", "s", ")"]
    assert set(fingerprints("a = b + 1\nc = a * 2\n")) == set(
        fingerprints("foo = bar + 9\n# note\nbaz = foo * 7\n")
    )


def test_a_renamed_copy_is_found_and_independent_solutions_are_not():
    pairs = similar_pairs({"anna.py": ANNA, "copy.py": COPY, "ben.py": BEN, "cy.py": CY}, STARTER, 0.5)
    assert [(p.a, p.b) for p in pairs] == [("anna.py", "copy.py")], [(p.a, p.b, p.similarity) for p in pairs]
    pair = pairs[0]
    assert pair.similarity >= 0.8
    assert (
        pair.lines_a[0][0] >= 16 and pair.lines_a[-1][1] >= 30
    )  # the copied part, not the four small functions
    everything = similar_pairs({"anna.py": ANNA, "ben.py": BEN, "cy.py": CY}, STARTER, 0.01)
    assert all(p.similarity < 0.3 for p in everything), [(p.a, p.b, p.similarity) for p in everything]


def test_what_every_file_shares_with_the_starter_does_not_count():
    starter = ANNA  # a starter that already holds everything anna wrote
    assert similar_pairs({"anna.py": ANNA, "copy.py": COPY}, starter, 0.5) == []


@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
def test_the_cli_reports_the_pair_in_the_table_the_json_and_similar_csv(tmp_path):
    files = {
        "exercise.toml": PROBE_TOML,
        "checks.py": PROBE_CHECKS,
        "solution.py": SOLUTION,
        "starter.py": STARTER,
    }
    lessons = exercise_course(tmp_path / "lessons", files, shipped=False, order=1)
    subs = tmp_path / "subs"
    subs.mkdir()
    for name, text in {"anna.py": ANNA, "copy.py": COPY, "ben.py": BEN, "cy.py": CY}.items():
        (subs / name).write_text(text, encoding="utf-8")
    common = ("--lessons", str(lessons), "grade", "probe", "--batch", str(subs), "--similar")
    table = subprocess.run(
        [PYTHON, "-m", "tutor", *common, "--export", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=run_tutor_env(tmp_path / "home"),
        timeout=180,
    )
    assert table.returncode == 0, table.stderr
    assert "similar: 1 pair of files alike" in table.stdout
    assert any(
        line.startswith("  anna.py ~ copy.py: ") and "(lines " in line for line in table.stdout.splitlines()
    )
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out/similar.csv").read_text(encoding="utf-8"))))
    assert [(r["file_a"], r["file_b"]) for r in rows] == [("anna.py", "copy.py")] and rows[0]["lines_a"]
    as_json = subprocess.run(
        [PYTHON, "-m", "tutor", *common, "--format", "json"],
        capture_output=True,
        text=True,
        env=run_tutor_env(tmp_path / "home"),
        timeout=180,
    )
    (similar,) = json.loads(as_json.stdout)["similar"]
    assert (similar["a"], similar["b"]) == ("anna.py", "copy.py") and similar["similarity"] >= 0.8
    assert all(len(span) == 2 for span in similar["lines_a"] + similar["lines_b"])
