"""The exports an LMS imports as they are, beside the tutor's own (tutor.grading.instructor.export), each
shaped by what that LMS's own importer reads:

    OUT/canvas.csv               Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID,
                                 Section, then one column for the assignment ("Name (ID)" to fill an
                                 assignment Canvas has, a plain name to make a new one), after a
                                 "Points Possible" line. Canvas finds a row's student by ID (its user id),
                                 else SIS User ID or SIS Login ID, else the name; a blank cell changes nothing
    OUT/moodle.csv               Moodle's grading worksheet (Assignment > Upload grading worksheet). Its
                                 importer needs Identifier ("Participant N"), Grade and Last modified (grade),
                                 reads Feedback comments, and skips a blank Grade. With the worksheet Moodle
                                 gave as --roster, its own columns and cells are copied through (Grade and
                                 Feedback comments filled in); else Moodle's download columns: Identifier,
                                 Full name, Email address, Status, Grade, Maximum Grade, Grade can be changed,
                                 Last modified (submission), Last modified (grade) (the time of grading),
                                 Feedback comments
    OUT/moodle-gradebook.csv     Moodle's gradebook import (Grades > Import > CSV file): the worksheet's user
                                 column (Email address, else ID number, else Username), Full name, the
                                 assignment's column, Feedback. Moodle stops the whole import at a row whose
                                 user it cannot find, so only students with that cell get a row, and without
                                 a worksheet as --roster (no such column) the file is not written
    OUT/gradescope/<id>.json     Gradescope's autograder results.json for the student's file: score,
                                 execution_time, output, output_format and test_output_format ("text": a
                                 learner's text is never rendered), visibility, stdout_visibility, tests
                                 [{score, max_score, name, number, output, visibility, status}]
    OUT/exercism/<id>.json       exercism's test runner results.json, version 3: version, status,
                                 message (an error's), tests [{name, status, message, output, test_code}]

Totals are the exercise's points, or scaled to `points` (the assignment's maximum in the LMS) when it is
given; Gradescope's tests are scaled too, so their max_score add up to `points`. A rostered student without
a file has a blank grade in the CSVs (Canvas: no change, Moodle: no grade) and no results.json. Moodle
matches its columns by their names in the uploading user's language: these are English, as the worksheet
the roster reader knows. Text cells go through batch.csv_cell, as every CSV of the tutor's does.

exercism: a test's `output` is the learner's own printing, at most 500 characters with the note that it was
cut; the tutor has it for the whole file, not per check, so it goes with the first failing test (the one
exercism shows), else the first. `test_code` is the body of the check's function. No `task_id`: exercism's
tasks are an exercise's numbered instructions, which ours do not have.
"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

from tutor.atomicio import atomic_write_text
from tutor.content.schema import Exercise
from tutor.grading.instructor.roster import Graded
from tutor.grading.result import GradeResult
from tutor.grading.text import did_not_load
from tutor.i18n import pick
from tutor.texts import say

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = (
    "Identifier",
    "Full name",
    "Email address",
    "Status",
    "Grade",
    "Maximum Grade",
    "Grade can be changed",
    "Last modified (submission)",
    "Last modified (grade)",
    "Feedback comments",
)
MOODLE_NEEDS = ("Identifier", "Grade", "Last modified (grade)", "Feedback comments")  # its importer's own
MOODLE_USERS = ("Email address", "ID number", "Username")  # what Moodle's gradebook import maps a user by
OUTPUT_LIMIT = 500  # exercism's: a test's output is at most this, the note that it was cut included
TEXT = "text"  # Gradescope's output_format: shown as it is, never rendered (no HTML, no Markdown)


def scaled(score: float, top: float, points: float | None) -> float:
    """`score` of `top` as points of `points` (None: as it is), rounded to 2 places."""
    if points is None or not top:
        return score
    return round(score / top * points, 2)


def shares(tops: list[float], points: float | None) -> list[float]:
    """Each of `tops` as its share of `points`, rounded to 2 places so that they add up to `points` exactly
    (each share is the rounded running total less the one before); None: `tops` as they are."""
    total = sum(tops)
    if points is None or not total:
        return [float(top) for top in tops]
    out, before, running = [], 0.0, 0.0
    for top in tops:
        running += top
        now = round(running / total * points, 2)
        out.append(round(now - before, 2))
        before = now
    return out


def _lms(student) -> dict[str, str]:
    return dict(student.lms)


def _from_canvas(entry: Graded) -> bool:
    """Whether the row's ID is Canvas's own: from its gradebook as --roster or from Canvas's layout
    (tutor.grading.instructor.provenance)."""
    return "ID" in _lms(entry.student) or entry.owner_from == "canvas"


def canvas_rows(ex: Exercise, graded: list[Graded], column: str, points: float | None) -> list[dict]:
    top = float(sum(decl.points for decl in ex.checks))
    rows = [{**dict.fromkeys(CANVAS_COLUMNS, ""), "Student": "    Points Possible", column: points or top}]
    for entry in graded:
        cells = _lms(entry.student)
        grade = (
            scaled(entry.row.result.score, top, points) if entry.row is not None else ""
        )  # blank: no change
        rows.append(
            {
                "Student": entry.student.name or entry.student.id,
                "ID": cells.get("ID", entry.student.id),
                "SIS User ID": cells.get("SIS User ID", ""),
                "SIS Login ID": cells.get("SIS Login ID", ""),
                "Section": cells.get("Section", ""),
                column: grade,
            }
        )
    return rows


def _comment(entry: Graded, lang: str) -> str:
    if entry.row is None:
        return say("grade.lms.missing", lang)
    return say(f"grade.status.{entry.row.result.status}", lang)


def moodle_rows(
    ex: Exercise, graded: list[Graded], points: float | None, lang: str, graded_at: str
) -> tuple[tuple[str, ...], list[dict]]:
    """moodle.csv's columns and rows (see the module doc)."""
    from tutor.grading.instructor.names import iso

    top = float(sum(decl.points for decl in ex.checks))
    sheet = next(
        (tuple(key for key, _ in e.student.lms) for e in graded if "Identifier" in _lms(e.student)), ()
    )
    columns = sheet + tuple(c for c in MOODLE_COLUMNS if c not in sheet) if sheet else MOODLE_COLUMNS
    rows = []
    for entry in graded:
        cells, row = _lms(entry.student), entry.row
        if (
            "Identifier" not in cells
        ):  # not on the worksheet: Moodle's download columns, filled from the grade
            cells = {
                "Identifier": f"Participant {entry.student.id}",
                "Full name": entry.student.name or entry.student.id,
                "Last modified (submission)": iso(row.submitted) if row is not None and row.submitted else "",
                "Last modified (grade)": graded_at if row is not None else "",
            }
        grade = scaled(row.result.score, top, points) if row is not None else ""  # blank: Moodle skips it
        rows.append(
            {
                **dict.fromkeys(columns, ""),
                "Maximum Grade": points or top,
                **cells,
                "Grade": grade,
                "Feedback comments": _comment(entry, lang),
            }
        )
    return columns, rows


