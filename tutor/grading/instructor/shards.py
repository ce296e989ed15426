"""A batch in shards, and shard reports merged (`grade ID --batch DIR --shard K/N`, `grade --merge`).

A shard is a deterministic slice of a folder: an entry is in shard `batch.shard_of(name, N)`, worked
out from its name alone, so every machine that grades a shard of the same folder agrees on which files
it has, whatever else is in the folder. A shard's JSON report is the batch report with one more key,
`"shard": {"index": K, "count": N}`, after "exercise". A report without that key (a whole folder's)
counts as shard 1/1.

`merge_reports` joins reports into the report of the whole folder: the same JSON, rows in the batch's
order (by the file's name on disk, which `batch.raw_name` recovers from the name a report shows).
Reports are the instructor's files, still checked before they are trusted: each must be a grade report
of this format (`version`), of the same exercise, graded by the course's own checks (`checks_version`,
batch.checks_version), a file may be in one report only, each file must belong to the shard its report
says, and a shard may be given once. Every refusal names the report file and the place in it
(`results[3].grade.status`).

A report's verdicts are not taken as written (`recompute`): every row's status, score and maximum, and
every check's points, come from its checks' statuses and the exercise's points in the course's
exercise.toml. A row whose checks are not exactly the exercise's (one missing, one unknown, one twice),
or with a number that is not finite or out of its range (a score above the exercise's points, points
above the check's), refuses the report; a row whose own figures differ from what its checks give is
merged as its checks give, with a warning naming it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from pydantic import ValidationError

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.instructor.batch import BatchRow, checks_version, raw_name, shard_of, shown_name
from tutor.grading.result import VERSION, GradeResult
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


def shard_json(
    ex: Exercise, rows: list[BatchRow], shard: tuple[int, int], graded_at: str | None = None
) -> str:
    """A shard's report: the batch report (batch.to_json) with `"shard": {"index", "count"}` after
    "checks_version"."""
    from tutor.grading.instructor.batch import to_json

    data = {}
    for key, value in json.loads(to_json(ex, rows, graded_at)).items():
        data[key] = value
        if key == "checks_version":
            data["shard"] = {"index": shard[0], "count": shard[1]}
    return json.dumps(data, ensure_ascii=False, indent=2)


def report_json(exercise: str, checks: str, results: list[dict], graded_at: str) -> str:
    """A whole folder's report, written exactly as batch.to_json writes it (`checks`: its checks_version,
    `graded_at`: the latest of its shards')."""
    from tutor import __version__

    data = {
        "version": VERSION,
        "exercise": exercise,
        "checks_version": checks,
        "tutor_version": __version__,
        "graded_at": graded_at,
        "results": results,
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


@dataclass
class Report:
    path: str  # as messages show it
    exercise: str
    checks_version: str
    shard: tuple[int, int] | None
    results: list[dict] = field(default_factory=list)
    graded_at: str = ""  # "" in a report written before reports said it


@dataclass
class Merged:
    exercise: str
    results: list[dict]  # the rows, in the batch's order, as read
    warnings: list[str]
    graded_at: str = ""  # the latest of the reports'


def _bad(path: str, where: str, want: str, lang: str, **values) -> TutorError:
    problem = say(f"grade.merge.want.{want}", lang, **values)
    return TutorError(say("grade.merge.bad", lang, file=path, where=where or "/", problem=problem))


def _where(loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def read_report(path: Path, lang: str) -> Report:
    """One report file, checked: JSON, a grade report's shape, every grade a grade of docs/formats.md."""
    shown = shown_name(str(path))
    data = _json_object(read_instructor_file(path, shown, lang), shown, lang)
    exercise, checks, shard = _header(data, shown, lang)
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
        if shard is not None and shard_of(cast(str, raw_name(name)), shard[1]) != shard[0]:
            raise TutorError(
                say("grade.merge.wrong_shard", lang, file=shown, name=name, k=shard[0], n=shard[1])
            )
    graded_at = data.get("graded_at", "")
    if not isinstance(graded_at, str) or not re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)?", graded_at):
        raise _bad(shown, "graded_at", "time", lang)
    if not isinstance(data.get("tutor_version", ""), str):
        raise _bad(shown, "tutor_version", "text", lang)
    return Report(shown, exercise, checks, shard, results, graded_at)


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
        if key not in (
            "version",
            "exercise",
            "checks_version",
            "tutor_version",
            "graded_at",
            "shard",
            "results",
        ):
            raise _bad(shown, str(key), "unknown", lang)
    return data


def _header(data: dict, shown: str, lang: str) -> tuple[str, str, tuple[int, int] | None]:
    """The report's exercise, its checks' version, and its shard (K, N) when it names one; a report of
    another format (`version`) is refused."""
    if "version" not in data or type(data["version"]) is not int or data["version"] != VERSION:
        raise _bad(shown, "version", "version", lang, expected=VERSION, got=_shown(data.get("version")))
    exercise = data.get("exercise")
    if not isinstance(exercise, str) or not exercise:
        raise _bad(shown, "exercise", "missing" if exercise is None else "text", lang)
    checks = data.get("checks_version")
    if not isinstance(checks, str) or not re.fullmatch(r"[0-9a-f]{16}", checks):
        raise _bad(shown, "checks_version", "missing" if checks is None else "checks_version", lang)
    if "shard" not in data:
        return exercise, checks, None
    value = data["shard"]
    if not (
        isinstance(value, dict)
        and set(value) == {"index", "count"}
        and all(type(v) is int for v in value.values())
        and 1 <= value["index"] <= value["count"]
    ):
        raise _bad(shown, "shard", "shard", lang)
    return exercise, checks, (value["index"], value["count"])


def _row_file(row, where: str, shown: str, lang: str) -> str:
    """A row's file name, once the row is an object of exactly "file", "sha256" and "grade"."""
    if not isinstance(row, dict):
        raise _bad(shown, where, "object", lang)
    for key in ("file", "sha256", "grade"):
        if key not in row:
            raise _bad(shown, f"{where}.{key}", "missing", lang)
    for key in row:
        if key not in ("file", "sha256", "owner", "submitted", "submitted_from", "file_time", "grade"):
            raise _bad(shown, f"{where}.{key}", "unknown", lang)
    if not _provenance_ok(row):
        raise _bad(shown, f"{where}.submitted", "submitted", lang)
    name = row["file"]
    if (
        not isinstance(name, str)
        or not name.endswith((".py", ".zip"))
        or any(part in ("", ".", "..") for part in name.split("/"))
        or raw_name(name) is None
    ):
        raise _bad(shown, f"{where}.file", "name", lang)
    return name


def _provenance_ok(row: dict) -> bool:
    """A row's provenance keys as BatchRow.provenance_json writes them (and earlier reports' "submitted",
    from "name", "manifest" or "mtime")."""
    from tutor.grading.instructor.provenance import OWNER_SOURCES, TIME_SOURCES

    def when(value) -> bool:
        return isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value) is not None

    submitted, owner = row.get("submitted"), row.get("owner")
    return (
        (
            submitted is None
            or (
                isinstance(submitted, dict)
                and set(submitted) == {"time", "from"}
                and submitted["from"] in ("name", "mtime", *TIME_SOURCES)
                and when(submitted["time"])
            )
        )
        and row.get("submitted_from", "none") in TIME_SOURCES
        and (row.get("file_time") is None or when(row["file_time"]))
        and (
            owner is None
            or (
                isinstance(owner, dict)
                and set(owner) == {"id", "from"}
                and isinstance(owner["id"], str)
                and owner["from"] in OWNER_SOURCES
            )
        )
    )


