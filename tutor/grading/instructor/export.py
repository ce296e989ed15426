"""An instructor's exports of a batch (`grade ID --batch DIR --export OUT`, `grade --merge … --export OUT`):

    OUT/checks.csv          one row per file × check: student_id, file, check, status, points,
                            max_points, message, version, checks_version
    OUT/gradebook.csv       one row per student: student_id, name, file, total, max, status ("missing"
                            for a rostered student without a file), in_roster, feedback, version,
                            checks_version, isolation, files (how many the student handed in),
                            …, submitted, submitted_from, late_days, late_penalty, owner_from,
                            picked_because (tutor.grading.instructor.provenance)
    OUT/feedback/<id>.md    each student's feedback in Markdown, in the instructor's language
    OUT/export.json         what the folder is: {"format", "exercise", "version", "checks_version", "files"}

`version` is the grade JSON's format (result.VERSION) and `checks_version` the version of the checks
that graded the rows (batch.checks_version), as in the batch and shard reports. An export replaces an
earlier one whole (tutor.grading.instructor.export_folder); every file is 0600. The files each LMS imports
are tutor.grading.instructor.lms_export's.

Students come from tutor.grading.instructor.roster: the file's name (its LMS's, its folder's) or `--roster CSV`
(the tutor's own, a Canvas gradebook export or a Moodle grading worksheet), checked whole before
anything is graded. Of a student's several files the gradebook takes the one provenance.pick_file
picks (the exercise's file first, then the latest or the best: `pick`).

The feedback file of a student is `<id>.md` in OUT/feedback, never anywhere else: an id from a file
name is a single name by construction (no "/", escaped), a roster id is checked as above. Two ids that
would be one file on a case-insensitive disk, or an id too long for a file name, get a short hash of the
file's name added (hashed again while that is taken too), so no two students' files are ever one; the
gradebook's `feedback` column says which file is whose. Each student's files are written atomically by
export_folder.RowWriter: one that cannot be written is a warning, the rest of the class is exported.

What a submission produced (check messages, its output) is untrusted. In the Markdown it only ever
appears inside a fenced code block whose fence is a run of backticks longer than any run inside the
text, so it cannot close the block: no link, image, HTML or heading it holds is rendered. File names,
ids and roster names are escaped by batch.shown_name (one line, nothing invisible) and shown as code
spans, again with a backtick run longer than any inside. Every CSV cell that is text goes through
batch.csv_cell, and every file name and id in them is shown escaped.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from functools import partial
from pathlib import Path

from tutor import __version__
from tutor.atomicio import atomic_write_text
from tutor.content.schema import Exercise
from tutor.grading.hints import hint_step
from tutor.grading.instructor.batch import BatchRow, checks_version, csv_cell
from tutor.grading.instructor.roster import (  # noqa: F401  (read_roster, Student: where they were)
    MAX_ID_BYTES,
    Roster,
    Student,
    assign,
    read_roster,
    roster_warnings,
    whose,
)
from tutor.grading.result import VERSION
from tutor.grading.text import did_not_load, isolation_text
from tutor.i18n import pick
from tutor.texts import number, say

CHECKS_COLUMNS = (
    "student_id",
    "file",
    "check",
    "status",
    "points",
    "max_points",
    "message",
    "version",
    "checks_version",
    "override",
)
GRADEBOOK_COLUMNS = (
    "student_id",
    "name",
    "file",
    "total",
    "max",
    "status",
    "in_roster",
    "feedback",
    "version",
    "checks_version",
    "isolation",
    "files",
    "overrides",
    "tutor_version",
    "graded_at",
    "seed",
    "submitted",
    "submitted_from",
    "late_days",
    "late_penalty",
    "owner_from",
    "picked_because",
)
SIMILAR_COLUMNS = ("file_a", "file_b", "similarity", "lines_a", "lines_b")
MARKS = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⧗", "skipped": "·"}


def feedback_names(rows: list[BatchRow], people: list[Student]) -> list[str]:
    """The feedback file name of each row, no two the same file even on a case-insensitive disk: `<id>.md`,
    unless that is too long or already taken; then the id, cut short, and a hash of the file's name (and,
    should that be taken too, of a count after it)."""
    taken: set[str] = set()
    names = []
    for row, person in zip(rows, people, strict=True):
        name, count = f"{person.id}.md", 0
        cut = person.id.encode("utf-8")[:120].decode("utf-8", "ignore")
        while len(name.encode("utf-8")) > MAX_ID_BYTES + 3 or _key(name) in taken:
            seed = row.file + (f"\0{count}" if count else "")
            name, count = (
                f"{cut}-{hashlib.sha256(seed.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}.md",
                count + 1,
            )
        taken.add(_key(name))
        names.append(name)
    return names


def _key(name: str) -> str:
    """What a case-insensitive, normalising disk makes of a file name."""
    return unicodedata.normalize("NFC", name).casefold()


def md_code(text: str) -> str:
    """A name as reports show it (already escaped by shown_name: one line, nothing invisible) inline in
    Markdown: a code span whose backtick run is longer than any inside it, so nothing in it is markup."""
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def md_block(text: str) -> str:
    """Untrusted text as a fenced code block: shown as it is, never rendered. The fence is longer
    than any backtick run inside, so the text cannot close it."""
    from tutor.grading.runner import clean

    text = clean(text).replace("\r", "")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip(chr(10))}\n{fence}"


def feedback(
    ex: Exercise,
    row: BatchRow,
    person: Student,
    lang: str,
    changes: list | None = None,
    stamp: dict | None = None,
    late=None,
) -> str:
    """A student's feedback in Markdown, in `lang`: the exercise, the total, every check with its
    status and message, and the hint tier a batch grade earns (tutor.grading.hints): the first
    failure's own hint, and which of the exercise's general hints comes next."""
    result = row.result
    not_loaded = result.checks[0] if did_not_load(result) else None
    lines = _feedback_head(ex, row, person, lang)
    if not_loaded is not None:  # why no check ran, before the checks it stopped
        lines += ["", say("grade.export.md.not_loaded", lang), "", md_block(not_loaded.message)]
    lines += ["", f"## {say('grade.export.md.checks', lang)}"]
    lines += _feedback_checks(ex, result, lang, not_loaded)
    general = hint_step(result, ex, 0)  # none of the general hints seen: the first comes next
    if general.next is not None:
        lines += ["", say("grade.more_hints", lang, id=ex.id, n=general.next, total=general.total)]
    if result.output.strip():
        lines += ["", f"## {say('grade.output', lang)}", "", md_block(result.output)]
    if result.status == "pass":
        lines += ["", say("grade.passed", lang, id=ex.id)]
    more = (
        _changes_lines(ex, changes or [], lang)
        + _late_lines(row, late, lang)
        + _stamp_lines(row, stamp, lang)
    )
    return "\n".join(lines + more) + "\n"


def _feedback_head(ex: Exercise, row: BatchRow, person: Student, lang: str) -> list[str]:
    """The feedback's title and its list: student, file, total and, where known, the box."""
    result = row.result
    student = md_code(person.id) + (f" ({md_code(person.name)})" if person.name else "")
    total = (
        f"{number(result.score, lang)}/{number(result.max_score, lang)} {say('grade.points', lang)}, "
        f"**{say(f'grade.status.{result.status}', lang)}**"
    )
    shown_box = isolation_text(result.isolation, lang)
    items = [("student", student), ("file", md_code(row.file)), ("total", total)]
    items += [] if shown_box is None else [("box", shown_box)]
    return [
        f"# {say('grade.export.md.title', lang, title=pick(ex.title, lang), id=ex.id)}",
        "",
        *(
            "- " + say("word.labelled", lang, label=say(f"grade.export.md.{k}", lang), text=v)
            for k, v in items
        ),
    ]


