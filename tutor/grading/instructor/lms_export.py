"""The exports an LMS imports as they are, beside the tutor's own (tutor.grading.instructor.export):

    OUT/canvas.csv               Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID,
                                 Section, then one column for the assignment ("Name (ID)" to fill an
                                 assignment Canvas has, a plain name to make a new one), after a
                                 "Points Possible" line
    OUT/moodle.csv               Moodle's grading worksheet (Assignment > Upload grading worksheet):
                                 Identifier ("Participant N"), Full name, Email address, Grade, Maximum
                                 Grade, Feedback comments
    OUT/gradescope/<id>.json     Gradescope's autograder results.json for the student's file: score,
                                 execution_time, output, visibility, tests [{score, max_score, name,
                                 number, output, visibility, status}]
    OUT/exercism/<id>.json       exercism's test runner results.json, version 3: version, status,
                                 message (an error's), tests [{name, status, message, output, test_code,
                                 task_id}]

Totals are the exercise's points, or scaled to `points` (the assignment's maximum in the LMS) when it is
given. A rostered student without a file has 0 points in both CSVs and no results.json. Text cells go
through batch.csv_cell, as every CSV of the tutor's does.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from atomicio import atomic_write_text
from tutor.content.schema import Exercise
from tutor.grading.instructor.roster import Graded
from tutor.grading.result import GradeResult
from tutor.grading.text import did_not_load
from tutor.i18n import pick
from tutor.texts import say

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Feedback comments")
OUTPUT_LIMIT = 500  # exercism's: a test's output is cut there, and says so


def scaled(score: float, top: float, points: float | None) -> float:
    """`score` of `top` as points of `points` (None: as it is), rounded to 2 places."""
    if points is None or not top:
        return score
    return round(score / top * points, 2)


def _lms(student) -> dict[str, str]:
    return dict(student.lms)


def canvas_rows(ex: Exercise, graded: list[Graded], column: str, points: float | None) -> list[dict]:
    top = float(sum(decl.points for decl in ex.checks))
    rows = [{**dict.fromkeys(CANVAS_COLUMNS, ""), "Student": "    Points Possible", column: points or top}]
    for entry in graded:
        cells = _lms(entry.student)
        score = entry.row.result.score if entry.row is not None else 0.0
        rows.append({"Student": entry.student.name or entry.student.id, "ID": cells.get("ID", entry.student.id),
                     "SIS User ID": cells.get("SIS User ID", ""), "SIS Login ID": cells.get("SIS Login ID", ""),
                     "Section": cells.get("Section", ""), column: scaled(score, top, points)})  # fmt: skip
    return rows


def moodle_rows(ex: Exercise, graded: list[Graded], points: float | None, lang: str) -> list[dict]:
    top = float(sum(decl.points for decl in ex.checks))
    rows = []
    for entry in graded:
        cells, result = _lms(entry.student), entry.row.result if entry.row is not None else None
        identifier = cells.get("Identifier") or f"Participant {entry.student.id}"
        score = result.score if result is not None else 0.0
        comment = (
            say(f"grade.status.{result.status}", lang)
            if result is not None
            else say("grade.lms.missing", lang)
        )
        rows.append({"Identifier": identifier, "Full name": entry.student.name or entry.student.id,
                     "Email address": cells.get("Email address", ""), "Grade": scaled(score, top, points),
                     "Maximum Grade": points or top, "Feedback comments": comment})  # fmt: skip
    return rows


def gradescope_json(ex: Exercise, result: GradeResult, points: float | None, lang: str) -> dict:
    """Gradescope's results.json of one grade (its autograder's documented fields)."""
    first = result.first_failure
    tests = []
    for number, check in enumerate(result.checks, 1):
        output = check.message
        if first is not None and check.name == first.name and check.hint and not did_not_load(result):
            output += "\n" + say(
                "word.labelled", lang, label=say("grade.export.md.hint", lang), text=check.hint
            )
        tests.append({"score": float(check.points), "max_score": float(check.max_points), "name": check.title or check.name,
                      "number": str(number), "output": output, "visibility": "visible",
                      "status": "passed" if check.status == "pass" else "failed"})  # fmt: skip
    summary = f"{say(f'grade.status.{result.status}', lang)} {result.score:g}/{result.max_score:g}"
    if did_not_load(result):
        summary += "\n" + result.checks[0].message
    return {"score": scaled(result.score, result.max_score, points), "execution_time": result.duration_s,
            "output": summary, "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}  # fmt: skip


def _cut(text: str, lang: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    return (
        text[:OUTPUT_LIMIT]
        + "\n"
        + say("grade.code.output_truncated", lang, total=len(text), limit=OUTPUT_LIMIT)
    )


def check_sources(ex: Exercise) -> dict[str, str]:
    """{check id: the source of its check_<id> function in checks.py}, for exercism's test_code."""
    path = Path(ex.folder or ".") / "checks.py"
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    return {node.name.removeprefix("check_"): ast.get_source_segment(text, node) or ""
            for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("check_")}  # fmt: skip