def _check_grade(row: dict, where: str, exercise: str, shown: str, lang: str) -> None:
    """A row's sha256 (None: its bytes were not read) and grade: a grade of docs/formats.md, of this format
    and of the report's exercise."""
    sha256 = row["sha256"]
    if sha256 is not None and not (isinstance(sha256, str) and re.fullmatch(r"[0-9a-f]{64}", sha256)):
        raise _bad(shown, f"{where}.sha256", "sha256", lang)
    said = row["grade"].get("version") if isinstance(row["grade"], dict) else VERSION
    if type(said) is not int or said != VERSION:
        raise _bad(shown, f"{where}.grade.version", "version", lang, expected=VERSION, got=_shown(said))
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
    want = exercise or reports[0].exercise
    _one_exercise(reports, want, exercise is not None, lang)
    _each_file_once(reports, lang)
    shards = _one_split(reports, lang)
    count = next(iter(shards))[1]
    missing = [k for k in range(1, count + 1) if (k, count) not in shards]
    warnings = []
    if missing:
        shown = say("word.list_sep", lang).join(f"{k}/{count}" for k in missing)
        said = {"shards": shown, "given": len(shards), "total": count, "n": len(missing)}
        warnings.append(say("grade.merge.missing_shards", lang, **said))
    rows = [row for report in reports for row in report.results]
    rows.sort(key=lambda row: cast(str, raw_name(row["file"])))  # read_report checked each name
    return Merged(want, rows, warnings, max(report.graded_at for report in reports))


