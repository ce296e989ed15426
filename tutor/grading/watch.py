"""Re-grade on save: poll the file's mtime and size (no extra dependency, works on every platform)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def stamp(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size), or None while the file is missing."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def watch_file(
    path: Path,
    on_change: Callable[[], None],
    *,
    stop: Callable[[], bool] = lambda: False,
    poll_s: float = 0.3,
    settle_s: float = 0.15,
    max_changes: int | None = None,
    since: tuple[int, int] | None = None,
) -> int:
    """Call `on_change` whenever the file's stamp changes (after it stays put for `settle_s`).

    `since`: the stamp the caller last acted on (take it before grading the first time, so a save
    during that grading is not missed). Returns the number of changes seen, when `stop()` says so
    or after `max_changes`. Editors that
    save by replacing the file (write temp + rename) show up as a change too; a file that vanishes
    for a moment is simply waited for.
    """
    path = Path(path)
    last = since if since is not None else stamp(path)
    seen = 0
    while not stop():
        time.sleep(poll_s)
        now = stamp(path)
        if now is None or now == last:
            continue
        time.sleep(settle_s)  # let the editor finish writing
        settled = stamp(path)
        if settled != now:
            continue
        last = now
        seen += 1
        on_change()
        if max_changes is not None and seen >= max_changes:
            break
    return seen
