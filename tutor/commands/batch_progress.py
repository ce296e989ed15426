"""A batch's progress on stderr, with the time left at the pace so far: on a terminal one line redrawn
as a bar (`rope  [██████······]  12/30  about 14 s left`), on a pipe or a log a line at each tenth of
the files (and the first and the last), so a 500-file batch writes a dozen lines, not 500.

    progress = BatchProgress("rope", "en", sys.stderr)
    grade_folder(..., on_start=progress.start, on_done=progress.done)
    progress.finish()
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from tutor.texts import say

BAR = 24


def eta_text(seconds: float | None, lang: str) -> str:
    """`about 14 s`, `about 3 min`, or that it is not known yet."""
    if seconds is None:
        return say("grade.batch.eta_unknown", lang)
    if seconds < 90:
        return say("grade.batch.eta_s", lang, n=max(1, round(seconds)))
    return say("grade.batch.eta_min", lang, n=round(seconds / 60))


class BatchProgress:
    def __init__(self, exercise: str, lang: str, out: TextIO, tty: bool | None = None):
        self.exercise, self.lang, self.out = exercise, lang, out
        self.tty = out.isatty() if tty is None else tty
        self.total, self.count, self.started = 0, 0, time.monotonic()
        self.lock = threading.Lock()

    def start(self, total: int) -> None:
        self.total, self.started = total, time.monotonic()
        if total:
            self._show(say("grade.batch.progress_start", self.lang, id=self.exercise, n=total), 0)

    def done(self, count: int) -> None:
        with self.lock:
            self.count = count
            elapsed = time.monotonic() - self.started
            left = elapsed / count * (self.total - count) if count else None
            line = say(
                "grade.batch.progress",
                self.lang,
                id=self.exercise,
                done=count,
                n=self.total,
                eta=eta_text(left, self.lang),
            )
            tenth = count * 10 // self.total != (count - 1) * 10 // self.total
            if self.tty or tenth or count in (1, self.total):
                self._show(line, count)

    def finish(self) -> None:
        if not self.total:
            return
        seconds = f"{time.monotonic() - self.started:.1f}"
        line = say("grade.batch.progress_done", self.lang, id=self.exercise, n=self.total, seconds=seconds)
        if self.tty:
            self.out.write("\r\033[K" + line + "\n")
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def _show(self, line: str, count: int) -> None:
        if self.tty:
            filled = count * BAR // self.total if self.total else 0
            self.out.write(f"\r\033[K[{'█' * filled}{'·' * (BAR - filled)}] {line}")
        else:
            self.out.write(line + "\n")
        self.out.flush()