def _one_exercise(reports: list[Report], want: str, given: bool, lang: str) -> None:
    """Refuse a report of another exercise than `want` (the one given on the command line when `given`,
    else the first report's)."""
    for report in reports:
        if report.exercise == want:
            continue
        if given:
            said = {"file": report.path, "got": report.exercise, "id": want}
            raise TutorError(say("grade.merge.not_this_exercise", lang, **said))
        said = {"file": report.path, "got": report.exercise, "first": reports[0].path, "want": want}
        raise TutorError(say("grade.merge.other_exercise", lang, **said))


def _each_file_once(reports: list[Report], lang: str) -> None:
    """Refuse a file graded in two reports."""
    where: dict[str, str] = {}  # file -> the report it is in
    for report in reports:
        for row in report.results:
            if row["file"] in where:
                said = {"name": row["file"], "first": where[row["file"]], "second": report.path}
                raise TutorError(say("grade.merge.twice", lang, **said))
            where[row["file"]] = report.path


def _one_split(reports: list[Report], lang: str) -> dict[tuple[int, int], str]:
    """{(k, n): report} for the reports' shards; refuses a shard given twice and shards of two splits."""
    shards: dict[tuple[int, int], str] = {}
    for report in reports:
        shard = report.shard or (1, 1)
        if shard in shards:
            said = {"first": shards[shard], "second": report.path, "k": shard[0], "n": shard[1]}
            raise TutorError(say("grade.merge.same_shard", lang, **said))
        for (k, n), path in shards.items():
            if n != shard[1]:
                said = {"first": path, "k": k, "n": n, "second": report.path, "k2": shard[0], "n2": shard[1]}
                raise TutorError(say("grade.merge.other_split", lang, **said))
        shards[shard] = report.path
    return shards


def _shown(value) -> str:
    """A value read from a report, for a message: short, one line."""
    return shown_name(
        json.dumps(value) if value is None or isinstance(value, bool | int | float) else repr(value)
    )[:40]


def recompute(ex: Exercise, reports: list[Report], lang: str) -> list[str]:
    """Every row of `reports` given the grade its checks give (in place: the merged rows are these):
    each check's points from its status and the exercise's points, the row's score, maximum and
    status from its checks. Refuses a report graded by other checks (checks_version), a row whose
    checks are not exactly the exercise's, and a number that is not finite or out of its range. Returns
    a warning for every row whose own figures were not what its checks give."""
    want = checks_version(ex)
    warnings = []
    for report in reports:
        if report.checks_version != want:
            raise TutorError(
                say(
                    "grade.merge.checks_version",
                    lang,
                    file=report.path,
                    id=ex.id,
                    got=report.checks_version,
                    want=want,
                )
            )
        for i, row in enumerate(report.results):
            grade, warning = _recomputed(ex, row, f"results[{i}]", report.path, lang)
            row["grade"] = grade
            if warning is not None:
                warnings.append(warning)
    return warnings


