"""The server's connections, bounded before any token is read.

    door = Door(max_open, per_address)                   # the limits (Door.for_open_files: from RLIMIT_NOFILE)
    server = await door.listen(runner.server, sock)      # asyncio's server, each connection guarded
    app = web.Application(middlewares=[door.middleware]) # marks a request's headers as arrived

- **In all, and per address:** a connection past either limit is answered `503` at once and closed, so
  a flood from one address leaves room for everyone else, and no flood runs the process out of files.
- **A header timeout:** a connection that has not sent a whole request head within `header_s` (at
  first, and again after each reply while it is kept alive) is cut; aiohttp has no such timeout itself.
- **Keep-alive bounded:** idle at most `keepalive_s` between requests (aiohttp's keepalive_timeout) and at
  most `requests_per_connection` requests on one connection.
- **Errors logged once per interval:** `quiet_logs()` installs a filter that lets one record of each kind
  through per interval, with the count of those held back; the event loop's accept errors ("Too many
  open files") go the same way, as a line without a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import time
from collections import Counter
from collections.abc import Callable

from aiohttp import web

LOG = logging.getLogger("tutor.serve")
REFUSAL = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
LOG_EVERY_S = 10.0
FILES_PER_SESSION = 12  # an app's pipes, its relay, the forks it asked for, its websocket
FILES_KEPT = 64  # the server's own: the listening socket, logs, the warm processes, static files


def raise_open_files() -> int:
    """The open-files limit raised to its hard limit; the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class _Guarded(asyncio.Protocol):
    """aiohttp's RequestHandler for one connection, behind the door's limits and header timeout."""

    def __init__(self, handler: asyncio.Protocol, door: Door) -> None:
        self.handler, self.door = handler, door
        self.transport: asyncio.Transport | None = None
        self.address = ""
        self.admitted = False
        self.in_request = False
        self.requests = 0
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if not self.door.admit(self.address):
            with contextlib.suppress(Exception):
                transport.write(REFUSAL)
            transport.close()
            return
        self.admitted, self.transport = True, transport
        self.door.by_transport[transport] = self
        self.arm()
        self.handler.connection_made(transport)

    def arm(self) -> None:
        """The next request head must arrive within the header timeout."""
        self.disarm()
        self._timer = asyncio.get_running_loop().call_later(self.door.header_s, self._too_slow)

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        if self.transport is not None and not self.in_request:
            self.door.count("header timeout")
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        if self.admitted:
            self.handler.data_received(data)

    def eof_received(self):
        return self.handler.eof_received() if self.admitted else None

    def pause_writing(self) -> None:
        if self.admitted:
            self.handler.pause_writing()

    def resume_writing(self) -> None:
        if self.admitted:
            self.handler.resume_writing()

    def connection_lost(self, exc) -> None:
        if not self.admitted:
            return
        self.disarm()
        self.door.release(self.address)
        self.door.by_transport.pop(self.transport, None)
        self.handler.connection_lost(exc)


class Door:
    """How many connections, from where, and how long one may take to say what it wants."""

    def __init__(
        self, max_open: int, per_address: int, *, header_s: float = 10.0, requests_per_connection: int = 100
    ) -> None:
        self.max_open, self.per_address = max_open, per_address
        self.header_s, self.requests_per_connection = header_s, requests_per_connection
        self.open: Counter[str] = Counter()
        self.by_transport: dict[object, _Guarded] = {}
        self.refused: Counter[str] = Counter()  # why, since the last line about it

    @classmethod
    def for_open_files(cls, open_files: int, sessions: int, per_address: int, **kw) -> Door:
        """A door whose connections, with `sessions` apps running, stay within `open_files`, and of
        which one address holds at most a quarter."""
        room = max(16, min(open_files - FILES_KEPT - FILES_PER_SESSION * sessions, 8192))
        return cls(room, max(4, min(per_address, room // 4)), **kw)  # no one address takes it all

    def admit(self, address: str) -> bool:
        if sum(self.open.values()) >= self.max_open:
            self.count("connections in all at the limit")
            return False
        if self.open[address] >= self.per_address:
            self.count("connections from one address at the limit")
            return False
        self.open[address] += 1
        return True

    def release(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]

    def count(self, why: str) -> None:
        self.refused[why] += 1
        LOG.warning("connection refused: %s", why)  # held to a line per interval by quiet_logs

    async def listen(self, server: Callable[[], asyncio.Protocol], sock: socket.socket) -> asyncio.Server:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_loop_errors)
        return await loop.create_server(lambda: _Guarded(server(), self), sock=sock, backlog=512)

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        """A request's head has arrived: no header timeout while it is answered; the next one's starts
        when the reply is out. A connection is closed after `requests_per_connection`."""
        guarded = self.by_transport.get(request.transport)
        if guarded is None:
            return await handler(request)
        guarded.in_request = True
        guarded.disarm()
        guarded.requests += 1
        try:
            response = await handler(request)
            if guarded.requests >= self.requests_per_connection and isinstance(response, web.Response):
                response.force_close()
            return response
        finally:
            guarded.in_request = False
            if guarded.transport is not None and not guarded.transport.is_closing():
                guarded.arm()


def _loop_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The event loop's errors as one line each (no traceback), held to a line per interval: an accept
    that failed for want of files is said once in ten seconds, not once per connection."""
    error = context.get("exception")
    detail = f"{type(error).__name__}: {error}" if error is not None else ""
    LOG.error("%s %s", context.get("message", "event loop error"), detail)


class _OncePerInterval(logging.Filter):
    """One record of each kind (logger and message template) per interval; the next says how many
    were held back."""

    def __init__(self, every_s: float = LOG_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self.last: dict[tuple[str, str], float] = {}
        self.held: Counter[tuple[str, str]] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        if now - self.last.get(key, -self.every_s) < self.every_s:
            self.held[key] += 1
            return False
        self.last[key] = now
        if held := self.held.pop(key, 0):
            record.msg = f"{record.msg} (and {held} more like it in the last {self.every_s:g} s)"
        if record.exc_info and isinstance(record.exc_info[1], OSError):
            record.msg = f"{record.msg}: {record.exc_info[1]}"
            record.exc_info = None  # an OSError's traceback says nothing its line does not
        return True


def quiet_logs() -> None:
    """Every log line of the server (aiohttp's, asyncio's, the tutor's) through one filter, to stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s", "%H:%M:%S"))
    handler.addFilter(_OncePerInterval())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
