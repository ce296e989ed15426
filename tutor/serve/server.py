"""The web server behind `python -m tutor serve`: textual-serve's static files and protocol, with a door.

textual-serve (Textualize's own) runs a Textual app as a child process per browser connection and relays
its screen over a websocket to xterm.js in the page. Here its static files (xterm.js, its CSS, the Roboto
Mono font) are served as they are; the routes, the page, the sessions and the app processes are the
tutor's own:

    GET /learn/{token}   the learner's link: answered with a cookie holding the token (HttpOnly,
                         SameSite=Strict, Secure behind TLS) and a page that moves on to /learn/ at once
                         (a refusal page for a wrong or expired token); the token is in no other URL
    GET /learn/          the tutor's page, for the cookie's learner
    GET /learn/ws        the websocket that runs that learner's app
    GET /static/...      textual-serve's static files, served from the installed package
    anything else        404 (the bare address says a link is needed)

**Behind a proxy that logs in** (`serve --unix-socket PATH`, as JupyterHub's jupyter-server-proxy runs
it, tutor.serve.hub): one learner, the user the server runs as, and no link: whoever reaches the socket
is that learner, because the socket lies in a folder only they can enter (tutor.serve.hub.bind_socket)
and the proxy in front lets only them through. The page is `/`, its websocket `/ws`, the static files
`/static/...`, all addressed relative to the page, so the tutor works under any prefix
(`/user/NAME/tutor/`).

**Sessions.** One app process per learner, always: a learner's connections take turns under a lock of
theirs, a new one closes the one before (its tab says so), and the app before has ended, with every
process it started, before the next starts. A connection waits its turn (at most TURN_WAIT_S, then it
is told to try again); after BACKOFF_AFTER starts within BACKOFF_WINDOW_S each further one waits
longer (doubling up to BACKOFF_MAX_S), so a reconnect storm starts a few apps, not one per connect. The
cap (`max_sessions`) and the idle end count the app processes themselves, from their start to their end.
A session ends when its learner's link expires or is renewed (links.csv is read again when it changes).

**Bounds and apartness.** Each app runs in its learner's bounds (tutor.serve.bounds), restricts itself to
its home (tutor.serve.confine), and asks the class's one warm judge and one warm experiment process for
forks (tutor.serve.forks). Homes are 0700, their files 0600.

**Messages.** Of what a websocket sends, only what the page sends is relayed: `["stdin", text]`,
`["resize", {"width", "height"}]`, `["ping", text]`, `["blur"]`, `["focus"]`, each checked whole; any other
message is dropped and the session goes on. Nothing logs a request line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import textual_serve
from aiohttp import WSMsgType, web

from tutor.serve import roster
from tutor.serve.app_process import AppProcess, app_env, prepare_home
from tutor.serve.bounds import LearnerBounds, Limits, Placement
from tutor.serve.forks import AppRelay, Cooling, Warm
from tutor.serve.pages import MAX_MESSAGE, PAGE, link_page, notice_page, parse_message, tutor_page
from tutor.serve.roster import RosterLearner, token_owner
from tutor.serve.session import Served

LOG = logging.getLogger("tutor.serve")
STATIC = Path(textual_serve.__file__).parent / "static"
CODES = {"idle": 4000, "taken": 4001, "link": 4002, "busy": 4003, "full": 4004}  # websocket close codes
TURN_WAIT_S = 20.0  # a connection waits this long for the learner's app before to end
BACKOFF_AFTER, BACKOFF_WINDOW_S, BACKOFF_MAX_S = 3, 60.0, 16.0
QUIT_GRACE_S = 3.0  # an app asked to quit (it saves a draft, finishes its writes), then killed
SHUTDOWN_S = 15.0  # a stopping server waits this long for its sessions to end as they do when left


@dataclass
class ServeConfig:
    learners: list[RosterLearner]
    lessons_dir: Path
    folder: Path | None  # None: each learner's home is given in `homes` (the single-learner server)
    homes: dict[str, Path] = field(default_factory=dict)
    idle_minutes: float = 30.0
    max_sessions: int = 40
    title: str = "Attention Tutor"
    limits: Limits = field(default_factory=Limits)
    per_address: int = 128  # connections open from one address
    secure: bool = False  # behind TLS (the public URL is https): cookies are Secure
    public_url: str | None = None  # --public-url: the only origin its pages have (None: the Host's)
    proxied: bool = False  # behind a proxy that logs in (--unix-socket): its one learner, no cookie
    exchange: Path | None = None  # behind the hub: the course folder its learner's standing goes to

    def home(self, learner: RosterLearner) -> Path:
        return self.homes[learner.id] if self.folder is None else learner.home(self.folder)


@dataclass(eq=False)
class Conn:
    """One websocket and what reads it. Only its own handler closes it: anyone else `end`s it, and the
    handler closes it with that code once the reader has stopped (so the close handshake is whole)."""

    websocket: web.WebSocketResponse
    inbox: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(maxsize=256))
    reader: asyncio.Task | None = None
    code: int = 1000  # the close code it ends with

    def end(self, code: int) -> None:
        if self.reader is not None and not self.reader.done():
            self.code = code
            self.reader.cancel()

    @property
    def gone(self) -> bool:
        return self.reader is None or self.reader.done()


@dataclass
class Running:
    """One learner's app process, from its start until it and all it started have ended."""

    learner: RosterLearner
    conn: Conn
    app: AppProcess
    relay: AppRelay
    bounds: LearnerBounds
    last_input: float = field(default_factory=time.monotonic)

    def touched(self) -> None:
        self.last_input = time.monotonic()


