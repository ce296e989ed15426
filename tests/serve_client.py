"""A small client of the served tutor, for tests and benchmarks: what a browser does, without one.

    served = Served("--roster", csv, "--dir", folder, folder=folder)    # the real server (tests/test_serve.py)
    async with Learner(served.links()["ana"]) as ana:                   # the link, its cookie, the page
        await ana.open()                                                # the websocket: the app starts
        await ana.wait_for("Multi-head attention")                      # its screen, played into pyte
        await ana.press("x")                                            # keys as the page sends them

`Learner.ws` is the websocket itself, for messages the page never sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import json
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import pyte

from tests.conftest import ROOT, run_tutor_env

START_S, STOP_S = 120.0, 30.0  # a server prints its address, and ends after its SIGTERM, within these
SPLIT = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads"
KEYS = {
    "enter": "\r",
    "escape": "\x1b",
    "down": "\x1b[B",
    "up": "\x1b[A",
    "tab": "\t",
    "ctrl+s": "\x13",
    "backspace": "\x7f",
    "ctrl+q": "\x11",
    "ctrl+p": "\x10",
    "f1": "\x1bOP",
}


class Served:
    """A `python -m tutor serve` process; its base URL and (with a roster) every learner's link. Its
    stderr goes to a file (a flood's log lines cannot fill a pipe and stall it): `stderr()` reads it."""

    def __init__(
        self,
        *args: str,
        home: Path | None = None,
        folder: Path | None = None,
        prefix=(),
        preexec_fn=None,
        env: dict[str, str] | None = None,
        port: int = 0,
        python: str = sys.executable,
        cwd: Path = ROOT,
    ) -> None:
        self.folder = folder
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [*prefix, python, "-m", "tutor", "serve", "--port", str(port), *args],
            cwd=cwd,
            # a server that hangs is aborted with its threads' tracebacks (stop)
            env={**run_tutor_env(home), "PYTHONFAULTHANDLER": "1", **(env or {})},
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            preexec_fn=preexec_fn,
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], START_S)
        self.first_line = self.proc.stdout.readline() if ready else ""
        found = re.search(r"http://127\.0\.0\.1:\d+", self.first_line)
        if not (found or port):
            said = self.stop()
            raise AssertionError(f"the server printed no address within {START_S:.0f} s: {said}")
        self.base = found.group(0) if found else f"http://127.0.0.1:{port}"  # links show --public-url
        single = re.search(r"http://\S+/learn/[\w-]+", self.first_line)
        self.single_link = single.group(0) if single else None

    def links(self) -> dict[str, str]:
        """Every learner's link, at this server's address."""
        with open(self.folder / "links.csv", encoding="utf-8") as fh:
            return {row["id"]: self.base + "/learn/" + row["token"] for row in csv.DictReader(fh)}

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def stop(self) -> str:
        """Stop the server; all it printed. One that has not ended STOP_S after its SIGTERM fails the
        test with where each of its threads was (SIGABRT: faulthandler's tracebacks), and is killed."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            running = self.proc.poll() is None
            if running:
                self.proc.send_signal(signal.SIGABRT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(5)
            self.proc.kill()
            self.proc.stdout.close()  # a process it started may hold the pipe open
            self.proc.wait()
            what = "was still running" if running else "had ended, and something it started held its output"
            raise AssertionError(
                f"the server {what} {STOP_S:.0f} s after its SIGTERM:\n{self.stderr()}"
            ) from None
        return self.first_line + out + self.stderr()


class Learner:
    """One learner's browser: a cookie jar, a websocket, and the screen the app draws."""

    def __init__(self, link: str, width: int = 100, height: int = 30) -> None:
        self.link, self.base = link, link.split("/learn/")[0]
        self.width, self.height = width, height
        self.http: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.ByteStream(self.screen)
        self.received = 0
        self.close_code: int | None = None
        self._reader: asyncio.Task | None = None
        self.frame_times: list[float] = []

    async def __aenter__(self) -> Learner:
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))  # 127.0.0.1 is an IP
        await self.enter()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
        await self.http.close()

    async def enter(self) -> tuple[int, str]:
        """The link, as the browser follows it: the cookie, then the page at /learn/."""
        async with self.http.get(self.link, allow_redirects=False) as reply:
            await reply.read()
        async with self.http.get(self.base + "/learn/") as reply:
            return reply.status, await reply.text()

    async def open(self) -> None:
        url = self.base.replace("http:", "ws:") + f"/learn/ws?width={self.width}&height={self.height}"
        self.ws = await self.http.ws_connect(url, max_msg_size=0, origin=self.base)  # as the page's own
        self.close_code = None
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.received += len(message.data)
                self.frame_times.append(time.perf_counter())
                self.stream.feed(message.data)
        self.close_code = self.ws.close_code

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    @property
    def closed(self) -> bool:
        return self._reader is not None and self._reader.done()

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    async def wait_for(self, *wanted: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if all(w in text for w in wanted):
                return text
            if self.closed:
                break
            await asyncio.sleep(0.05)
        raise AssertionError(
            f"not on the screen after {timeout} s: {wanted} (closed: {self.close_code})\n{self.text()}"
        )

    async def wait_closed(self, timeout: float = 60.0) -> int | None:
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        return self.close_code

    async def send(self, *message) -> None:
        await self.ws.send_str(json.dumps(list(message)))

    async def press(self, *keys: str) -> None:
        for key in keys:
            await self.send("stdin", KEYS.get(key, key))
            await asyncio.sleep(0.05)

    async def type(self, text: str) -> None:
        """`text` as one message, as a paste arrives."""
        await self.send("stdin", text)

    async def keys(self, text: str) -> None:
        """`text` a key at a time, as it is typed (the command palette searches on each key)."""
        await self.press(*text)


def descendants(pid: int) -> list[int]:
    """The processes under `pid`, from /proc/PID/task/*/children."""
    from pathlib import Path

    out, todo = [], [pid]
    while todo:
        here = todo.pop()
        try:
            tasks = list(Path(f"/proc/{here}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
        if here != pid:
            out.append(here)
    return out


def app_processes(server_pid: int) -> list[int]:
    """The learners' app processes under a server (not its warm processes, nor what an app forked)."""
    from pathlib import Path

    found = []
    for pid in descendants(server_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--home" in argv and b"tutor" in argv:
            found.append(pid)
    return found


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def open_lab(learner: Learner) -> str:
    """x on home: the split-heads lab, its predictions answered (the answers its exercise.toml keeps)."""
    import tomllib

    with open(SPLIT / "exercise.toml", "rb") as fh:
        answers = [p["answer"] for p in tomllib.load(fh)["predict"]]
    await learner.wait_for("Multi-head attention")
    await learner.press("x")
    for i, answer in enumerate(answers, 1):
        await learner.wait_for(f"{i}/{len(answers)}")
        await learner.type(answer)
        await learner.press("enter")
        await learner.wait_for("✓")
        await learner.press("enter")
    return await learner.wait_for("Your file")


async def run_heads(learner: Learner) -> str:
    """Enter on home: the first lesson; e: its first experiment (heads); r: run it."""
    await learner.wait_for("Multi-head attention")
    await learner.press("enter")
    await learner.wait_for("Splitting C into heads")
    await learner.press("e")
    await learner.wait_for("r: run")
    await learner.press("r")
    return await learner.wait_for("3,168", timeout=120)