def exercism_json(ex: Exercise, result: GradeResult, sources: dict[str, str], lang: str) -> dict:
    """exercism's results.json, version 3, of one grade."""
    if did_not_load(result):
        return {"version": 3, "status": "error", "message": result.checks[0].message, "tests": []}
    tests = []
    for task, check in enumerate(result.checks, 1):
        status = {"pass": "pass", "fail": "fail"}.get(check.status, "error")
        test = {"name": check.title or check.name, "status": status, "test_code": sources.get(check.name, ""),
                "task_id": task}  # fmt: skip
        if status != "pass":
            test["message"] = check.message
        if result.output.strip():
            test["output"] = _cut(result.output, lang)
        tests.append(test)
    status = (
        "pass" if result.status == "pass" else ("error" if result.status == "error" and not tests else "fail")
    )
    return {"version": 3, "status": status, "tests": tests}


def write_lms_exports(out: Path, ex: Exercise, graded: list[Graded], names: dict, options: dict, lang: str,
                      write_csv) -> None:  # fmt: skip
    """canvas.csv, moodle.csv, gradescope/ and exercism/ in the new export folder `out`; `names`: each
    graded entry's feedback file name (by id()), `write_csv(path, columns, records)`."""
    points = options.get("points")
    column = options.get("assignment") or pick(ex.title, lang)
    write_csv(out / "canvas.csv", (*CANVAS_COLUMNS, column), canvas_rows(ex, graded, column, points))
    write_csv(out / "moodle.csv", MOODLE_COLUMNS, moodle_rows(ex, graded, points, lang))
    sources = check_sources(ex)
    for folder in ("gradescope", "exercism"):
        (out / folder).mkdir(mode=0o700)
    for entry in graded:
        if entry.row is None:
            continue
        stem = names[id(entry)].removesuffix(".md")
        result = entry.row.result
        _write_json(out / "gradescope" / f"{stem}.json", gradescope_json(ex, result, points, lang))
        _write_json(out / "exercism" / f"{stem}.json", exercism_json(ex, result, sources, lang))


def _write_json(path: Path, data: dict) -> None:
    """A new file of the new export folder (swapped in whole, so no file needs its own atomic write),
    0600, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def write_gradescope_results(
    path: Path, ex: Exercise, rows, points: float | None, pick: str, lang: str
) -> None:
    """Gradescope's /autograder/results/results.json for one submission (a batch of one student's files):
    the grade of the file named as the exercise's file (of several, the latest or the best), or of any
    *.py when none is; with no file at all, 0 points and a line saying so."""
    from tutor.grading.instructor.roster import picked

    named = [row for row in rows if row.file.rsplit("/", 1)[-1] == ex.file_name] or list(rows)
    if not named:
        top = float(sum(decl.points for decl in ex.checks))
        data = {"score": 0.0, "execution_time": 0.0, "output": say("grade.lms.no_submission", lang, file=ex.file_name),
                "visibility": "visible", "stdout_visibility": "hidden",
                "tests": [{"score": 0.0, "max_score": float(decl.points), "name": pick_title(decl, lang),
                           "number": str(n), "output": "", "visibility": "visible", "status": "failed"}
                          for n, decl in enumerate(ex.checks, 1)]}  # fmt: skip
        data["score"] = scaled(0.0, top, points)
    else:
        data = gradescope_json(ex, picked(named, pick).result, points, lang)
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")  # it may be there already


def pick_title(decl, lang: str) -> str:
    return pick(decl.title, lang) or decl.id