def _feedback_checks(ex: Exercise, result, lang: str, not_loaded) -> list[str]:
    """Every check with its verdict, points and message, and the first failure's own hint (as `grade`
    shows it with no store); none when the file did not load, whose message is shown above the checks."""
    decls = {decl.id: decl for decl in ex.checks}
    own = None if not_loaded is not None else hint_step(result, ex, None).own
    lines: list[str] = []
    for check in result.checks:
        decl = decls.get(check.name)
        title = pick(decl.title, lang) if decl else check.name
        top = decl.points if decl else check.max_points
        lines += ["", f"### {MARKS.get(check.status, '?')} {title} (`{check.name}`)", ""]
        lines.append(
            f"{say(f'grade.verdict.{check.status}', lang)}, {number(check.points, lang)}/"
            f"{number(top, lang)} {say('grade.points', lang)}"
        )
        shown_above = not_loaded is not None and check is not_loaded
        if check.message and check.status != "skipped" and not shown_above:  # a skipped one's is above it
            lines += ["", md_block(check.message)]
        if own is not None and check.name == own.name:
            hint = pick(decl.hint, lang) if decl else check.hint
            lines += ["", f"**{say('grade.export.md.hint', lang)}:** {hint}"]
    return lines


def _apply_late(graded: list, late: dict | None) -> dict:
    """The late policy applied to each student's row (in place); {id(entry): Late} where it has one."""
    from tutor.grading.instructor.deadlines import apply_late

    out = {}
    for entry in graded:
        if late and late.get("deadline") is not None and entry.row is not None:
            entry.row, cost = apply_late(entry.row, late)
            if cost is not None:
                out[id(entry)] = cost
    return out


