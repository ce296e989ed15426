"""Waiting for processes to end, for tests that assert something is no longer running.

A test never sleeps and then looks: it waits for the event that proves the absence, each process's exit
(its pidfd turns readable when it ends), and fails when the deadline passes first.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable


def still_running(pids: Iterable[int], timeout: float = 30.0) -> set[int]:
    """Waits until each of `pids` has ended, up to `timeout` seconds in all; the ones still running."""
    deadline = time.monotonic() + timeout
    left = set()
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # ended and reaped already
        try:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                left.add(pid)
        finally:
            os.close(fd)
    return left
