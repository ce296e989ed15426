"""One learner's app process, as textual-serve runs one, but started in the learner's bounds, never
through a shell with the learner's values in it, and ended for sure.

The app speaks textual-serve's protocol (Textual's web driver): after a `__GANGLION__` line on its
stdout, packets of a type byte (`D` screen data, `M` meta as JSON, `P` packed), a 4-byte length and the
payload; on its stdin the server sends `D` (keys) and `M` (resize, focus, blur, quit) packets. Of what
the app sends, only screen data and its exit reach the browser: `open_url` and file deliveries are
dropped (a served session offers no download), and a packet larger than PACKET_LIMIT ends the app.
Its stderr is kept to its last STDERR_KEPT bytes, for the server's log when it fails to start.

`stop()` asks the app to quit (it saves drafts and finishes its writes), waits `grace_s`, then kills
every process of the learner (tutor.serve.bounds) and waits until none is left: when it returns, the
learner has no process running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from pathlib import Path

from tutor.proc.spawn import PIPE, spawn_async
from tutor.serve.bounds import LearnerBounds
from tutor.serve.roster import LEARNERS_FOLDER
from tutor.serve.session import Served

LOG = logging.getLogger("tutor.serve")
PACKET_LIMIT = 16 * 2**20
STDERR_KEPT = 8192
PRELUDE = b"__GANGLION__\n"
APP_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TUTOR_CHECKPOINTS",
    "TUTOR_ALLOW_WEAK_BOX",
    "TUTOR_BOX_LANDLOCK_ABI",
)


class AppProcess:
    def __init__(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str,
        bounds: LearnerBounds,
        pass_fds: tuple[int, ...],
        on_data: Callable[[bytes], Awaitable[None]],
        on_exit: Callable[[], Awaitable[None]],
    ) -> None:
        self.argv, self.env, self.cwd, self.bounds, self.pass_fds = argv, env, cwd, bounds, pass_fds
        self.on_data, self.on_exit = on_data, on_exit
        self.proc: asyncio.subprocess.Process | None = None
        self.drawn = asyncio.Event()  # the app has sent its first screen
        self.drawn_at = 0.0  # when (idleness counts from then, or from the last key)
        self.stderr_tail = b""
        self._tasks: list[asyncio.Task] = []

    async def start(self, width: int, height: int) -> None:
        env = {**self.env, "COLUMNS": str(width), "ROWS": str(height)}
        self.proc = await spawn_async(
            self.bounds.command(self.argv),
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=env,
            cwd=self.cwd,
            pass_fds=self.pass_fds,
        )
        self.bounds.started(self.proc.pid)
        self.bounds.find_scope(self.proc.pid)
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._read_stderr())]

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        try:
            for _ in range(10):  # the prelude: a Textual app under the web driver
                line = await stdout.readline()
                if not line or line == PRELUDE:
                    break
            while True:
                head = await stdout.readexactly(5)
                size = int.from_bytes(head[1:], "big")
                if size > PACKET_LIMIT:
                    LOG.warning("an app sent a packet of %d bytes: ended", size)
                    break
                payload = await stdout.readexactly(size)
                if head[:1] == b"D":
                    if not self.drawn.is_set():
                        self.drawn_at = time.monotonic()
                        self.drawn.set()
                    await self.on_data(payload)
                elif head[:1] == b"M" and _meta_type(payload) == "exit":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            await self.on_exit()

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_KEPT:]

    async def _send(self, kind: bytes, payload: bytes) -> bool:
        if not self.alive or self.proc is None or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write(kind + len(payload).to_bytes(4, "big") + payload)
            await self.proc.stdin.drain()
        except (ConnectionError, RuntimeError):
            return False
        return True

    async def send_bytes(self, data: bytes) -> bool:
        return await self._send(b"D", data)

    async def send_meta(self, meta: dict) -> bool:
        return await self._send(b"M", json.dumps(meta).encode("utf-8"))

    async def stop(self, grace_s: float) -> None:
        """Quit (within `grace_s`), else kill; return once no process of the learner is left."""
        if self.proc is None:
            return
        if self.alive and grace_s > 0 and await self.send_meta({"type": "quit"}):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), grace_s)
        for _ in range(200):  # the app, and whatever it or the server started for it
            self.kill()
            if not self.alive:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.proc.wait(), 0.05)
            if not self.alive and self.bounds.empty():
                break
            await asyncio.sleep(0.02)
        await self.proc.wait()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def kill(self) -> None:
        """SIGKILL to the app and every process of its learner. The app is killed by its own pid too: it
        joins the learner's group only once its shell has run, and until it is reaped its pid is its own."""
        if self.alive and self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        self.bounds.kill()


def _meta_type(payload: bytes) -> str:
    try:
        meta = json.loads(payload)
    except (ValueError, RecursionError):
        return ""
    return str(meta.get("type", "")) if isinstance(meta, dict) else ""


def prepare_home(home: Path, folder: Path | None) -> None:
    """The learner's home, 0700, and everything in it the owner's only (folders 0700, files 0600), never
    following a link. Nothing of the learner's runs while this is done."""
    if folder is not None:
        (folder / LEARNERS_FOLDER).mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(folder / LEARNERS_FOLDER, 0o700)
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(home, 0o700)
    for here, folders, files in os.walk(home):
        for name in folders + files:
            path = os.path.join(here, name)
            with contextlib.suppress(OSError):
                mode = os.lstat(path).st_mode
                if (mode & 0o7777) & 0o077:
                    if os.path.isdir(path) and not os.path.islink(path):
                        os.chmod(path, 0o700)
                    elif os.path.isfile(path) and not os.path.islink(path):
                        os.chmod(path, 0o600)


def app_env(home: Path, served: Served) -> dict[str, str]:
    """The app's whole environment: none of the server's but where programs and libraries are, the
    locale and the web driver's (no VISUAL/EDITOR: the lab's built-in editor edits in the page)."""
    from tutor.settings import tutor_child_env

    env = {k: v for k, v in tutor_child_env().items() if k in APP_ENV or k.startswith("PYTHON")}
    env.update(
        TEXTUAL_DRIVER="textual.drivers.web_driver:WebDriver",
        TEXTUAL_FPS="60",
        TEXTUAL_COLOR_SYSTEM="truecolor",
        TERM_PROGRAM="textual",
        TERM_PROGRAM_VERSION=version("textual-serve"),
        HOME=str(home),
        TMPDIR=str(home / ".tmp"),
        OMP_NUM_THREADS="1",
        TUTOR_SERVED=served.to_env(),
    )
    return env
