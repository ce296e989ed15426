"""Grade every *.py in a folder (an instructor's batch): one row per file, as a table, JSON or CSV.

A file that cannot be read or imported is a row with status "error", never a crash. Each file runs
in its own sandboxed worker with its own scratch folder, killed before the next file starts. Batch grades are
not recorded in anyone's progress store.

The folder is hostile input (a learner chooses what is in it, and what it is called):
- its *.py files are graded, in it, in its subfolders (Moodle's folder per student) and in its zip
  files, or in a zip given as the batch (tutor.grading.instructor.collect). Only regular files are: a link (to
  anything), a hard link (a file with another name, which may be anywhere on the disk), a FIFO, a
  device, a socket or a folder named *.py is an error row saying what it is, and a link is never
  followed: entries are listed without following links and opened with O_NOFOLLOW | O_NONBLOCK, then
  checked again on the open descriptor, so an entry swapped after the listing is refused too; a linked
  folder is not entered. Nothing outside the folder is read, so nothing outside it can be quoted in a
  report;
- a row's sha256 is that of the entry's bytes, or None where they were not read (a link, a FIFO, ...):
  refused rows never share a made-up hash;
- names are shown escaped (`shown_name`) in every format: a name cannot forge a row, hide behind
  a bidi override or fake an escape;
- CSV cells that a spreadsheet would run as a formula are neutralised (`csv_cell`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.instructor.names import iso, raw_name, shown_name  # noqa: F401 - here for the modules that import them from batch
from tutor.grading.judges import WarmJudge
from tutor.grading.result import VERSION, GradeResult
from tutor.grading.runner import Limits, error_result, grade_many
from tutor.texts import say

if TYPE_CHECKING:
    from tutor.grading.instructor.collect import Bounds, Source, Spool

CSV_COLUMNS = (
    "file",
    "status",
    "score",
    "max_score",
    "first_failure",
    "message",
    "duration_s",
    "sha256",
    "isolation",
    "missing_layers",
)

_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula (OWASP)


def csv_cell(value):
    """A CSV cell a spreadsheet reads as text: a string starting with = + - @ tab or CR gets a leading
    single quote (OWASP's advice). Numbers are written by us as numbers and left alone."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


@dataclass
class BatchRow:
    file: str
    sha256: str | None  # of the file's bytes; None when they were not read (a link, a FIFO, ...)
    result: GradeResult
    submitted: float | None = None  # when it was handed in (a POSIX time), where that is known
    submitted_from: str | None = None  # provenance.TIME_SOURCES; None: not stamped yet
    file_time: float | None = None  # the file's own time (mtime, a zip member's date): shown, never used
    owner_id: str | None = None  # whose it is (provenance.stamp); None: not stamped yet
    owner_from: str | None = None  # provenance.OWNER_SOURCES

    def provenance_json(self) -> dict:
        """The report's keys saying whose the file is, when it was handed in and where each came from
        (tutor.grading.instructor.provenance)."""
        submitted = None
        if self.submitted is not None:
            submitted = {"time": iso(self.submitted), "from": self.submitted_from or "none"}
        owner = {"id": self.owner_id, "from": self.owner_from} if self.owner_id is not None else None
        return {
            "owner": owner,
            "submitted": submitted,
            "submitted_from": self.submitted_from or "none",
            "file_time": iso(self.file_time) if self.file_time is not None else None,
        }

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
            "isolation": self.result.isolation.get("level", "none"),
            "missing_layers": " ".join(self.result.isolation.get("missing", [])),
        }


def shard_of(name: str, count: int) -> int:
    """The shard (1 to `count`) a folder entry belongs to: the SHA-256 of its name's bytes, read as a
    big-endian number, modulo `count`, plus 1. It depends on the name alone, never on what else is in
    the folder, so every machine that lists the same folder splits it the same way."""
    digest = hashlib.sha256(os.fsencode(name)).digest()
    return int.from_bytes(digest, "big") % count + 1


def grade_folder(
    ex: Exercise,
    folder: Path,
    *,
    lang: str = "en",
    on_row: Callable[[BatchRow], None] | None = None,
    limits: Limits | None = None,
    jobs: int = 1,
    shard: tuple[int, int] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
    texts: dict[str, str] | None = None,
    bounds: Bounds | None = None,
) -> list[BatchRow]:
    """Every *.py under `folder` (a folder, its subfolders and zips, or a zip: tutor.grading.instructor.collect), in
    name order, each with its own judge, sandboxed worker and scratch folder; an entry that is not a
    regular file is an error row, never opened through a link. `shard` (K, N): only the entries whose
    `shard_of(name, N)` is K; `bounds`: what the batch reads at most (collect.Bounds). `on_start(n)` is
    told how many files go to the judge, `on_done(i)` each time one of them is graded (from the grading
    threads). `texts`, when given, gets each graded file's text by its name (for the similarity report).

    A file's bytes are read from collect's spool when it is about to be graded and dropped once it is,
    so at most `jobs` files' texts are held at a time (all of them only for `texts`)."""
    from tutor.grading.instructor.collect import Spool
    from tutor.grading.safe_read import decode_source

    if ex.kind != "code":
        raise TutorError(say("grade.batch.runs_only", lang, id=ex.id))
    with Spool() as spool:
        rows, todo = _read_folder(ex, folder, lang, shard, spool, bounds)
        if on_start is not None:
            on_start(len(todo))
        if todo:  # one warm judge forks a judge (and a box) per file, `jobs` files at a time
            lock, done = threading.Lock(), [0]
            with WarmJudge() as warm:

                def grade(item: tuple[BatchRow, Source]) -> None:
                    row, source = item
                    text = decode_source(source.read(), row.file, lang)  # it decoded when it was read
                    if texts is not None:
                        texts[row.file] = text
                    row.result = grade_many(ex, [(text, row.file)], lang=lang, limits=limits, warm=warm)[0]
                    if on_done is not None:
                        with lock:
                            done[0] += 1
                            on_done(done[0])

                if jobs > 1 and len(todo) > 1:
                    with ThreadPoolExecutor(max_workers=jobs) as pool:
                        list(pool.map(grade, todo))
                else:
                    for item in todo:
                        grade(item)
    for row in rows:
        if on_row is not None:
            on_row(row)
    return rows


