"""Run a full-screen app in a pseudo-terminal, as a learner's terminal would (real Textual driver):
send keys, wait for text to appear in its output. Shared by bench_startup.py and
bench_responsiveness.py."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]|\x1b\][^\x07]*\x07")


class PtyApp:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None, size: tuple[int, int] = (100, 30)):
        master, slave = os.openpty()
        cols, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        # as a learner's terminal: none of the tutor's variables, and Python keeps the bytecode it
        # compiles (a session that sets PYTHONDONTWRITEBYTECODE had every start compile the tutor)
        full_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("TUTOR_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        full_env |= {
            "TERM": "xterm-256color",
            "PYTHONPATH": str(ROOT),
            "COLUMNS": str(cols),
            "LINES": str(rows),
        }
        full_env |= env or {}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=full_env, start_new_session=True, cwd=ROOT
        )
        os.close(slave)
        self.master = master
        self.seen = b""  # output with escape sequences removed, since the last `expect`

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.seen += _ESCAPES.sub(b"", chunk)
        return True

    def expect(self, text: str, timeout: float = 60.0) -> float:
        """Wait until `text` appears in the output (since the last expect); returns the time it appeared."""
        needle = text.encode()
        deadline = time.perf_counter() + timeout
        while needle not in self.seen:
            left = deadline - time.perf_counter()
            if left <= 0 or (not self._read(min(left, 0.5)) and self.proc.poll() is not None):
                tail = self.seen[-400:].decode("utf-8", "replace")
                raise TimeoutError(f"{text!r} did not appear within {timeout} s; last output: {tail!r}")
        now = time.perf_counter()
        self.seen = self.seen[self.seen.index(needle) + len(needle) :]
        return now

    def send(self, keys: str) -> float:
        self.drain()
        self.seen = b""
        now = time.perf_counter()
        os.write(self.master, keys.encode())
        return now

    def drain(self) -> None:
        while self._read(0):
            pass

    def wait_exit(self, timeout: float = 30.0) -> float:
        deadline = time.perf_counter() + timeout
        while self.proc.poll() is None:
            if time.perf_counter() > deadline:
                self.kill()
                raise TimeoutError(f"the app did not exit within {timeout} s")
            self._read(0.05)
        return time.perf_counter()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()

    def close(self) -> None:
        self.kill()
        os.close(self.master)


def python() -> str:
    return sys.executable
