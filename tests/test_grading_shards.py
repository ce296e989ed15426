"""`grade ID --batch DIR --shard K/N` and `grade --merge`, through the real CLI: shards merged give the
whole folder's report (apart from timings), a bad --shard or a bad set of reports is exit 2 with a
message naming what and where, and the Slurm and Kubernetes recipes, taken from docs/grading.md itself,
run locally shard by shard with the variable each engine sets, then merge to the whole folder's report.
(Most refusals, which start no grader, are checked in the test's process beside real processes of each kind.)

Two of the folder's seven entries are graded (a pass and a fail); the rest are error rows that cost no
grader, named so the shards differ and so the folder's order is not the order of the escaped names.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from tests.conftest import PYTHON, ROOT, run_tutor_env, tutor_here
from tests.grading_helpers import PROBE_CHECKS, PROBE_TOML, SOLUTION, exercise_course, probe_lessons, tutor
from tutor.grading.instructor.batch import raw_name, shard_of, shown_name

WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
# name: text (bytes: an error row, no grader started). "a\tb.py" is before "a!b.py" in the folder
# (tab before "!"), after it as the reports show it ("a\\tb.py": backslash after "!").
FILES: dict[str, str | bytes] = {
    "anna.py": SOLUTION,
    "fay.py": WRONG,
    "cleo.py": b"\xff not UTF-8\n",
    "a\tb.py": b"\xff",
    "a!b.py": b"\xff",
    "hal.py": b"\xff",
    "e\nve.py": b"\xff",
}


def submissions(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in FILES.items():
        path = folder / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return folder


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    return probe_lessons(tmp_path_factory.mktemp("lessons"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return submissions(tmp_path_factory.mktemp("shards") / "subs")


def grade(lessons: Path, home: Path, *args: str, lang: str | None = None) -> subprocess.CompletedProcess:
    return tutor(home, "--lessons", str(lessons), "grade", *args, lang=lang)


def grade_here(lessons: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """As `grade`, in this process (tutor_here): for refusals that start no grader, beside one of the same
    kind as a real process."""
    return tutor_here("--lessons", str(lessons), "grade", *args, home=home)


@pytest.fixture(scope="module")
def whole(lessons, folder, tmp_path_factory) -> dict:
    """The whole folder graded at once: the report every merge must give."""
    out = grade(lessons, tmp_path_factory.mktemp("home"), "probe", "--batch", str(folder), "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def timeless(report: dict) -> dict:
    """A report without its per-file timings, the files' times, the time it was graded at and each grade's
    seed (the only things two grades of a copy of a folder may differ in: a seed is the grading process's
    secret, so two processes draw different ones; the probe's checks draw no input)."""
    report = copy.deepcopy(report)
    report.pop("graded_at", None)
    for row in report["results"]:
        row["grade"]["duration_s"] = 0
        row["grade"].pop("seed", None)
        row.pop("submitted", None)
        row.pop("file_time", None)  # the file's mtime: a copy of the folder has its own
    return report


def test_the_shard_of_a_file_depends_on_its_name_alone():
    names = [f"student-{i:03d}.py" for i in range(300)]
    for n in (1, 2, 3, 7):
        shards = [shard_of(name, n) for name in names]
        assert set(shards) == set(range(1, n + 1))  # every shard gets files
        assert shards == [shard_of(name, n) for name in reversed(names)][::-1]  # order and company: no matter
    assert [shard_of(name, 3) for name in FILES] == [3, 1, 1, 1, 1, 2, 3]  # fixed: docs/grading.md has it
    assert shard_of("anna.py", 4) == 1 and shard_of("fay.py", 4) == 3  # shard 4/4 of FILES is empty


def test_a_name_as_reports_show_it_gives_back_the_name():
    for name in [*FILES, "fake\\nrow.py", os.fsdecode(b"caf\xe9.py"), "x\u202e\u200by.py", "中文.py"]:
        assert raw_name(shown_name(name)) == name
    for text in ("a\\qb.py", "a\nb.py", "\\x41.py", "end\\"):
        assert raw_name(text) is None


@pytest.fixture(scope="module")
def thirds(lessons, folder, tmp_path_factory) -> dict[int, subprocess.CompletedProcess]:
    home = tmp_path_factory.mktemp("home")
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = {
            k: pool.submit(
                grade, lessons, home, "probe", "--batch", str(folder), "--shard", f"{k}/3", "--format", "json"
            )
            for k in (1, 2, 3)
        }
        return {k: run.result() for k, run in runs.items()}


@pytest.fixture(scope="module")
def reports(thirds, tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("reports")
    paths = []
    for k, out in thirds.items():
        assert out.returncode == 0, out.stderr
        paths.append(base / f"shard-{k}.json")
        paths[-1].write_text(out.stdout, encoding="utf-8")
    return paths


def test_shards_one_two_three_of_three_merged_are_the_whole_batch(whole, thirds, reports, lessons, tmp_path):
    parts = {k: json.loads(out.stdout) for k, out in thirds.items()}
    for k, part in parts.items():
        assert list(part) == [
            "version",
            "exercise",
            "checks_version",
            "shard",
            "tutor_version",
            "graded_at",
            "results",
        ]
        assert part["exercise"] == "probe" and part["shard"] == {"index": k, "count": 3}
        assert part["version"] == 1 and part["checks_version"] == whole["checks_version"]
        assert all(row["grade"]["version"] == 1 for row in part["results"])
        assert [r["file"] for r in part["results"]] == [
            r["file"] for r in whole["results"] if shard_of(raw_name(r["file"]), 3) == k
        ]
    merged = grade(lessons, tmp_path, "--merge", *map(str, reports), "--format", "json")
    assert merged.returncode == 0 and merged.stderr == "", merged.stderr
    assert timeless(json.loads(merged.stdout)) == timeless(whole)
    assert [r["file"] for r in whole["results"]][:3] == [
        "a\\tb.py",
        "a!b.py",
        "anna.py",
    ]  # the folder's order
    statuses = {r["file"]: r["grade"]["status"] for r in whole["results"]}
    assert statuses["anna.py"] == "pass" and statuses["fay.py"] == "fail" and statuses["cleo.py"] == "error"
    backwards = grade(lessons, tmp_path, "--merge", *map(str, reversed(reports)), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(backwards.stdout)))
    assert [r["file"] for r in rows] == [r["file"] for r in whole["results"]]
    assert [(r["status"], r["score"], r["first_failure"], r["message"]) for r in rows] == [
        (
            g["status"],
            str(g["score"]),
            next((c["name"] for c in g["checks"] if c["status"] != "pass"), ""),
            next((c["message"] for c in g["checks"] if c["status"] != "pass"), ""),
        )
        for g in (r["grade"] for r in whole["results"])
    ]
    table = grade(lessons, tmp_path, "--merge", *map(str, reports)).stdout.splitlines()
    assert table[-2] == "1 of 7 passed" and len(table) == 2 + 7 + 2


def test_a_bad_shard_is_a_usage_error_in_the_learners_language(lessons, folder, tmp_path):
    for i, value in enumerate(("0/3", "4/3", "a/b", "3", "-1/3")):  # the first as a real process
        out = (grade if i == 0 else grade_here)(
            lessons, tmp_path, "probe", "--batch", str(folder), f"--shard={value}"
        )
        assert (
            out.returncode == 2
            and f"--shard takes K/N, shard K of N with 1 ≤ K ≤ N (e.g. 2/8), not {value}" in out.stderr
        ), (value, out.stderr)
        assert out.stdout == "" and "Traceback" not in out.stderr
    de = grade(lessons, tmp_path, "probe", "--batch", str(folder), "--shard", "4/3", lang="de")
    assert (
        de.returncode == 2
        and "--shard erwartet K/N, Teil K von N mit 1 ≤ K ≤ N (etwa 2/8), nicht 4/3" in de.stderr
    )
    alone = grade_here(lessons, tmp_path, "probe", "--shard", "1/3")
    assert alone.returncode == 2 and "--shard goes with --batch DIR" in alone.stderr
    no_id = grade_here(lessons, tmp_path)
    assert no_id.returncode == 2 and "grade needs an exercise id" in no_id.stderr


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_merge_refuses_what_cannot_be_joined_naming_the_report_and_the_place(reports, lessons, tmp_path):
    one, two, three = (json.loads(p.read_text(encoding="utf-8")) for p in reports)
    other = copy.deepcopy(two)
    other["exercise"] = "rope"
    for row in other["results"]:
        row["grade"]["exercise"] = "rope"
    status = copy.deepcopy(one)
    status["results"][0]["grade"]["status"] = "great"
    moved = copy.deepcopy(three)
    moved["results"][0]["file"] = "zz.py"  # a report edited by hand: the name is not of shard 3
    cut = reports[0].read_text(encoding="utf-8")[:300]
    empty = {
        "version": 1,
        "exercise": "probe",
        "checks_version": one["checks_version"],
        "shard": {"index": 4, "count": 4},
        "results": [],
    }  # 4/4 of FILES is empty
    cases = [
        (
            (_write(tmp_path / "other.json", other), reports[0]),
            "shard-1.json is a report of 'probe' but "
            + shown_name(str(tmp_path / "other.json"))
            + " of 'rope'",
        ),
        ((reports[0], reports[1], reports[0]), "is in both"),
        (
            (_write(tmp_path / "last.json", empty), _write(tmp_path / "again.json", empty)),
            "last.json and " + shown_name(str(tmp_path / "again.json")) + " are both shard 4/4",
        ),
        ((_write(tmp_path / "cut.json", cut),), "cut.json: not valid JSON at line "),
        (
            (_write(tmp_path / "status.json", status),),
            "status.json: results[0].grade.status: expected 'pass', 'fail', 'error' or 'timeout'",
        ),
        ((_write(tmp_path / "list.json", [1]),), "list.json: /: expected an object"),
        ((_write(tmp_path / "moved.json", moved),), "moved.json: zz.py is not in shard 3/3"),
        ((_write(tmp_path / "split.json", empty), reports[1]), "split.json is shard 4/4 but"),
        ((tmp_path / "missing.json",), "missing.json: no such file"),
    ]
    for paths, message in cases:  # in this process; the two below are real processes
        out = grade_here(lessons, tmp_path, "--merge", *map(str, paths))
        assert out.returncode == 2 and message in out.stderr, (paths, out.stderr)
        assert out.stdout == "" and "Traceback" not in out.stderr
    wrong_id = grade(lessons, tmp_path, "rope", "--merge", str(reports[0]))
    assert (
        wrong_id.returncode == 2 and "shard-1.json is a report of 'probe', not of 'rope'" in wrong_id.stderr
    )
    batch_too = grade(lessons, tmp_path, "probe", "--merge", str(reports[0]), "--batch", str(tmp_path))
    assert batch_too.returncode == 2 and "--merge joins reports" in batch_too.stderr


def test_a_fifo_given_as_a_report_is_refused_not_waited_on(lessons, tmp_path):
    fifo = tmp_path / "shard-1.json"
    os.mkfifo(fifo)  # no writer: reading it would wait for ever
    out = tutor(tmp_path, "--lessons", str(lessons), "grade", "--merge", str(fifo), timeout=30)
    assert out.returncode == 2 and f"{fifo} is a FIFO, not a regular file" in out.stderr, out.stderr


def test_missing_shards_are_a_warning_and_the_rest_is_merged(reports, whole, lessons, tmp_path):
    out = grade(lessons, tmp_path, "--merge", str(reports[0]), str(reports[2]), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert "warning: shard 2/3 not given (2 of 3): the merged report lacks its files" in out.stderr
    assert [r["file"] for r in json.loads(out.stdout)["results"]] == [
        r["file"] for r in whole["results"] if r["file"] != "hal.py"
    ]


# --- a merge recomputes what a report says ---------------------------------------------------------


def _edited(reports: list[Path], edit) -> dict:
    """Shard 1's report (fay.py's row is there: it failed `last`, 3/4) after `edit(report, fay's grade)`."""
    report = json.loads(reports[0].read_text(encoding="utf-8"))
    edit(report, next(r for r in report["results"] if r["file"] == "fay.py")["grade"])
    return report


def _fay(reports: list[Path]) -> int:
    return [r["file"] for r in json.loads(reports[0].read_text(encoding="utf-8"))["results"]].index("fay.py")


def test_a_row_edited_to_pass_is_merged_as_its_checks_give_with_a_warning(reports, whole, lessons, tmp_path):
    def to_pass(report, grade):
        grade.update(status="pass", score=4, max_score=4)
        for check in grade["checks"]:
            check["points"] = 1  # the failed check's too

    path = _write(tmp_path / "edited.json", _edited(reports, to_pass))
    out = grade(
        lessons,
        tmp_path / "home",
        "--merge",
        str(path),
        *map(str, reports[1:]),
        "--format",
        "json",
        "--export",
        str(tmp_path / "out"),
    )
    assert out.returncode == 0, out.stderr
    assert (
        f"warning: {shown_name(str(path))}: results[{_fay(reports)}] (fay.py) says pass 4/4, but its checks give"
        " fail 3/4: merged as its checks give (was the report edited?)"
    ) in out.stderr
    assert timeless(json.loads(out.stdout)) == timeless(whole)  # exactly what grading gave
    book = {r["file"]: r for r in csv.DictReader(io.StringIO((tmp_path / "out/gradebook.csv").read_text()))}
    assert (book["fay.py"]["status"], book["fay.py"]["total"], book["fay.py"]["max"]) == (
        "fail",
        "3.0",
        "4.0",
    )
    table = grade_here(lessons, tmp_path, "--merge", str(path), *map(str, reports[1:])).stdout
    assert re.search(r"^fay\.py +fail +3/4 +last ", table, flags=re.M), table


def test_merge_refuses_numbers_that_are_not_finite_or_out_of_range_naming_file_and_row(
    reports, lessons, tmp_path
):
    row = f"results[{_fay(reports)}]"
    cases = [  # (field of fay's grade, value, what the refusal says after "ROW.grade.FIELD (fay.py): ")
        ("score", 999, "expected a number from 0 to 4 (the points exercise.toml gives), got 999"),
        ("score", 1e308, "expected a number from 0 to 4 (the points exercise.toml gives), got 1e+308"),
        ("score", float("nan"), "expected a finite number, got NaN"),
        ("score", -1, "expected a number from 0 to 4 (the points exercise.toml gives), got -1"),
        ("max_score", float("inf"), "expected a finite number, got Infinity"),
        ("max_score", 400, "expected a number from 0 to 4 (the points exercise.toml gives), got 400"),
        ("duration_s", -0.5, "expected a number of at least 0, got -0.5"),
        ("checks[0].points", 5, "expected a number from 0 to 1 (the points exercise.toml gives), got 5"),
        ("checks[3].points", float("-inf"), "expected a finite number, got -Infinity"),
    ]
    for i, (key, value, says) in enumerate(cases):

        def put(report, grade, key=key, value=value):
            if key.startswith("checks["):
                grade["checks"][int(key[7])]["points"] = value
            else:
                grade[key] = value

        path = _write(
            tmp_path / f"edited{i}.json", json.dumps(_edited(reports, put))
        )  # NaN as JSON writes it
        out = (grade if i == 0 else grade_here)(
            lessons, tmp_path, "--merge", str(path), *map(str, reports[1:])
        )
        assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr, out.stderr
        assert (
            f"edited{i}.json: {row}.grade.{key} (fay.py): {says}; the report is not merged" in out.stderr
        ), (key, value, out.stderr)


def test_merge_refuses_missing_extra_or_repeated_checks(reports, lessons, tmp_path):
    row = f"results[{_fay(reports)}]"
    cases = [
        (
            lambda r, g: g["checks"].pop(),
            f"{row}.grade.checks (fay.py): 1 check of exercise 'probe' is missing: last",
        ),
        (
            lambda r, g: g["checks"].clear(),
            f"{row}.grade.checks (fay.py): 4 checks of exercise 'probe' are missing, the first add",
        ),
        (
            lambda r, g: g["checks"].append({**g["checks"][0], "name": "bonus"}),
            f"{row}.grade.checks[4].name (fay.py): bonus is not a check of exercise 'probe'",
        ),
        (
            lambda r, g: g["checks"].append(g["checks"][0]),
            f"{row}.grade.checks[4].name (fay.py): add is there twice",
        ),
    ]
    for i, (edit, says) in enumerate(cases):
        out = grade_here(
            lessons, tmp_path, "--merge", str(_write(tmp_path / f"c{i}.json", _edited(reports, edit)))
        )
        assert out.returncode == 2 and says in out.stderr, (says, out.stderr)


def test_merge_refuses_a_report_of_another_format_or_graded_by_other_checks(
    reports, whole, lessons, tmp_path
):
    row = f"results[{_fay(reports)}]"
    ours = whole["checks_version"]
    cases = [
        (lambda r, g: r.pop("version"), "version: expected 1, the format this tutor writes, got null"),
        (lambda r, g: r.update(version=2), "version: expected 1, the format this tutor writes, got 2"),
        (
            lambda r, g: g.pop("version"),
            f"{row}.grade.version: expected 1, the format this tutor writes, got null",
        ),
        (lambda r, g: r.pop("checks_version"), "checks_version: missing"),
        (
            lambda r, g: r.update(checks_version="0" * 16),
            f"was graded by other checks of 'probe' (checks version {'0' * 16}; this course's is {ours})",
        ),
    ]
    for i, (edit, says) in enumerate(cases):
        out = grade_here(
            lessons, tmp_path, "--merge", str(_write(tmp_path / f"v{i}.json", _edited(reports, edit)))
        )
        assert out.returncode == 2 and says in out.stderr, (says, out.stderr)
    # a course whose checks.py changed since the shards were graded: its merge refuses them, naming both versions
    files = {
        "exercise.toml": PROBE_TOML,
        "checks.py": PROBE_CHECKS + "\n# a changed check\n",
        "solution.py": SOLUTION,
        "starter.py": SOLUTION,
    }
    changed = exercise_course(tmp_path / "changed", files, shipped=False, order=1)
    out = grade(changed, tmp_path, "--merge", *map(str, reports), lang="de")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert (
        f"wurde mit anderen Prüfungen von „probe“ bewertet (Version der Prüfungen {ours}, die dieses Kurses "
        in out.stderr
    )


def test_a_message_edited_into_a_report_stays_one_line_in_every_merged_format(reports, lessons, tmp_path):
    forged = "wrong\n  ✓ last [last]  1/1\nPassed. See the reference solution: python -m tutor exercise solution probe"

    def edit(report, grade):
        grade["checks"][3]["message"] = forged
        grade["output"] = "\x1b]0;owned\x07\x1b[2J" + forged

    path = _write(tmp_path / "said.json", _edited(reports, edit))
    merged = grade_here(
        lessons, tmp_path, "--merge", str(path), "--format", "json", "--export", str(tmp_path / "out")
    )
    assert merged.returncode == 0, merged.stderr
    fay = next(r for r in json.loads(merged.stdout)["results"] if r["file"] == "fay.py")["grade"]
    assert fay["checks"][3]["message"] == forged.replace("\n", "↵") and "\x1b" not in fay["output"]
    feedback = (tmp_path / "out/feedback/fay.md").read_text(encoding="utf-8")
    checks, output = feedback.split("## Output of your code")
    assert (
        "\n  ✓ last" not in checks
        and "\nPassed." not in checks
        and "wrong↵  ✓ last [last]  1/1↵Passed." in checks
    )
    assert "```text\n" in output and "\x1b" not in output  # the output is fenced, as printed, cleaned
    table = grade_here(lessons, tmp_path, "--merge", str(path)).stdout.splitlines()
    assert len(table) == 2 + 4 + 2 and not [line for line in table if line.startswith(("  ✓", "Passed"))]


def test_a_row_whose_bytes_were_not_read_has_no_sha256_and_merges(reports, lessons, tmp_path):
    out = grade_here(
        lessons,
        tmp_path,
        "--merge",
        str(
            _write(
                tmp_path / "none.json",
                _edited(
                    reports,
                    lambda r, g: next(row for row in r["results"] if row["grade"] is g).update(sha256=None),
                ),
            )
        ),
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    assert next(r for r in json.loads(out.stdout)["results"] if r["file"] == "fay.py")["sha256"] is None


# --- docs/grading.md's recipes -------------------------------------------------------------------------------


def readme_block(lang: str, marker: str) -> str:
    """The one fenced block of docs/grading.md in `lang` that holds `marker`."""
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(rf"^```{lang}\n(.*?)^```$", text, flags=re.M | re.S) if marker in b]
    assert len(blocks) == 1, (lang, marker, len(blocks))
    return blocks[0]


def local(script: str, lessons: Path) -> str:
    """A recipe's script with `python -m tutor` run by this test's Python on the probe course."""
    assert script.count("python -m tutor ") == 1, script
    return script.replace("python -m tutor ", f"{PYTHON} -m tutor --lessons {lessons} ")


def run_shards(commands: list[tuple[list[str], dict[str, str]]]) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:  # as an engine would: several at once
        runs = [
            pool.submit(
                subprocess.run,
                argv,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
            for argv, env in commands
        ]
        for run in runs:
            done = run.result()
            assert done.returncode == 0, done.stderr


def merge_as_readme_says(course: Path, lessons: Path, whole: dict) -> None:
    script = course / "merge.sh"
    script.write_text(local(readme_block("bash", "--merge"), lessons), encoding="utf-8")
    env = {**run_tutor_env(course / "home"), "COURSE": str(course)}
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120)
    # no LMS roster: canvas.csv's and moodle-gradebook.csv's warnings come first
    assert done.returncode == 0 and done.stderr.splitlines()[-1].startswith("exports for 7 files"), (
        done.stderr
    )
    merged = json.loads((course / "grades.json").read_text(encoding="utf-8"))
    assert timeless(merged) == timeless(whole)
    assert {p.name for p in (course / "export").iterdir()} == {
        "checks.csv",
        "gradebook.csv",
        "feedback",
        "export.json",
        "canvas.csv",
        "moodle.csv",
        "gradescope",
        "exercism",
    }


def test_the_slurm_recipe_in_readme_runs_shard_by_shard_and_merges_to_the_whole(whole, lessons, tmp_path):
    script_text = readme_block("bash", "#SBATCH --array=")
    n = int(re.search(r"^#SBATCH --array=1-(\d+)$", script_text, flags=re.M)[1])
    course = tmp_path / "course"
    submissions(course / "submissions")
    script = tmp_path / "grade-shards.sh"
    script.write_text(local(script_text, lessons), encoding="utf-8")
    base = {**run_tutor_env(tmp_path / "home"), "COURSE": str(course), "EXERCISE": "probe"}
    slurm = {
        "SLURM_ARRAY_JOB_ID": "4242",
        "SLURM_ARRAY_TASK_COUNT": str(n),
        "SLURM_ARRAY_TASK_MIN": "1",
        "SLURM_ARRAY_TASK_MAX": str(n),
    }
    run_shards(
        [(["bash", str(script)], {**base, **slurm, "SLURM_ARRAY_TASK_ID": str(k)}) for k in range(1, n + 1)]
    )
    assert sorted(p.name for p in (course / "reports").iterdir()) == [
        f"shard-{k}.json" for k in range(1, n + 1)
    ]
    merge_as_readme_says(course, lessons, whole)


@pytest.mark.slow  # the Slurm recipe test runs docs/grading.md's shard-then-merge (the same merge block) by default
def test_the_kubernetes_recipe_in_readme_runs_pod_by_pod_and_merges_to_the_whole(whole, lessons, tmp_path):
    job = yaml.safe_load(readme_block("yaml", "completionMode: Indexed"))
    assert (job["apiVersion"], job["kind"], job["spec"]["completionMode"]) == ("batch/v1", "Job", "Indexed")
    n = job["spec"]["completions"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["SHARDS"] == str(n)
    (mount,) = container["volumeMounts"]
    assert env["COURSE"] == mount["mountPath"]  # the shared volume; here, a local folder in its place
    course = tmp_path / "course"
    submissions(course / "submissions")
    argv = [*container["command"], *(local(a, lessons) for a in container["args"])]
    base = {**run_tutor_env(tmp_path / "home"), **env, "COURSE": str(course), "EXERCISE": "probe"}
    run_shards([(argv, {**base, "JOB_COMPLETION_INDEX": str(i)}) for i in range(n)])
    assert sorted(p.name for p in (course / "reports").iterdir()) == [
        f"shard-{k}.json" for k in range(1, n + 1)
    ]
    merge_as_readme_says(course, lessons, whole)