def _read_folder(
    ex: Exercise, folder: Path, lang: str, shard: tuple[int, int] | None, spool: Spool, bounds: Bounds | None
) -> tuple[list[BatchRow], list[tuple[BatchRow, Source]]]:
    """A row for every *.py under `folder` (of the shard), in name order, and the rows still to grade
    with where their bytes are in `spool`; the others are error rows already (a file that does not
    decode among them: each is decoded here once, and its text dropped)."""
    from tutor.grading.instructor.collect import Bounds, collect
    from tutor.grading.safe_read import decode_source

    keep = (lambda name: True) if shard is None else (lambda name: shard_of(name, shard[1]) == shard[0])
    rows: list[BatchRow] = []
    todo: list[tuple[BatchRow, Source]] = []
    for found in collect(folder, lang, keep, spool=spool, bounds=bounds or Bounds()):
        name, error = shown_name(found.name), found.error
        if error is None and found.source is not None:
            try:
                decode_source(found.source.read(), name, lang)
            except TutorError as err:
                error = str(err)
        row = BatchRow(name, found.sha256, error_result(ex, error or "", lang), file_time=found.mtime)
        rows.append(row)
        if error is None and found.source is not None:
            todo.append((row, found.source))
    return rows, todo


def checks_version(ex: Exercise) -> str:
    """The version of an exercise's checks: the first 16 hex digits of the sha256 of its checks.py and of
    its checks' ids and points in exercise.toml. Reports carry it, so a merge refuses a report graded by
    other checks, or for other points, instead of joining it."""
    digest = hashlib.sha256()
    checks = Path(ex.folder or ".") / "checks.py"
    digest.update(checks.read_bytes() if checks.is_file() else b"")
    digest.update(b"\0" + json.dumps([[c.id, c.points] for c in ex.checks]).encode())
    return digest.hexdigest()[:16]


def graded_now() -> str:
    """The time a report says it was graded at: UTC, to the second, ISO 8601 (`2026-05-04T09:30:00Z`)."""
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_json(
    ex: Exercise, rows: list[BatchRow], graded_at: str | None = None, similar: list | None = None
) -> str:
    """A batch's report: {"version", "exercise", "checks_version", "tutor_version", "graded_at",
    "results": [{"file", "sha256", "owner": {"id", "from"}, "submitted": {"time", "from"} or null,
    "submitted_from", "file_time", "grade"}]} (BatchRow.provenance_json); every grade carries its seed."""
    from tutor import __version__

    results = [
        {"file": r.file, "sha256": r.sha256, **r.provenance_json(), "grade": r.result.to_json()} for r in rows
    ]
    data = {
        "version": VERSION,
        "exercise": ex.id,
        "checks_version": checks_version(ex),
        "tutor_version": __version__,
        "graded_at": graded_at or graded_now(),
        "results": results,
    }
    if similar is not None:  # --similar: the pairs alike (tutor.grading.instructor.similarity)
        data["similar"] = [pair.to_json() for pair in similar]
    return json.dumps(data, ensure_ascii=False, indent=2)


def to_csv(rows: list[BatchRow]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({key: csv_cell(value) for key, value in r.flat().items()})
    return out.getvalue()


def to_table(ex: Exercise, rows: list[BatchRow], lang: str = "en") -> str:
    if not rows:
        return say("grade.batch.empty", lang, id=ex.id)
    flat = [r.flat() for r in rows]
    cells = [
        [
            f["file"],
            say(f"grade.verdict.{f['status']}", lang),
            f"{f['score']:g}/{f['max_score']:g}",
            shown_name(f["first_failure"]) or "-",
            f"{f['duration_s']:.1f}",
            shown_name((f["message"] or "")[:60]),
        ]
        for f in flat
    ]
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
    return "\n".join(lines + box_lines(rows, lang))


def box_lines(rows: list[BatchRow], lang: str) -> list[str]:
    """What the box was for the files that reached it, a line per level and missing layers ("18 files
    graded in a strong box", "2 files graded in a partial box (missing: private root, …)"); files no
    learner code ran for (a link, an unreadable file) are not counted."""
    from tutor.grading.box.sandbox import LAYERS

    counts: dict[tuple[str, tuple[str, ...]], int] = {}
    for row in rows:
        level, missing = row.result.isolation.get("level"), tuple(row.result.isolation.get("missing", []))
        if level in ("strong", "partial", "basic"):
            counts[(level, missing)] = counts.get((level, missing), 0) + 1
    lines = []
    for (level, missing), n in counts.items():
        layers = [say(f"grade.layer.{m}", lang) for m in missing if m in LAYERS]
        gap = say("grade.batch.box_missing", lang, layers=layers) if layers else ""
        lines.append(
            say("grade.batch.box", lang, n=n, level=say(f"grade.batch.level.{level}", lang), missing=gap)
        )
    return lines
