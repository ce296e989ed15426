"""docs/schemas hold the grade JSON and the batch/shard report formats (docs/formats.md): real reports,
made by the real CLI on a course exercise, are valid against them, and the schemas name every field the
code writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tutor.grading.result import CheckResult, GradeResult

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "docs" / "schemas"
SPLIT = ROOT / "tutor" / "lessons" / "01-multi-head" / "exercises" / "split-heads"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


REGISTRY = Registry().with_resources(
    (name, Resource.from_contents(_schema(name))) for name in ("grade.schema.json", "report.schema.json")
)


def _errors(data: object, name: str) -> list[str]:
    validator = Draft202012Validator(_schema(name), registry=REGISTRY)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]


def _tutor(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TUTOR_HOME": str(home), "TUTOR_LANG": "en"}
    return subprocess.run(
        [sys.executable, "-m", "tutor", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, object]:
    """A pass and a fail graded alone, then a folder of five kinds of entry whole, in two shards and merged."""
    base = tmp_path_factory.mktemp("formats")
    home, folder = base / "home", base / "subs"
    folder.mkdir()
    (folder / "ana.py").write_text((SPLIT / "solution.py").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "bo.py").write_text((SPLIT / "starter.py").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "cy.py").write_text("def split_heads(x, n_head)\n", encoding="utf-8")  # a syntax error
    (folder / "di.py").symlink_to(SPLIT / "solution.py")
    (folder / "ed.py").write_bytes(b"\xff\xfe not text")
    runs = {
        "pass": ("grade", "split-heads", str(folder / "ana.py"), "--json"),
        "fail": ("grade", "split-heads", str(folder / "bo.py"), "--json"),
        "batch": ("grade", "split-heads", "--batch", str(folder), "--format", "json"),
        **{
            f"shard{k}": (
                "grade",
                "split-heads",
                "--batch",
                str(folder),
                "--shard",
                f"{k}/2",
                "--format",
                "json",
            )
            for k in (1, 2)
        },
    }
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:  # independent runs, at once
        made: dict[str, object] = dict(
            zip(runs, pool.map(lambda a: json.loads(_tutor(home, *a).stdout), runs.values()), strict=True)
        )
    shards = [base / "shard1.json", base / "shard2.json"]
    for k, path in enumerate(shards, 1):
        path.write_text(json.dumps(made[f"shard{k}"]), encoding="utf-8")
    made["merged"] = json.loads(
        _tutor(home, "grade", "--merge", *map(str, shards), "--format", "json").stdout
    )
    return made


def test_single_grades_are_valid_grade_json(reports):
    assert reports["pass"]["status"] == "pass" and reports["fail"]["status"] == "fail"
    for name in ("pass", "fail"):
        assert _errors(reports[name], "grade.schema.json") == [], name


def test_batch_shard_and_merged_reports_are_valid_reports(reports):
    statuses = {row["grade"]["status"] for row in reports["batch"]["results"]}
    assert {"pass", "fail", "error"} <= statuses  # every kind of row is in what was checked
    assert "shard" in reports["shard1"] and "shard" not in reports["merged"]
    for name in ("batch", "shard1", "shard2", "merged"):
        assert _errors(reports[name], "report.schema.json") == [], name


def test_the_report_schema_names_every_key_of_a_row_and_its_provenance(reports):
    row = _schema("report.schema.json")["properties"]["results"]["items"]["properties"]
    assert all(set(r) == set(row) for r in reports["batch"]["results"])
    forged = json.loads(json.dumps(reports["batch"]))
    forged["results"][0]["submitted_from"] = "mtime"  # a file's own time is never a submission time
    forged["results"][0]["owner"] = {"id": "ana", "from": "zip-member"}
    assert len(_errors(forged, "report.schema.json")) == 2


def test_a_report_that_breaks_the_format_is_invalid(reports):
    forged = json.loads(json.dumps(reports["pass"]))
    forged["status"], forged["checks"][0]["points"], forged["version"] = "passed", -1, 2
    assert len(_errors(forged, "grade.schema.json")) == 3


def test_the_schema_names_every_field_the_grade_model_writes():
    grade = _schema("grade.schema.json")
    written = {name for name, f in GradeResult.model_fields.items() if not f.exclude}
    assert set(grade["properties"]) == written == set(grade["required"])
    check = grade["properties"]["checks"]["items"]
    assert set(check["properties"]) == set(CheckResult.model_fields) == set(check["required"])
    assert all(spec.get("description") for spec in grade["properties"].values())
