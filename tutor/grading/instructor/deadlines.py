"""When each file was handed in, and what a late one costs (`--deadline`, `--late-per-day`, `--cutoff`).

Where a file's time comes from is tutor.grading.instructor.provenance's to say (the instructor's
manifest, the LMS's own record, never the file's own time); here are the manifest (`--manifest CSV`:
columns file,submitted, the file as reports show it, the time in ISO 8601) and the policy.

Late policy, applied to the exports after the overrides: none (no --deadline); a penalty of PCT percent
of the exercise's points for each day or part of a day after the deadline (`--late-per-day PCT`); zero
points after a cutoff (`--cutoff`). A file Canvas marked LATE with no time known ("canvas-late") is
one day late (Canvas says it was after its due date, not by how much) and never past the cutoff; a
file with no time ("none") is never late. Times without a zone are the machine's local time; a date
alone is the end of that day (23:59:59).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, replace
from datetime import datetime, time
from pathlib import Path

from tutor.errors import TutorError
from tutor.grading.instructor.batch import BatchRow
from tutor.grading.instructor.names import iso, shown_name  # noqa: F401 - iso: what deadlines' users read times with
from tutor.grading.safe_read import read_instructor_file
from tutor.texts import say


def parse_when(text: str, option: str, lang: str) -> datetime:
    """An aware datetime from `2026-05-04`, `2026-05-04T23:59` or with a zone; else a usage error."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise TutorError(say("grade.usage.when", lang, option=option, got=shown_name(text))) from None
    if re.fullmatch(r"\d{4}-\d\d-\d\d", text.strip()):
        when = datetime.combine(when.date(), time(23, 59, 59))
    return when if when.tzinfo is not None else when.astimezone()


def read_manifest(path: Path, lang: str) -> dict[str, float]:
    """{file as reports show it: POSIX time} from a manifest CSV (file,submitted)."""
    shown = shown_name(str(path))
    text = read_instructor_file(path, shown, lang, encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text, newline=""), skipinitialspace=True)
    if not reader.fieldnames or not {"file", "submitted"} <= {c.strip() for c in reader.fieldnames}:
        raise TutorError(say("grade.manifest.header", lang, file=shown))
    out = {}
    for cells in reader:
        cells = {k.strip(): (v or "").strip() for k, v in cells.items() if k}
        try:
            out[cells["file"]] = parse_when(cells["submitted"], "submitted", lang).timestamp()
        except TutorError:
            raise TutorError(
                say(
                    "grade.manifest.time",
                    lang,
                    file=shown,
                    line=reader.line_num,
                    got=shown_name(cells["submitted"]),
                )
            ) from None
    return out


@dataclass(frozen=True)
class Late:
    days: int  # days or parts of days after the deadline (0: on time)
    penalty: float  # points taken off
    before: float  # the total before


def apply_late(row: BatchRow, policy: dict) -> tuple[BatchRow, Late | None]:
    """The row with its late penalty taken off (a changed copy), and what it cost; None without a
    deadline, or without a time nor Canvas's LATE."""
    deadline, cutoff, per_day = policy.get("deadline"), policy.get("cutoff"), policy.get("per_day") or 0
    if deadline is None or (row.submitted is None and row.submitted_from != "canvas-late"):
        return row, None
    if row.submitted is None:  # Canvas's LATE, no time: one day, never past the cutoff
        days, past_cutoff = 1, False
    else:
        late_by = row.submitted - deadline.timestamp()
        days = max(0, math.ceil(late_by / 86400)) if late_by > 0 else 0
        past_cutoff = cutoff is not None and row.submitted > cutoff.timestamp()
    score = row.result.score
    if past_cutoff:
        penalty = score
    else:
        penalty = min(score, row.result.max_score * per_day / 100 * days)
    if penalty <= 0:
        return row, Late(days, 0.0, score)
    result = row.result.model_copy(deep=True)
    result.score = round(score - penalty, 4)
    return replace(row, result=result), Late(days, round(penalty, 4), score)
