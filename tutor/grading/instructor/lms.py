"""What an LMS's download says in a file's name: whose it is, and whether it came late.

    Canvas  "Download Submissions": leeann_101_5001_probe.py, chanbo_late_102_5002_probe-1.py
            (the student's name squashed, "late" when it was, the user's Canvas ID, the submission's id,
            the file's own name, "-1" added to a resubmission's)
    Moodle  "Download all submissions": Ann Lee_101_assignsubmission_file_/probe.py (a folder per
            student) or Ann Lee_101_assignsubmission_file_probe.py (flat); 101 is the participant's
            number, "Participant 101" in the grading worksheet

    found = lms_name("canvas.zip/chanbo_late_102_5002_probe.py")
    # LmsName(lms="canvas", user="102", name="chanbo", late=True, order=(5002,))

A zip's own name and the folders above the LMS's are not part of it. A name no LMS wrote is None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CANVAS = re.compile(r"(?P<name>[^_/]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<file>.+\.py)", re.I)
_MOODLE_FOLDER = re.compile(r"(?P<name>.+)_(?P<user>\d+)_assign(?:submission|feedback)_[a-z]+_")
_MOODLE_FLAT = re.compile(r"(?P<name>.+)_(?P<user>\d+)_assignsubmission_file_(?P<file>.+\.py)")
_RESUBMITTED = re.compile(r"-(\d+)\.py$")


@dataclass(frozen=True)
class LmsName:
    lms: str  # "canvas" | "moodle"
    user: str  # the LMS's id of the student (Canvas's ID, Moodle's participant number)
    name: str  # the student's name as the file's name has it
    late: bool  # the LMS marked the submission late (Canvas)
    order: tuple[int, ...]  # sorts a student's files oldest first, where the name tells (Canvas)


def lms_name(file: str) -> LmsName | None:
    parts = file.split("/")
    while len(parts) > 1 and parts[0].lower().endswith(".zip"):
        parts = parts[1:]
    for part in parts[:-1]:
        if found := _MOODLE_FOLDER.fullmatch(part):
            return LmsName("moodle", found["user"], found["name"], False, ())
    if found := _MOODLE_FLAT.fullmatch(parts[-1]):
        return LmsName("moodle", found["user"], found["name"], False, ())
    if found := _CANVAS.fullmatch(parts[-1]):
        again = _RESUBMITTED.search(found["file"])
        order = (int(found["sub"]), int(again[1]) if again else 0)
        return LmsName("canvas", found["user"], found["name"], bool(found["late"]), order)
    return None
