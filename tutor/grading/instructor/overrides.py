"""An instructor's changes to grades (`--overrides CSV`), applied to the exports of a batch or a merge
and shown in each student's feedback; the grade reports keep the judge's own verdicts.

    student,check,points,reason
    s001,add,1,"regraded by hand: the test was too strict"
    s002,total,3.5,"late-day waiver"

`check` is a check's id (the check's points become `points`, 0 to the check's maximum) or "total" (the
student's total becomes `points`, 0 to the exercise's maximum, after the checks' changes); `reason` is
required. The file is checked whole before anything is graded: a malformed line, an unknown check, points
out of range or a missing reason stops with a message naming the line. A student not in the batch is a
warning naming the line, and their line is not applied.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, replace
from pathlib import Path

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.instructor.batch import BatchRow, shown_name
from tutor.grading.instructor.roster import Graded
from tutor.grading.safe_read import read_instructor_file
from tutor.texts import say

COLUMNS = ("student", "check", "points", "reason")


@dataclass(frozen=True)
class Override:
    line: int
    student: str
    check: str  # a check id, or "total"
    points: float
    reason: str
    before: float | None = None  # the points it replaced, once applied


def read_overrides(path: Path, ex: Exercise, lang: str) -> list[Override]:
    shown = shown_name(str(path))
    text = read_instructor_file(path, shown, lang, encoding="utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, skipinitialspace=True)
    decls = {decl.id: decl.points for decl in ex.checks}
    top = sum(decls.values())
    out = []
    try:
        columns = [c.strip() for c in next(reader, None) or []]
        if sorted(columns) != sorted(COLUMNS):
            raise TutorError(
                say("grade.overrides.header", lang, file=shown, got=shown_name(",".join(columns)))
            )
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(columns):
                raise TutorError(
                    say("grade.roster.cells", lang, file=shown, line=line, n=len(columns), got=len(cells))
                )
            cell = {key: value.strip() for key, value in zip(columns, cells, strict=True)}
            out.append(_override(cell, line, decls, top, shown, lang))
    except csv.Error as err:
        raise TutorError(
            say("grade.roster.csv", lang, file=shown, line=reader.line_num, error=str(err))
        ) from None
    return out


def _override(cell: dict, line: int, decls: dict, top: float, shown: str, lang: str) -> Override:
    def bad(key: str, **values) -> TutorError:
        return TutorError(say(f"grade.overrides.{key}", lang, file=shown, line=line, **values))

    if not cell["student"]:
        raise bad("no_student")
    if cell["check"] != "total" and cell["check"] not in decls:
        raise bad("check", got=shown_name(cell["check"]), checks=", ".join([*decls, "total"]))
    high = top if cell["check"] == "total" else decls[cell["check"]]
    try:
        points = float(cell["points"])
    except ValueError:
        points = math.nan
    if not 0 <= points <= high:  # NaN too
        raise bad("points", got=shown_name(cell["points"]), high=f"{high:g}")
    if not cell["reason"]:
        raise bad("no_reason")
    return Override(line, shown_name(cell["student"]), cell["check"], points, shown_name(cell["reason"]))


def apply_overrides(
    graded: list[Graded], overrides: list[Override], shown_file: str, lang: str
) -> tuple[dict[str, list[Override]], list[str]]:
    """Each student's overrides applied to their row (in place: `graded`'s rows are replaced by changed
    copies), checks first, then the total; {student id: [Override with `before`]} and warnings for
    students not in the batch."""
    by_id = {entry.student.id: entry for entry in graded}
    applied: dict[str, list[Override]] = {}
    warnings = []
    ordered = sorted(overrides, key=lambda o: (o.check == "total", o.line))
    for override in ordered:
        entry = by_id.get(override.student)
        if entry is None or entry.row is None:
            warnings.append(
                say(
                    "grade.overrides.unknown_student",
                    lang,
                    file=shown_file,
                    line=override.line,
                    student=override.student,
                )
            )
            continue
        entry.row, before = _changed(entry.row, override)
        applied.setdefault(override.student, []).append(replace(override, before=before))
    return applied, warnings


def _changed(row: BatchRow, override: Override) -> tuple[BatchRow, float]:
    result = row.result.model_copy(deep=True)
    if override.check == "total":
        before, result.score = result.score, override.points
    else:
        check = next(c for c in result.checks if c.name == override.check)
        before, check.points = check.points, override.points
        result.score = sum(c.points for c in result.checks)
    return replace(row, result=result), before