def _recomputed(ex: Exercise, row: dict, where: str, path: str, lang: str) -> tuple[dict, str | None]:
    """The grade JSON of one row as its checks give it, and a warning if the row said otherwise."""
    grade, name = row["grade"], row["file"]

    def bad(at: str, want: str, **values) -> TutorError:
        problem = say(f"grade.merge.want.{want}", lang, **values)
        return TutorError(
            say(
                "grade.merge.bad_row", lang, file=path, where=f"{where}.grade{at}", name=name, problem=problem
            )
        )

    def number(value: float, at: str, high: float | None) -> None:  # high None: no upper bound
        if not math.isfinite(value):
            raise bad(at, "finite", got=_shown(value))
        if high is None and value < 0:
            raise bad(at, "at_least", low=0, got=_shown(value))
        if high is not None and not 0 <= value <= high:
            raise bad(at, "range", low=0, high=f"{high:g}", got=_shown(value))

    decls = {decl.id: decl for decl in ex.checks}
    top = sum(decl.points for decl in ex.checks)
    checks: dict[str, dict] = {}
    for j, check in enumerate(grade["checks"]):
        if check["name"] not in decls:
            raise bad(f".checks[{j}].name", "check", name=shown_name(check["name"]), id=ex.id)
        if check["name"] in checks:
            raise bad(f".checks[{j}].name", "check_twice", name=shown_name(check["name"]))
        number(check["points"], f".checks[{j}].points", decls[check["name"]].points)
        checks[check["name"]] = check
    missing = [decl.id for decl in ex.checks if decl.id not in checks]
    if missing:
        raise bad(".checks", "check_missing", name=missing[0], id=ex.id, n=len(missing))
    number(grade["score"], ".score", top)
    number(grade["max_score"], ".max_score", top)
    number(grade["duration_s"], ".duration_s", None)
    ordered = [
        {
            **checks[decl.id],
            "title": pick(decl.title, lang),
            "max_points": decl.points,
            "points": decl.points if checks[decl.id]["status"] == "pass" else 0,
        }
        for decl in ex.checks
    ]
    score = sum(check["points"] for check in ordered)
    status = row_status([check["status"] for check in ordered], grade["status"])
    out = GradeResult.model_validate(
        {**grade, "checks": ordered, "score": score, "max_score": top, "status": status}
    ).to_json()
    said = (grade["status"], grade["score"], grade["max_score"], [c["points"] for c in grade["checks"]])
    if said == (status, score, top, [c["points"] for c in ordered]):
        return out, None
    figures = {"said": _figures(grade, lang), "got": _figures(out, lang)}
    return out, say("grade.merge.recomputed", lang, file=path, where=where, name=name, **figures)


def _figures(grade: dict, lang: str) -> str:
    """A row's verdict as a table shows it: `fail 4/6`."""
    verdict = say(f"grade.verdict.{grade['status']}", lang)
    return f"{verdict} {grade['score']:g}/{grade['max_score']:g}"


def row_status(checks: list[str], said: str) -> str:
    """A grade's status from its checks' statuses (in the exercise's order): pass when every check
    passed; timeout when one ran out of time; error when the grade stopped before a check ran (a
    skipped check). Otherwise fail, or error when the last check is an error (the grade stopped in it,
    which the checks alone cannot tell from a check the learner's code failed): then `said`, the
    report's status, decides between the two."""
    if all(status == "pass" for status in checks):
        return "pass"
    if "timeout" in checks:
        return "timeout"
    if "skipped" in checks:
        return "error"
    if checks[-1] == "error" and said == "error":
        return "error"
    return "fail"


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
        when = row.get("submitted") or {}
        # a manifest's time stays; every other is the provenance's to find again (an earlier report's
        # "mtime" is the file's own time, never a submission time)
        manifest = _stamp(when["time"]) if when.get("from") == "manifest" else None
        own = row.get("file_time") or (when["time"] if when.get("from") == "mtime" else None)
        rows.append(
            BatchRow(
                row["file"],
                row["sha256"],
                grade,
                manifest,
                "manifest" if manifest else None,
                _stamp(own) if own else None,
            )
        )
    return rows


def _stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
