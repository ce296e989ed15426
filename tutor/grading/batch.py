"""Grade every *.py in a folder (an instructor's batch): one row per file, as a table, JSON or CSV.

A file that cannot be read or imported is a row with status "error", never a crash. Each file runs
in its own sandboxed worker with its own scratch folder, killed before the next file starts. Batch grades are
not recorded in anyone's progress store.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.result import GradeResult
from tutor.grading.runner import Limits, clean, error_result, grade_many
from tutor.grading.service import read_submission
from tutor.texts import say

CSV_COLUMNS = ("file", "status", "score", "max_score", "first_failure", "message", "duration_s", "sha256")


@dataclass
class BatchRow:
    file: str
    sha256: str
    result: GradeResult

    def flat(self) -> dict:
        first = self.result.first_failure
        return {
            "file": self.file,
            "status": self.result.status,
            "score": self.result.score,
            "max_score": self.result.max_score,
            "first_failure": first.name if first else "",
            "message": first.message if first else "",
            "duration_s": self.result.duration_s,
            "sha256": self.sha256,
        }


def grade_folder(
    ex: Exercise,
    folder: Path,
    *,
    lang: str = "en",
    on_row: Callable[[BatchRow], None] | None = None,
    limits: Limits | None = None,
) -> list[BatchRow]:
    """Every *.py in `folder`, each with its own judge, sandboxed worker and scratch folder."""
    if ex.kind != "code":
        raise TutorError(say("grade.batch.runs_only", lang, id=ex.id))
    folder = Path(folder)
    if not folder.is_dir():
        raise TutorError(say("grade.batch.not_folder", lang, folder=str(folder)))
    rows: list[BatchRow] = []
    todo: list[tuple[BatchRow, str]] = []  # rows still to grade, with their text
    for path in sorted(folder.glob("*.py")):
        name, source, result = clean(path.name), b"", None
        try:
            source = read_submission(path, lang=lang)
            text = source.decode("utf-8").removeprefix("\ufeff")
        except TutorError as err:
            result = error_result(ex, str(err), lang)
        except UnicodeDecodeError as err:
            result = error_result(ex, say("grade.file.not_utf8", lang, name=name, byte=str(err.start)), lang)
        row = BatchRow(name, hashlib.sha256(source).hexdigest(), result or error_result(ex, "", lang))
        rows.append(row)
        if result is None:
            todo.append((row, text))
    if todo:
        results = grade_many(ex, [(text, row.file) for row, text in todo], lang=lang, limits=limits)
        for (row, _), result in zip(todo, results, strict=True):
            row.result = result
    for row in rows:
        if on_row is not None:
            on_row(row)
    return rows


def to_json(ex: Exercise, rows: list[BatchRow]) -> str:
    data = {
        "exercise": ex.id,
        "results": [{"file": r.file, "sha256": r.sha256, "grade": r.result.to_json()} for r in rows],
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


def to_csv(rows: list[BatchRow]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(r.flat())
    return out.getvalue()


def to_table(ex: Exercise, rows: list[BatchRow], lang: str = "en") -> str:
    if not rows:
        return say("grade.batch.empty", lang, id=ex.id)
    flat = [r.flat() for r in rows]
    cells = [
        [f["file"], say(f"grade.verdict.{f['status']}", lang), f"{f['score']:g}/{f['max_score']:g}",
         f["first_failure"] or "-", f"{f['duration_s']:.1f}", (f["message"] or "")[:60]]
        for f in flat
    ]  # fmt: skip
    head = [
        say(f"grade.batch.col.{c}", lang) for c in ("file", "status", "score", "first", "seconds", "message")
    ]
    widths = [max(cell_len(str(c[i])) for c in [head, *cells]) for i in range(len(head))]
    lines = [
        "  ".join(str(c) + " " * (w - cell_len(str(c))) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [head, *cells]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    passed = sum(f["status"] == "pass" for f in flat)
    lines.append(say("grade.batch.passed", lang, passed=passed, n=len(flat)))
    return "\n".join(lines)
