"""Where a batch's file came from: whose it is, when it was handed in, and which of a student's files
the grade is. The one place these are decided (docs/instructor.md, "Provenance"); the roster, the
deadlines, the exports, `--gradescope` and `class` ask here.

Whose: only the LMS's own layout at the top of the download says, never anything deeper. The top
entry of a file is the first part of its name under `--batch` (a folder's entry, or a member of the
zip given as `--batch`):

    Canvas      leeann_101_5001_rope.py, chanbo_LATE_102_5002_rope-1.py (Download Submissions: the
                sortable name squashed, LATE when Canvas marked it, the user's ID, the attachment's id,
                the file's own name, "-1" on a resubmission's), or a student's own zip so named
    Moodle      Ann Lee_101_assignsubmission_file_/rope.py (a folder per student) or flat
                Ann Lee_101_assignsubmission_file_rope.py; 101 is the participant number
    Blackboard  Rope_alee_attempt_2026-05-04-23-59-59_rope.py (Download Assignment: the assignment,
                the username, the attempt's time, the file's own name)

Everything under a top entry (in a student's folder or own zip) is that entry's student's, whatever
its own name says. A top entry no LMS named is a student of its own: a folder's name, or a file's
(or zip's) name without its extension. Each name is read from its start to the LMS's first marker,
Canvas's first: the part a student chose (the file's own name) comes after the LMS's prefix and can
change nothing. With an LMS's roster only that LMS's layout is read.

When: only the LMS's own record or the instructor's, in this order: the instructor's `--manifest`
("manifest"); Blackboard's attempt time in its top-level name ("blackboard"); a Moodle grading
worksheet given as `--roster`, its "Last modified (submission)" ("moodle-worksheet"); Canvas's LATE
marker, which has no time ("canvas-late": charged one late day, never the cutoff); else none ("none":
no late penalty). A file's own time (its mtime, a zip member's date) is shown (`file_time`), never
used: a student sets it, and Canvas and Moodle stamp every file of a download with the download's time.

Which: of a student's several files, those named as the exercise's file (`split_heads.py`, or
Canvas's resubmitted `split_heads-1.py`) first, all of them when none is; then the latest (the trusted
time, then the LMS's order: Canvas's attachment ids, then the name) or the best (the score, then the
latest). The row says why (`picked_because`: "only", "file-name", "latest", "best").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

LAYOUTS = ("canvas", "moodle", "blackboard")
OWNER_SOURCES = (*LAYOUTS, "roster", "folder", "file")
TIME_SOURCES = ("manifest", "blackboard", "moodle-worksheet", "canvas-late", "none")
TIMED = ("manifest", "blackboard", "moodle-worksheet")  # the sources that give a time
DOWNLOAD_STAMP_S = 5  # every file's own time within this: one download's stamp

_CANVAS = re.compile(r"(?P<name>[^_/]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<file>[^/]+)", re.I)
_MOODLE_FOLDER = re.compile(r"(?P<name>[^/]+?)_(?P<user>\d+)_assign(?:submission|feedback)_[a-z]+_")
_MOODLE_FLAT = re.compile(r"(?P<name>[^/]+?)_(?P<user>\d+)_assignsubmission_[a-z]+_(?P<file>[^/]+)")
_BLACKBOARD = re.compile(
    r"(?P<name>[^/]+?)_(?P<user>[^_/]+)_attempt_(?P<stamp>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)(?:_(?P<file>[^/]+))?"
)
_RESUBMITTED = re.compile(r"-(\d+)(?:\.[^.]*)?$")


@dataclass(frozen=True)
class Owner:
    id: str  # the student: the LMS's id (Canvas's ID, Moodle's participant number, Blackboard's username)
    name: str  # the student's name as the top entry has it ("" where it has none)
    source: str  # "canvas" | "moodle" | "blackboard" | "folder" | "file"
    own_name: str  # the file's own name, without the LMS's prefix
    late: bool = False  # Canvas marked the submission LATE
    order: tuple[int, ...] = ()  # the LMS's order of a student's files, oldest first (Canvas)
    stamp: float | None = None  # Blackboard's attempt time (the machine's local time)


def owner_of(file: str, layouts: tuple[str, ...] = LAYOUTS) -> Owner:
    """Whose `file` is (a name as reports show it, "/" between parts), by its top entry alone."""
    parts = file.split("/")
    top, nested = parts[0], len(parts) > 1
    for layout in layouts:
        found = _match(layout, top, nested)
        if found is None:
            continue
        own = parts[-1] if nested else (found["file"] or top)
        if layout == "canvas":
            again = _RESUBMITTED.search(found["file"])
            order = (int(found["sub"]), int(again[1]) if again else 0)
            return Owner(found["user"], found["name"], "canvas", own, bool(found["late"]), order)
        if layout == "blackboard":
            when = datetime.strptime(found["stamp"], "%Y-%m-%d-%H-%M-%S").astimezone().timestamp()
            return Owner(found["user"], found["user"], "blackboard", own, False, (), when)
        return Owner(found["user"], found["name"], "moodle", own)
    folder = nested and not top.lower().endswith(".zip")
    stem = top if folder else PurePosixPath(top).stem
    sid = stem if stem not in ("", ".", "..") else file.replace("/", "_")
    return Owner(sid, "", "folder" if folder else "file", parts[-1])


def _match(layout: str, top: str, nested: bool) -> re.Match | None:
    if layout == "canvas":
        return _CANVAS.fullmatch(top)
    if layout == "blackboard":
        return _BLACKBOARD.fullmatch(top)
    return (_MOODLE_FOLDER.fullmatch(top) if nested else None) or _MOODLE_FLAT.fullmatch(top)


def handed_in(row, owner: Owner, manifest: dict[str, float] | None, worksheet: dict[str, float]) -> tuple:
    """(time or None, source) of a row: the module doc's order. A manifest's time a merged report
    carries (`row.submitted_from == "manifest"`) stays."""
    if manifest and row.file in manifest:
        return manifest[row.file], "manifest"
    if row.submitted is not None and row.submitted_from == "manifest":
        return row.submitted, "manifest"
    if owner.stamp is not None:
        return owner.stamp, "blackboard"
    if owner.source == "moodle" and owner.id in worksheet:
        return worksheet[owner.id], "moodle-worksheet"
    if owner.late:
        return None, "canvas-late"
    return None, "none"


def stamp(rows: list, manifest: dict[str, float] | None, roster=None) -> None:
    """Each row's owner (and where it came from) and its submitted time (and where that came from), in
    place."""
    worksheet = roster.times if roster is not None else {}
    for row in rows:
        row.owner_id, row.owner_from = owned(row.file, roster)
        row.submitted, row.submitted_from = handed_in(
            row, owner_of(row.file, layouts(roster)), manifest, worksheet
        )


def owned(file: str, roster=None) -> tuple[str, str]:
    """(whose `file` is, where that came from): the roster's student where it names the file ("roster"
    for the tutor's, which names files; an LMS's names the owner its layout gives), else the layout's."""
    owner = owner_of(file, layouts(roster))
    student = roster.student_of(file) if roster is not None else None
    if student is None:
        return owner.id, owner.source
    return student.id, "roster" if roster.kind == "tutor" else owner.source