def moodle_gradebook_rows(
    ex: Exercise, graded: list[Graded], column: str, points: float | None, lang: str
) -> tuple[str | None, list[dict], list[str]]:
    """Moodle's gradebook import: (the user column, or None when no student has one; the rows; the ids of
    the students left out for want of it)."""
    top = float(sum(decl.points for decl in ex.checks))
    held = [set(_lms(entry.student)) for entry in graded]
    user = next((c for c in MOODLE_USERS if any(c in cells for cells in held)), None)
    if user is None:
        return None, [], [entry.student.id for entry in graded]
    rows, left = [], []
    for entry in graded:
        who = _lms(entry.student).get(user, "").strip()
        if not who:  # Moodle would stop the whole import at this row (or give its grade to the row before)
            left.append(entry.student.id)
            continue
        grade = (
            scaled(entry.row.result.score, top, points) if entry.row is not None else ""
        )  # blank: no grade
        rows.append(
            {user: who, "Full name": entry.student.name, column: grade, "Feedback": _comment(entry, lang)}
        )
    return user, rows, left


def gradescope_json(ex: Exercise, result: GradeResult, points: float | None, lang: str) -> dict:
    """Gradescope's results.json of one grade (its autograder's documented fields), every score on the
    scale of `points` when it is given."""
    first = result.first_failure
    tops = shares([float(check.max_points) for check in result.checks], points)
    tests: list[dict] = []
    for number, (check, top) in enumerate(zip(result.checks, tops, strict=True), 1):
        output = check.message
        if first is not None and check.name == first.name and check.hint and not did_not_load(result):
            output += "\n" + say(
                "word.labelled", lang, label=say("grade.export.md.hint", lang), text=check.hint
            )
        got = round(top * check.points / check.max_points, 2) if check.max_points else 0.0
        tests.append(
            {
                "score": got,
                "max_score": top,
                "name": check.title or check.name,
                "number": str(number),
                "output": output,
                "visibility": "visible",
                "status": "passed" if check.status == "pass" else "failed",
            }
        )
    summary = f"{say(f'grade.status.{result.status}', lang)} {result.score:g}/{result.max_score:g}"
    if did_not_load(result):
        summary += "\n" + result.checks[0].message
    score = (
        round(sum(t["score"] for t in tests), 2)
        if points is not None and tests
        else scaled(result.score, result.max_score, points)
    )
    return {
        "score": score,
        "execution_time": result.duration_s,
        "output": summary,
        "output_format": TEXT,
        "test_output_format": TEXT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _cut(text: str, lang: str) -> str:
    """`text` in at most OUTPUT_LIMIT characters, the note that it was cut included."""
    if len(text) <= OUTPUT_LIMIT:
        return text
    note = "\n" + say("grade.lms.exercism_cut", lang, limit=OUTPUT_LIMIT)
    return text[: max(0, OUTPUT_LIMIT - len(note))] + note


def check_sources(ex: Exercise) -> dict[str, str]:
    """{check id: the body of its check_<id> function in checks.py, dedented, without its docstring}, for
    exercism's test_code: what the check runs, not the module's helpers nor the `def` line."""
    path = Path(ex.folder or ".") / "checks.py"
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    lines = text.splitlines()
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("check_"):
            continue
        body = node.body
        if ast.get_docstring(node, clean=False) is not None and len(body) > 1:
            body = body[1:]
        start, end = body[0].lineno, node.end_lineno or body[-1].lineno
        out[node.name.removeprefix("check_")] = textwrap.dedent("\n".join(lines[start - 1 : end])).strip("\n")
    return out


def exercism_json(ex: Exercise, result: GradeResult, sources: dict[str, str], lang: str) -> dict:
    """exercism's results.json, version 3, of one grade."""
    if did_not_load(result):
        message = result.checks[0].message
        if result.output.strip():  # the top level message is not limited in length
            message += "\n\n" + result.output
        return {"version": 3, "status": "error", "message": message, "tests": []}
    tests = []
    for check in result.checks:
        status = {"pass": "pass", "fail": "fail"}.get(check.status, "error")
        test = {"name": check.title or check.name, "status": status, "test_code": sources.get(check.name, "")}
        if status != "pass":
            test["message"] = check.message
        tests.append(test)
    if result.output.strip() and tests:  # once, with the test exercism shows: the first failing one
        shown = next((test for test in tests if test["status"] != "pass"), tests[0])
        shown["output"] = _cut(result.output, lang)
    status = (
        "pass" if result.status == "pass" else ("error" if result.status == "error" and not tests else "fail")
    )
    return {"version": 3, "status": status, "tests": tests}


def write_lms_exports(
    out: Path, ex: Exercise, graded: list[Graded], names: dict, options: dict, lang: str, write_csv, write_row
) -> list[str]:
    """canvas.csv, moodle.csv, moodle-gradebook.csv, gradescope/ and exercism/ in the new export folder
    `out`; `names`: each graded entry's feedback file name (by id()), `write_csv(path, columns, records)`,
    `write_row(path, make)` writes one student's file and reports (not raises) a failure. Returns warnings."""
    points = options.get("points")
    column = options.get("assignment") or pick(ex.title, lang)
    warnings = []
    write_csv(out / "canvas.csv", (*CANVAS_COLUMNS, column), canvas_rows(ex, graded, column, points))
    if graded and not any(_from_canvas(entry) for entry in graded):
        warnings.append(
            say(
                "grade.lms.canvas_no_ids",
                lang,
                file="canvas.csv",
                first=graded[0].student.id,
                columns="ID, SIS User ID, SIS Login ID",
            )
        )
    write_csv(out / "moodle.csv", *moodle_rows(ex, graded, points, lang, options.get("graded_at") or ""))
    user, rows, left = moodle_gradebook_rows(ex, graded, column, points, lang)
    if user is None:
        warnings.append(
            say("grade.lms.moodle_no_user", lang, file="moodle-gradebook.csv", worksheet="moodle.csv")
        )
    else:
        write_csv(out / "moodle-gradebook.csv", (user, "Full name", column, "Feedback"), rows)
        if left:
            warnings.append(
                say(
                    "grade.lms.moodle_left_out",
                    lang,
                    file="moodle-gradebook.csv",
                    n=len(left),
                    user=user,
                    first=left[0],
                )
            )
    sources = check_sources(ex)
    for folder in ("gradescope", "exercism"):
        (out / folder).mkdir(mode=0o700)
    for entry in graded:
        if entry.row is None:
            continue
        stem = names[id(entry)].removesuffix(".md")
        result = entry.row.result
        write_row(
            out / "gradescope" / f"{stem}.json", lambda r=result: _json(gradescope_json(ex, r, points, lang))
        )
        write_row(
            out / "exercism" / f"{stem}.json", lambda r=result: _json(exercism_json(ex, r, sources, lang))
        )
    return warnings


def _json(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def write_gradescope_results(
    path: Path, ex: Exercise, rows, points: float | None, pick: str, lang: str
) -> None:
    """Gradescope's /autograder/results/results.json for one submission (a batch of one student's files):
    the grade of the file provenance.pick_file picks (the exercise's file first, then the latest or the
    best); with no file at all, 0 points and a line saying so."""
    from tutor.grading.instructor.provenance import pick_file

    if not rows:
        tops = shares([float(decl.points) for decl in ex.checks], points)
        data = {
            "score": 0.0,
            "execution_time": 0.0,
            "output": say("grade.lms.no_submission", lang, file=ex.file_name),
            "output_format": TEXT,
            "test_output_format": TEXT,
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [
                {
                    "score": 0.0,
                    "max_score": top,
                    "name": pick_title(decl, lang),
                    "number": str(n),
                    "output": "",
                    "visibility": "visible",
                    "status": "failed",
                }
                for n, (decl, top) in enumerate(zip(ex.checks, tops, strict=True), 1)
            ],
        }
    else:
        data = gradescope_json(ex, pick_file(list(rows), pick, ex.file_name)[0].result, points, lang)
    atomic_write_text(path, _json(data))  # it may be there already


def pick_title(decl, lang: str) -> str:
    return pick(decl.title, lang) or decl.id
