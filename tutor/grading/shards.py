"""A batch in shards, and shard reports merged (`grade ID --batch DIR --shard K/N`, `grade --merge`).

A shard is a deterministic slice of a folder: an entry is in shard `batch.shard_of(name, N)`, worked
out from its name alone, so every machine that grades a shard of the same folder agrees on which files
it has, whatever else is in the folder. A shard's JSON report is the batch report with one more key,
`"shard": {"index": K, "count": N}`, after "exercise". A report without that key (a whole folder's)
counts as shard 1/1.

`merge_reports` joins reports into the report of the whole folder: the same JSON, rows in the batch's
order (by the file's name on disk, which `batch.raw_name` recovers from the name a report shows), every
grade passed through as it was read. Reports are the instructor's files, still checked before they are
trusted: each must be a grade report of the same exercise, a file may be in one report only, each file
must belong to the shard its report says, and a shard may be given once. Every refusal names the
report file and the place in it (`results[3].grade.status`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.batch import BatchRow, raw_name, shard_of, shown_name
from tutor.grading.result import GradeResult
from tutor.grading.safe_read import read_instructor_file
from tutor.i18n import pick
from tutor.texts import say

_SHARD = re.compile(r"(\d{1,9})/(\d{1,9})")
# pydantic's error types, as the words of a refusal (the rest are "not a valid value")
_WANT = {
    "missing": "missing",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "list_type": "list",
    "string_type": "text",
    "float_type": "number",
    "int_type": "whole",
    "bool_type": "boolean",
    "literal_error": "choice",
    "extra_forbidden": "unknown",
}


def parse_shard(text: str, lang: str) -> tuple[int, int]:
    """`K/N` as (K, N), 1 ≤ K ≤ N; anything else is a usage error in the learner's language."""
    found = _SHARD.fullmatch(text.strip())
    if found is None or not 1 <= int(found[1]) <= int(found[2]):
        raise TutorError(say("grade.usage.shard", lang, got=shown_name(text)))
    return int(found[1]), int(found[2])


def shard_json(ex: Exercise, rows: list[BatchRow], shard: tuple[int, int]) -> str:
    """A shard's report: the batch report (batch.to_json) with `"shard": {"index", "count"}` after
    "exercise"."""
    from tutor.grading.batch import to_json

    data = {}
    for key, value in json.loads(to_json(ex, rows)).items():
        data[key] = value
        if key == "exercise":
            data["shard"] = {"index": shard[0], "count": shard[1]}
    return json.dumps(data, ensure_ascii=False, indent=2)


def report_json(exercise: str, results: list[dict]) -> str:
    """A whole folder's report, written exactly as batch.to_json writes it."""
    return json.dumps({"exercise": exercise, "results": results}, ensure_ascii=False, indent=2)


@dataclass
class Report:
    path: str  # as messages show it
    exercise: str
    shard: tuple[int, int] | None
    results: list[dict] = field(default_factory=list)


@dataclass
class Merged:
    exercise: str
    results: list[dict]  # the rows, in the batch's order, as read
    warnings: list[str]


def _bad(path: str, where: str, want: str, lang: str, **values) -> TutorError:
    problem = say(f"grade.merge.want.{want}", lang, **values)
    return TutorError(say("grade.merge.bad", lang, file=path, where=where or "/", problem=problem))