@dataclass
class Turns:
    """A learner's connections: the lock they take turns under, the newest, and when apps started."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    newest: Conn | None = None
    starts: deque[float] = field(default_factory=lambda: deque(maxlen=32))
    cooling: Cooling = field(default_factory=Cooling)  # their forks ended at the memory cap

    def backoff_s(self, now: float) -> float:
        recent = [t for t in self.starts if now - t < BACKOFF_WINDOW_S]
        if len(recent) < BACKOFF_AFTER:
            return 0.0
        wait = min(BACKOFF_MAX_S, 2.0 ** (len(recent) - BACKOFF_AFTER))
        return max(0.0, recent[-1] + wait - now)


class TutorServer:
    def __init__(self, config: ServeConfig, placement: Placement, warm: Warm, port: int = 0) -> None:
        self.config, self.placement, self.warm = config, placement, warm
        self.cookie = f"tutor-{port}"  # per port: two servers on one host keep their own
        self.apps: dict[str, Running] = {}
        self.turns: dict[str, Turns] = {}
        self._page = PAGE.read_text(encoding="utf-8")  # the tutor's page, its texts filled in per learner
        self._tasks: set[asyncio.Task] = set()
        self._links_seen: float | None = None
        self.closing = False  # the server is stopping

    # --- the door --------------------------------------------------------------------------------
    def _full(self, learner: RosterLearner) -> bool:
        return learner.id not in self.apps and len(self.apps) >= self.config.max_sessions

    def _check(self, learner: RosterLearner | None) -> str:
        if learner is None:
            return "refused"
        return "expired" if learner.expired() else ""

    def _cookie_learner(self, request: web.Request) -> tuple[RosterLearner | None, str]:
        if self.config.proxied:  # the proxy in front logged them in; only they reach the socket
            return self.config.learners[0], ""
        learner = token_owner(self.config.learners, request.cookies.get(self.cookie, ""))
        why = self._check(learner)
        return (learner, "") if not why else (None, why)

    async def handle_link(self, request: web.Request) -> web.Response:
        """The link: its token becomes a cookie, and the page moves on to an address without it."""
        token = request.match_info.get("token", "")
        learner = token_owner(self.config.learners, token)
        if why := self._check(learner):
            return notice_page(request, why, 403)
        assert learner is not None  # _check refuses None
        response = link_page(learner.lang, self.config.title)
        left = learner.expires - time.time()
        response.set_cookie(
            self.cookie,
            token,
            path="/learn/",
            httponly=True,
            samesite="Strict",
            secure=self.config.secure or request.secure,
            max_age=int(left) if left < 10 * 365 * 86400 else None,
        )
        return response

    async def handle_page(self, request: web.Request) -> web.Response:
        learner, why = self._cookie_learner(request)
        if learner is None:
            return notice_page(request, why if why != "refused" else "home", 403)
        if self._full(learner):
            return notice_page(request, "full", 503)
        static = "static/" if self.config.proxied else "/static/"  # under the proxy's prefix: relative
        return tutor_page(
            self._page, learner.lang, self.config.title, self.config.idle_minutes, CODES, static
        )

    async def handle_root(self, request: web.Request) -> web.Response:
        return notice_page(request, "home", 403)

    # --- the sessions ----------------------------------------------------------------------------
    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if not same_origin(request, self.config.public_url):
            return notice_page(request, "refused", 403)
        learner, why = self._cookie_learner(request)
        if learner is None:
            return notice_page(request, why, 403)
        if self._full(learner):
            return notice_page(request, "full", 503)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_MESSAGE, timeout=3.0)
        await websocket.prepare(request)
        conn = Conn(websocket)
        conn.reader = asyncio.create_task(self._read(websocket, conn.inbox))
        turns = self.turns.setdefault(learner.id, Turns())
        if turns.newest is not None:  # the newest tab wins
            turns.newest.end(CODES["taken"])
        turns.newest = conn
        try:
            if await self._take_turn(turns, conn):
                try:
                    await self._session(learner, conn, request)
                finally:
                    turns.lock.release()
        finally:
            conn.end(conn.code)
            await asyncio.gather(conn.reader, return_exceptions=True)
            with contextlib.suppress(ConnectionError, RuntimeError):
                await websocket.close(code=conn.code)
        return websocket

    async def _take_turn(self, turns: Turns, conn: Conn) -> bool:
        """Wait for the learner's app before to end, and for the back-off; False (the lock not held)
        when this connection ended meanwhile, was superseded, or waited too long."""
        taking = asyncio.create_task(turns.lock.acquire())
        assert conn.reader is not None  # the connection's reader runs from its start
        await asyncio.wait({taking, conn.reader}, timeout=TURN_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        if not taking.done():
            taking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await taking
        if not taking.done() or taking.cancelled():
            conn.end(CODES["busy"])
            return False
        wait = turns.backoff_s(time.monotonic())
        if wait > 0 and not conn.gone:
            await asyncio.wait({conn.reader}, timeout=wait)
        if conn.gone or turns.newest is not conn:
            turns.lock.release()
            return False
        return True

    async def _session(self, learner: RosterLearner, conn: Conn, request: web.Request) -> None:
        if self.closing:  # the server is stopping: no app starts
            conn.end(1001)
            return
        if self._full(learner):
            conn.end(CODES["full"])
            return
        home = self.config.home(learner)
        prepare_home(home, self.config.folder)
        bounds = self.placement.learner(learner.id)
        relay = AppRelay(self.warm, bounds, home, self.turns[learner.id].cooling)
        limits = self.config.limits
        folder = str(self.config.folder) if self.config.folder else None
        caps = (limits.memory_bytes, limits.cpu_cores, limits.home_bytes)
        served = Served(relay.theirs.fileno(), learner.id, folder, *caps)
        where = ["--home", str(home), "--lessons", str(self.config.lessons_dir)]
        argv = [sys.executable, "-m", "tutor", "--lang", learner.lang, *where]

        async def send(data: bytes) -> None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await conn.websocket.send_bytes(data)

        async def ended() -> None:  # the app quit (ctrl+q), or died
            conn.end(1000)

        app = AppProcess(
            argv,
            env=app_env(home, served),
            cwd=str(home),
            bounds=bounds,
            pass_fds=(relay.theirs.fileno(),),
            on_data=send,
            on_exit=ended,
        )
        running = self.apps[learner.id] = Running(learner, conn, app, relay, bounds)
        self.turns[learner.id].starts.append(time.monotonic())
        try:
            size = request.query
            await app.start(_size(size.get("width"), 80), _size(size.get("height"), 24))
            relay.start()
            await self._relay(running)
        finally:
            await app.stop(QUIT_GRACE_S if app.drawn.is_set() else 0.0)
            await relay.close()
            bounds.remove()
            del self.apps[learner.id]
            self._publish(learner, home)
            if not app.drawn.is_set() and app.stderr_tail:
                tail = app.stderr_tail[-800:].decode("utf-8", "replace")
                LOG.warning("an app ended before its first screen: %s", tail)

    async def _read(self, websocket: web.WebSocketResponse, inbox: asyncio.Queue) -> None:
        """What the page sends, checked, into `inbox`; None last, once the websocket has closed."""
        try:
            async for message in websocket:
                if message.type != WSMsgType.TEXT or (parsed := parse_message(message.data)) is None:
                    continue
                if not inbox.full():
                    inbox.put_nowait(parsed)
        finally:
            while inbox.full():
                inbox.get_nowait()
            inbox.put_nowait(None)

    async def _relay(self, running: Running) -> None:
        app, websocket = running.app, running.conn.websocket
        while (item := await running.conn.inbox.get()) is not None:
            kind, value = item
            if kind == "stdin":
                running.touched()
                await app.send_bytes(value)
            elif kind == "resize":
                await app.send_meta({"type": "resize", "width": value[0], "height": value[1]})
            elif kind == "ping":
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await websocket.send_json(["pong", value])
            else:
                await app.send_meta({"type": kind})

    def _publish(self, learner: RosterLearner, home: Path) -> None:
        """The learner's standing to the exchange (tutor.serve.hub.publish), off the event loop."""
        if self.config.exchange is not None:
            from tutor.serve.hub import publish

            self._spawn(asyncio.to_thread(publish, home, self.config.exchange, learner.id))

    def _spawn(self, coroutine) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            LOG.error("the server's %s stopped: %r", task.get_coro().__name__, task.exception())  # type: ignore[union-attr]  # a coroutine has __name__; typeshed's Coroutine does not

    # --- the watch: idle sessions, links that ended ----------------------------------------------
    async def _watch(self) -> None:
        from tutor.serve.hub import PUBLISH_EVERY_S

        limit = self.config.idle_minutes * 60
        published = time.monotonic()
        while True:
            await asyncio.sleep(min(5.0, max(limit / 4, 0.2)))
            self._reread_links()
            now = time.monotonic()
            if now - published > PUBLISH_EVERY_S:
                published = now
                for running in list(self.apps.values()):
                    self._publish(running.learner, self.config.home(running.learner))
            for running in list(self.apps.values()):
                current = next((x for x in self.config.learners if x.id == running.learner.id), None)
                if current is None or current.token != running.learner.token or current.expired():
                    running.conn.end(CODES["link"])
                elif running.relay.busy():
                    running.touched()  # a grade or a training run going is the learner's work too
                elif (
                    running.app.drawn.is_set() and now - max(running.last_input, running.app.drawn_at) > limit
                ):
                    running.conn.end(CODES["idle"])

    def _reread_links(self) -> None:
        """The class's links.csv again when it changed: a renewed or removed link ends its session."""
        if self.config.folder is None:
            return
        path = self.config.folder / roster.LINKS_FILE
        try:
            seen = path.stat().st_mtime
        except OSError:
            return
        if seen == self._links_seen:
            return
        self._links_seen = seen
        known = roster.read_links(path)
        self.config.learners = [
            replace(x, token=known[x.id][0], expires=known[x.id][1])
            if x.id in known
            else replace(x, token="")
            for x in self.config.learners
        ]

    async def _on_startup(self, app: web.Application) -> None:
        self._reread_links()
        self._spawn(self._watch())

    async def _on_shutdown(self, app: web.Application) -> None:
        self.closing = True
        for turns in self.turns.values():  # the apps running, and the connections waiting for a turn
            if turns.newest is not None:
                turns.newest.end(1001)
        for task in list(self._tasks):
            task.cancel()

    def kill_all(self) -> None:
        """Kill every learner's processes still running: a session's handler the server's shutdown
        cancelled before its app had ended left them (no process of a learner outlives the server)."""
        for running in list(self.apps.values()):
            running.app.kill()

    def make_app(self, door) -> web.Application:
        app = web.Application(middlewares=[door.middleware])
        if self.config.proxied:
            app.add_routes([web.get("/", self.handle_page), web.get("/ws", self.handle_websocket)])
        else:
            app.add_routes(
                [
                    web.get("/", self.handle_root),
                    web.get("/learn/", self.handle_page),
                    web.get("/learn/ws", self.handle_websocket),
                    web.get("/learn/{token}", self.handle_link),
                ]
            )
        app.add_routes([web.static("/static", STATIC, show_index=False, follow_symlinks=False)])
        app.on_startup.append(self._on_startup)
        app.on_shutdown.append(self._on_shutdown)
        return app


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` of a URL, lower case, the scheme's default port left out (RFC 6454's
    serialisation); None for anything else (`null`, a URL without a host)."""
    try:
        parsed = urlsplit(url.strip())
        port = parsed.port
    except ValueError:
        return None
    scheme, host = parsed.scheme.lower(), (parsed.hostname or "").lower()
    if scheme not in ("http", "https") or not host:
        return None
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def same_origin(request: web.Request, public_url: str | None) -> bool:
    """Whether a websocket's handshake comes from the tutor's own page. A browser always sends the
    page's `Origin` with it; a page of another origin (another port of this host, a sibling host name
    such as `s2.` beside `s1.`, any page of the same site) sends its own, and the cookie alone, which
    SameSite lets through between same-site origins, must not open the learner's app for it. The
    page's origin is the one of `--public-url` when it is given, else this request's Host, under
    either scheme (a proxy in front may speak TLS to the browser). A handshake without an Origin is
    refused too: only a program that is no browser leaves it out, and it can send the right one."""
    got = origin_of(request.headers.get("Origin", ""))
    if got is None:
        return False
    if public_url:
        return got == origin_of(public_url)
    host = request.headers.get("Host", "")
    return got in {origin_of(f"{scheme}://{host}") for scheme in ("http", "https")} - {None}


def _size(value: str | None, default: int) -> int:
    try:
        return min(500, max(10, int(value))) if value is not None else default
    except ValueError:
        return default


def _listen(host: str, port: int, unix_socket: Path | None) -> tuple[socket.socket, int]:
    """The server's listening socket, and its port (port 0: the one it got; on a Unix socket, 0)."""
    if unix_socket is not None:
        from tutor.serve.hub import bind_socket

        return bind_socket(unix_socket), 0
    listening = socket.create_server((host, port), backlog=512)
    return listening, listening.getsockname()[1]


async def _until_stopped() -> None:
    """Until SIGTERM or SIGINT; the server then stops in order (every session ends as it would when its
    learner left, then the loop ends). aiohttp's own handlers raise out of the loop, and asyncio.run then
    cancels every task at once: a session starting its app then never ended, for Python 3.11 never
    finishes a process cancelled while its pipes connect (cpython#125502)."""
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await stop.wait()


def serve(
    config: ServeConfig,
    host: str,
    port: int,
    ready=None,
    bounds: str | None = None,
    unix_socket: Path | None = None,
) -> None:
    """Run the server until interrupted. `ready(port, placement)` is called once it listens (port 0: any
    free one). `bounds` asks for one kind of bounds only (tutor.serve.bounds.place). With `unix_socket`
    it listens there instead (tutor.serve.hub.bind_socket), and `ready` gets port 0."""
    from tutor.serve.bounds import place
    from tutor.serve.door import Door, quiet_logs, raise_open_files

    quiet_logs()
    files = raise_open_files()
    placement = place(config.limits, bounds)
    warm = Warm(config.lessons_dir)

    async def main() -> None:
        listening, port_now = _listen(host, port, unix_socket)
        server = TutorServer(config, placement, warm, port_now)
        door = Door.for_open_files(files, config.max_sessions, config.per_address)
        if ready is not None:  # before the startup reads links.csv: `ready` writes the links served
            ready(port_now, placement)  # (connections wait in the socket's backlog meanwhile)
        runner = web.AppRunner(
            server.make_app(door), access_log=None, keepalive_timeout=15, shutdown_timeout=SHUTDOWN_S
        )
        await runner.setup()
        assert runner.server is not None  # set by setup()
        listener = await door.listen(runner.server, listening)
        try:
            await _until_stopped()
        finally:
            listener.close()
            await runner.cleanup()
            server.kill_all()
            # closed before asyncio.run waits for its threads: a fork asked of a zygote that is still
            # starting waits in one, until the zygote is gone
            warm.close()
            if unix_socket is not None:
                with contextlib.suppress(OSError):
                    unix_socket.unlink()

    try:
        with contextlib.suppress(KeyboardInterrupt):  # before its handler is set
            asyncio.run(main())
    finally:
        warm.close()  # again, if the loop never ran
        placement.close()