def layouts(roster) -> tuple[str, ...]:
    """The layouts read with `roster`: an LMS's roster, that LMS's alone."""
    return (roster.kind,) if roster is not None and roster.kind in LAYOUTS else LAYOUTS


def is_exercise_file(own_name: str, file_name: str) -> bool:
    """`own_name` is the exercise's file, or Canvas's resubmission of it (`rope-1.py`)."""
    if own_name == file_name:
        return True
    stem, suffix = PurePosixPath(file_name).stem, PurePosixPath(file_name).suffix
    return re.fullmatch(re.escape(stem) + r"-\d+" + re.escape(suffix), own_name) is not None


def latest_key(row, roster=None) -> tuple:
    owner = owner_of(row.file, layouts(roster))
    trusted = row.submitted if row.submitted is not None and row.submitted_from in TIMED else float("-inf")
    return (trusted, owner.order, row.file)


def pick_file(rows: list, pick: str, file_name: str, roster=None) -> tuple:
    """(the row a student's grade is, why): the module doc's rule."""
    if len(rows) == 1:
        return rows[0], "only"
    named = [row for row in rows if is_exercise_file(owner_of(row.file, layouts(roster)).own_name, file_name)]
    if len(named) == 1:
        return named[0], "file-name"
    candidates = named or rows
    if pick == "best":
        return max(candidates, key=lambda row: (row.result.score, latest_key(row, roster))), "best"
    return max(candidates, key=lambda row: latest_key(row, roster)), "latest"


def time_warnings(rows: list, late: dict | None, lang: str, roster=None) -> list[str]:
    """With a deadline: a warning for a Moodle worksheet's times not read, and one for the files with
    no trusted time nor Canvas's LATE (no penalty for them), saying so when every file's own time is
    one download's stamp."""
    from tutor.grading.instructor.names import shown_name
    from tutor.texts import say

    if not late or late.get("deadline") is None:
        return []
    warnings = []
    unread = roster.unread_times if roster is not None else []
    for line, cell in unread[:1]:
        warnings.append(
            say(
                "grade.provenance.unread_time",
                lang,
                n=len(unread),
                line=line,
                got=shown_name(cell),
                column="Last modified (submission)",
                example="Monday, 4 May 2026, 11:59 PM",
            )
        )
    untimed = [row for row in rows if row.submitted_from == "none"]
    if untimed:
        own = [row.file_time for row in rows if row.file_time is not None]
        stamped = len(own) > 1 and max(own) - min(own) <= DOWNLOAD_STAMP_S
        key = "grade.provenance.download_stamp" if stamped else "grade.provenance.no_time"
        warnings.append(say(key, lang, n=len(untimed), first=untimed[0].file, s=DOWNLOAD_STAMP_S))
    return warnings