def _late_cells(entry, lateness: dict) -> dict:
    from tutor.grading.instructor.names import iso

    row, cost = entry.row, lateness.get(id(entry))
    return {
        "submitted": iso(row.submitted) if row is not None and row.submitted is not None else "",
        "submitted_from": (row.submitted_from or "none") if row is not None else "",
        "late_days": cost.days if cost else "",
        "late_penalty": cost.penalty if cost else "",
    }


def _late_lines(row: BatchRow, late, lang: str) -> list[str]:
    """When the file was handed in (and how that is known) and, after a deadline, what it cost."""
    from tutor.grading.instructor.names import iso

    if late is None:
        return []
    if row.submitted is None:  # Canvas's LATE, no time (deadlines.apply_late)
        lines = ["", say("grade.provenance.md.canvas_late", lang)]
    else:
        source = say(f"grade.provenance.md.from_{(row.submitted_from or 'none').replace('-', '_')}", lang)
        lines = ["", say("grade.export.md.handed_in", lang, time=iso(row.submitted), source=source)]
    if late.days:
        lines.append(say("grade.export.md.late", lang, n=late.days, points=number(late.penalty, lang)))
    return lines


def _changes_lines(ex: Exercise, changes: list, lang: str) -> list[str]:
    """The instructor's overrides of this grade, each with its reason."""
    if not changes:
        return []
    titles = {decl.id: pick(decl.title, lang) for decl in ex.checks}
    lines = ["", f"## {say('grade.export.md.changes', lang)}", ""]
    for change in changes:
        what = (
            say("grade.export.md.total", lang)
            if change.check == "total"
            else titles.get(change.check, change.check)
        )
        lines.append(
            "- "
            + say(
                "grade.export.md.change",
                lang,
                what=what,
                before=number(change.before, lang),
                after=number(change.points, lang),
                reason=md_code(change.reason),
            )
        )
    return lines


def _stamp_lines(row: BatchRow, stamp: dict | None, lang: str) -> list[str]:
    """What graded it: the tutor's version, the checks' version, when, and the grade's seed."""
    if stamp is None:
        return []
    return [
        "",
        "---",
        "",
        say(
            "grade.export.md.stamp",
            lang,
            tutor=stamp["tutor_version"],
            checks=stamp["checks_version"],
            time=stamp["graded_at"] or "-",
            seed=row.result.seed or "-",
        ),
    ]


def _csv(columns: tuple[str, ...], records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: csv_cell(value) for key, value in record.items()})
    return out.getvalue()