def _where(loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def read_report(path: Path, lang: str) -> Report:
    """One report file, checked: JSON, a grade report's shape, every grade a grade of DESIGN.md."""
    shown = shown_name(str(path))
    data = _json_object(read_instructor_file(path, shown, lang), shown, lang)
    exercise, shard = _header(data, shown, lang)
    results = data.get("results")
    if not isinstance(results, list):
        raise _bad(shown, "results", "missing" if results is None else "list", lang)
    seen: set[str] = set()
    for i, row in enumerate(results):
        where = f"results[{i}]"
        name = _row_file(row, where, shown, lang)
        if name in seen:
            raise TutorError(say("grade.merge.twice_in", lang, name=name, file=shown))
        seen.add(name)
        _check_grade(row, where, exercise, shown, lang)
        if shard is not None and shard_of(raw_name(name), shard[1]) != shard[0]:
            raise TutorError(
                say("grade.merge.wrong_shard", lang, file=shown, name=name, k=shard[0], n=shard[1])
            )
    return Report(shown, exercise, shard, results)


def _json_object(text: str, shown: str, lang: str) -> dict:
    """The report's text as a JSON object with no key but a report's."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise TutorError(
            say("grade.merge.not_json", lang, file=shown, line=err.lineno, column=err.colno, error=err.msg)
        ) from None
    except RecursionError:
        raise TutorError(
            say("grade.merge.not_json", lang, file=shown, line=1, column=1, error="nesting")
        ) from None
    if not isinstance(data, dict):
        raise _bad(shown, "", "object", lang)
    for key in data:
        if key not in ("exercise", "shard", "results"):
            raise _bad(shown, str(key), "unknown", lang)
    return data


def _header(data: dict, shown: str, lang: str) -> tuple[str, tuple[int, int] | None]:
    """The report's exercise, and its shard (K, N) when it names one."""
    exercise = data.get("exercise")
    if not isinstance(exercise, str) or not exercise:
        raise _bad(shown, "exercise", "missing" if exercise is None else "text", lang)
    if "shard" not in data:
        return exercise, None
    value = data["shard"]
    if not (isinstance(value, dict) and set(value) == {"index", "count"}
            and all(type(v) is int for v in value.values()) and 1 <= value["index"] <= value["count"]):  # fmt: skip
        raise _bad(shown, "shard", "shard", lang)
    return exercise, (value["index"], value["count"])


def _row_file(row, where: str, shown: str, lang: str) -> str:
    """A row's file name, once the row is an object of exactly "file", "sha256" and "grade"."""
    if not isinstance(row, dict):
        raise _bad(shown, where, "object", lang)
    for key in ("file", "sha256", "grade"):
        if key not in row:
            raise _bad(shown, f"{where}.{key}", "missing", lang)
    for key in row:
        if key not in ("file", "sha256", "grade"):
            raise _bad(shown, f"{where}.{key}", "unknown", lang)
    name = row["file"]
    if not isinstance(name, str) or not name.endswith(".py") or "/" in name or raw_name(name) is None:
        raise _bad(shown, f"{where}.file", "name", lang)
    return name


def _check_grade(row: dict, where: str, exercise: str, shown: str, lang: str) -> None:
    """A row's sha256 and grade: a grade of DESIGN.md, of the report's exercise."""
    if not isinstance(row["sha256"], str) or not re.fullmatch(r"[0-9a-f]{64}", row["sha256"]):
        raise _bad(shown, f"{where}.sha256", "sha256", lang)
    try:
        grade = GradeResult.model_validate(row["grade"], strict=True)
    except ValidationError as err:
        first = err.errors()[0]
        want = _WANT.get(first["type"], "valid")
        choices = str(first.get("ctx", {}).get("expected", ""))
        raise _bad(shown, _where((where, "grade", *first["loc"])), want, lang, choices=choices) from None
    if grade.exercise != exercise:
        raise _bad(shown, f"{where}.grade.exercise", "choice", lang, choices=repr(exercise))


def merge_reports(reports: list[Report], lang: str, exercise: str | None = None) -> Merged:
    """The reports joined into one whole-folder report; refuses what cannot be joined, and warns
    (Merged.warnings) when shards of the split are missing."""
    first = reports[0]
    want = exercise or first.exercise
    for report in reports:
        if report.exercise == want:
            continue
        if exercise is not None:  # the ID given on the command line
            raise TutorError(say("grade.merge.not_this_exercise", lang, file=report.path, got=report.exercise,
                                 id=want))  # fmt: skip
        raise TutorError(say("grade.merge.other_exercise", lang, file=report.path, got=report.exercise,
                             first=first.path, want=want))  # fmt: skip
    where: dict[str, str] = {}  # file -> the report it is in
    for report in reports:
        for row in report.results:
            if row["file"] in where:
                raise TutorError(say("grade.merge.twice", lang, name=row["file"], first=where[row["file"]],
                                     second=report.path))  # fmt: skip
            where[row["file"]] = report.path
    shards: dict[tuple[int, int], str] = {}
    for report in reports:
        shard = report.shard or (1, 1)
        if shard in shards:
            raise TutorError(say("grade.merge.same_shard", lang, first=shards[shard], second=report.path,
                                 k=shard[0], n=shard[1]))  # fmt: skip
        for (k, n), path in shards.items():
            if n != shard[1]:
                raise TutorError(say("grade.merge.other_split", lang, first=path, k=k, n=n, second=report.path,
                                     k2=shard[0], n2=shard[1]))  # fmt: skip
        shards[shard] = report.path
    count = next(iter(shards))[1]
    missing = [k for k in range(1, count + 1) if (k, count) not in shards]
    warnings = []
    if missing:
        shown = say("word.list_sep", lang).join(f"{k}/{count}" for k in missing)
        warnings.append(say("grade.merge.missing_shards", lang, shards=shown, given=len(shards), total=count,
                            n=len(missing)))  # fmt: skip
    rows = [row for report in reports for row in report.results]
    rows.sort(key=lambda row: raw_name(row["file"]))
    return Merged(want, rows, warnings)


def check_names(ex: Exercise, reports: list[Report], lang: str) -> None:
    """Every check a report names is a check of `ex` (a report of another version of the exercise is
    refused rather than exported with checks the course does not know)."""
    known = {decl.id for decl in ex.checks}
    for report in reports:
        for i, row in enumerate(report.results):
            for j, check in enumerate(row["grade"]["checks"]):
                if check["name"] not in known:
                    raise _bad(report.path, f"results[{i}].grade.checks[{j}].name", "check", lang,
                               name=shown_name(check["name"]), id=ex.id)  # fmt: skip


def batch_rows(ex: Exercise, results: list[dict], lang: str) -> list[BatchRow]:
    """Merged rows as batch.grade_folder returns them: each check's title and most points from the
    exercise, in `lang` (the JSON keeps neither)."""
    decls = {decl.id: decl for decl in ex.checks}
    rows = []
    for row in results:
        grade = GradeResult.model_validate(row["grade"])
        for check in grade.checks:
            decl = decls[check.name]
            check.max_points, check.title = decl.points, pick(decl.title, lang)
        rows.append(BatchRow(row["file"], row["sha256"], grade))
    return rows