def write_exports(
    ex: Exercise,
    rows: list[BatchRow],
    folder: Path,
    lang: str,
    roster: Roster | None = None,
    force: bool = False,
    pick: str = "latest",
    lms: dict | None = None,
    overrides: tuple[list, str] | None = None,
    audit: dict | None = None,
    late: dict | None = None,
    similar: list | None = None,
) -> list[str]:
    """The module doc's files in `folder`, replacing an earlier export whole (with `force`), a gradebook
    row per student (roster.assign). `lms`: {"points", "assignment"} (lms_export); `overrides`: (the
    overrides, the file as shown); `audit`: {"tutor_version", "graded_at"}; `late`: the late policy
    (deadlines), after the overrides; `similar`: the --similar pairs (similar.csv). Returns warnings."""
    from tutor.grading.instructor.export_folder import FORMAT, MARKER, RowWriter, replace_folder
    from tutor.grading.instructor.lms_export import write_lms_exports
    from tutor.grading.instructor.overrides import apply_overrides

    graded, found = assign(rows, roster, pick, ex.file_name)
    changes, warnings = apply_overrides(graded, *overrides, lang) if overrides else ({}, [])
    lateness = _apply_late(graded, late)
    rows = _changed_rows(rows, graded, changes, lateness)
    audit = {"tutor_version": __version__, "graded_at": "", **(audit or {})}
    with_file = [(g, g.row) for g in graded if g.row is not None]
    feedback_files = feedback_names([r for _, r in with_file], [g.student for g, _ in with_file])
    names = dict(zip((id(g) for g, _ in with_file), feedback_files, strict=True))
    versions = {"version": VERSION, "checks_version": checks_version(ex)}
    checks = _check_records(ex, rows, roster, versions, changes)
    book = _gradebook(ex, graded, names, (versions, audit), changes, lateness)
    lms_info = {**(lms or {}), "graded_at": audit["graded_at"]}
    manifest = {"format": FORMAT, "exercise": ex.id, **versions, **audit, "files": len(rows)}
    stamp = {**versions, **audit}

    problems: list[str] = []

    def write(out: Path) -> None:
        row_file = RowWriter(out, lang)
        (out / "feedback").mkdir(mode=0o700)
        for e, row in with_file:
            said = changes.get(e.student.id, []), stamp, lateness.get(id(e))
            row_file(out / "feedback" / names[id(e)], partial(feedback, ex, row, e.student, lang, *said))
        problems.extend(write_lms_exports(out, ex, graded, names, lms_info, lang, _write_csv, row_file))
        problems.extend(row_file.problems)
        for record in book:  # a feedback file that could not be written is not named
            record["feedback"] = "" if out / record["feedback"] in row_file.lost else record["feedback"]
        _write_csv(out / "checks.csv", CHECKS_COLUMNS, checks)
        _write_csv(out / "gradebook.csv", GRADEBOOK_COLUMNS, book)
        if similar is not None:
            _write_csv(out / "similar.csv", SIMILAR_COLUMNS, [_similar_record(p) for p in similar])
        atomic_write_text(out / MARKER, json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")

    replace_folder(folder, write, force=force, lang=lang)
    return warnings + roster_warnings(found, pick, lang) + problems


def _gradebook(ex: Exercise, graded: list, names: dict, stamp: tuple, changes: dict, lateness: dict) -> list:
    """gradebook.csv's records, one per student: the row picked for them, its feedback file's name (by the
    entry's id), `stamp` (versions, audit), the overrides applied and the late policy's cells."""
    versions, audit = stamp
    return [
        _book_record(ex, entry, names.get(id(entry)), versions)
        | {"overrides": len(changes.get(entry.student.id, [])), **audit}
        | {"seed": entry.row.result.seed if entry.row else "", **_late_cells(entry, lateness)}
        for entry in graded
    ]


def _changed_rows(rows: list[BatchRow], graded: list, changes: dict, lateness: dict) -> list[BatchRow]:
    """`rows` with each row the overrides or the late policy changed in its changed form."""
    changed = {
        entry.row.file: entry.row
        for entry in graded
        if entry.row is not None and (entry.student.id in changes or id(entry) in lateness)
    }
    return [changed.get(row.file, row) for row in rows]


def _write_csv(path: Path, columns: tuple[str, ...], records: list[dict]) -> None:
    atomic_write_text(path, _csv(columns, records))


def _similar_record(pair) -> dict:
    def spans(ranges) -> str:
        return " ".join(f"{a}-{b}" for a, b in ranges)

    return {
        "file_a": pair.a,
        "file_b": pair.b,
        "similarity": round(pair.similarity, 3),
        "lines_a": spans(pair.lines_a),
        "lines_b": spans(pair.lines_b),
    }


def _check_records(
    ex: Exercise, rows: list[BatchRow], roster: Roster | None, versions: dict, changes: dict
) -> list[dict]:
    """checks.csv's rows: one per file and check, under the file's student, with the reason of an
    override that changed it."""
    decls = {decl.id: decl for decl in ex.checks}
    out = []
    for row in rows:
        student, _ = whose(row.file, roster)
        for check in row.result.checks:
            decl = decls.get(check.name)
            why = [o.reason for o in changes.get(student.id, []) if o.check == check.name]
            out.append(
                {
                    "student_id": student.id,
                    "file": row.file,
                    "check": check.name,
                    "status": check.status,
                    "points": check.points,
                    "max_points": decl.points if decl else check.max_points,
                    "message": check.message,
                    **versions,
                    "override": why[-1] if why else "",
                }
            )
    return out


def _book_record(ex: Exercise, entry, feedback_name: str | None, versions: dict) -> dict:
    """gradebook.csv's row of a student: their file's grade, or "missing" and 0 points without one."""
    person, row = entry.student, entry.row
    in_roster = "" if person.in_roster is None else ("yes" if person.in_roster else "no")
    if row is None:
        top = float(sum(decl.points for decl in ex.checks))
        return {
            "student_id": person.id,
            "name": person.name,
            "file": "",
            "total": 0.0,
            "max": top,
            "status": "missing",
            "in_roster": in_roster,
            "feedback": "",
            **versions,
            "isolation": "none",
            "files": 0,
            "owner_from": "",
            "picked_because": "",
        }
    return {
        "student_id": person.id,
        "name": person.name,
        "file": row.file,
        "total": row.result.score,
        "max": row.result.max_score,
        "status": row.result.status,
        "in_roster": in_roster,
        "feedback": f"feedback/{feedback_name}",
        **versions,
        "isolation": row.result.isolation.get("level", "none"),
        "files": entry.files,
        "owner_from": entry.owner_from,
        "picked_because": entry.because,
    }
