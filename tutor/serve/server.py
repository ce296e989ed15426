"""The web server behind `python -m tutor serve`: textual-serve's pieces, with a door.

textual-serve (Textualize's own) runs a Textual app as a child process per browser connection and
relays its screen over a websocket to xterm.js in the page. Its `Server` lets anyone in, runs every
connection as the same user with the same home, and its page links a web font from a public CDN. Here
its `AppService` (one app process) and its static files (xterm.js, its CSS, the Roboto Mono font) are
used as they are; the routes, the page and the sessions are the tutor's own:

    GET /learn/{token}      the page (the token is the learner's secret; a wrong one: a refusal page)
    GET /learn/{token}/ws   the websocket that runs that learner's app
    GET /static/...         textual-serve's static files, served from the installed package
    anything else           404 (the bare address says a link is needed)

Each learner's app runs with their own home (`--home`), language and working folder, with no
`VISUAL`/`EDITOR` (the lab's built-in editor edits in the page: an editor on the server's terminal
would be no use). One live session per learner: a second tab takes over and the first shows "session
ended". Sessions end after `idle_minutes` without a key, and at most `max_sessions` run at once.
Nothing logs a request line: a token is in the path.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import shlex
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from tutor.i18n import FALLBACK, LANGS
from tutor.serve.roster import RosterLearner, token_owner
from tutor.texts import say

STATIC = Path(textual_serve.__file__).parent / "static"
PAGE = Path(__file__).with_name("page.html")
IDLE_CLOSE_CODE = 4000  # the websocket's close code when a session ends for idleness
TAKEN_OVER_CODE = 4001  # ... when the same learner opened the link elsewhere


@dataclass
class ServeConfig:
    learners: list[RosterLearner]
    lessons_dir: Path
    folder: Path | None  # None: each learner's home is given in `homes` (the single-learner server)
    homes: dict[str, Path] = field(default_factory=dict)
    idle_minutes: float = 30.0
    max_sessions: int = 40
    title: str = "Attention Tutor"

    def home(self, learner: RosterLearner) -> Path:
        return self.homes[learner.id] if self.folder is None else learner.home(self.folder)


@dataclass
class Session:
    learner: RosterLearner
    websocket: web.WebSocketResponse
    last_input: float = field(default_factory=time.monotonic)
    drawn: bool = False  # the app has sent its first screen: from then on, idleness counts

    def touched(self) -> None:
        self.last_input = time.monotonic()

    async def close(self, code: int) -> None:
        await self.websocket.close(code=code)


class LearnerApp(AppService):
    """One learner's app process: textual-serve's, with the learner's home, language and folder."""

    def __init__(self, session: Session, home: Path, lessons_dir: Path, **kwargs) -> None:
        self.session = session
        learner = session.learner
        home.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "tutor", "--lang", learner.lang, "--home", str(home),
                "--lessons", str(lessons_dir)]  # fmt: skip
        # textual-serve runs its command through a shell: every part quoted, the learner's folder
        # as the working folder, so that whatever the app writes "here" stays in their home
        super().__init__(f"cd {shlex.quote(str(home))} && exec {shlex.join(argv)}", **kwargs)

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        env = super()._build_environment(width, height)
        for name in ("VISUAL", "EDITOR", "TUTOR_HOME", "TUTOR_LANG"):
            env.pop(name, None)
        return env

    async def on_data(self, payload: bytes) -> None:
        if not self.session.drawn:  # the time the app took to start is not the learner's idleness
            self.session.drawn = True
            self.session.touched()
        await super().on_data(payload)


def page_lang(request: web.Request) -> str:
    """The first of the browser's languages that the tutor speaks (for pages before a learner is known)."""
    for part in request.headers.get("Accept-Language", "").split(","):
        lang = part.split(";")[0].strip().lower()[:2]
        if lang in LANGS:
            return lang
    return FALLBACK


def notice_page(request: web.Request, what: str, status: int) -> web.Response:
    """A plain page that says why the tutor is not shown (`what`: refused, expired, full, home)."""
    lang = page_lang(request)
    title, text = say(f"serve.page.{what}.title", lang), say(f"serve.page.{what}.text", lang)
    body = (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        "<style>body{font-family:sans-serif;background:#0c181f;color:#eee;display:flex;align-items:center;"
        "justify-content:center;height:90vh}main{max-width:36em;background:#12232d;padding:2em}</style>"
        f"</head><body><main><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></main></body></html>"
    )
    return web.Response(text=body, status=status, content_type="text/html", headers=NO_STORE)


NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


class TutorServer:
    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.sessions: dict[str, Session] = {}
        self.downloads = DownloadManager()
        self._page = PAGE.read_text(encoding="utf-8")
        self._reaper: asyncio.Task | None = None

    # --- the door --------------------------------------------------------------------------------
    def _learner(self, request: web.Request) -> tuple[RosterLearner | None, str]:
        """The learner this request's token names, and what to tell them if they may not come in."""
        learner = token_owner(self.config.learners, request.match_info.get("token", ""))
        if learner is None:
            return None, "refused"
        if learner.expired():
            return None, "expired"
        if learner.id not in self.sessions and len(self.sessions) >= self.config.max_sessions:
            return None, "full"
        return learner, ""

    async def handle_page(self, request: web.Request) -> web.Response:
        learner, why = self._learner(request)
        if learner is None:
            return notice_page(request, why, 503 if why == "full" else 403)
        lang = learner.lang
        values = {
            "lang": lang,
            "title": html.escape(self.config.title),
            "starting": html.escape(say("serve.page.starting", lang)),
            "ended": html.escape(say("serve.page.ended", lang)),
            "idle": html.escape(say("serve.page.idle", lang, minutes=round(self.config.idle_minutes))),
            "taken": html.escape(say("serve.page.taken", lang)),
            "restart": html.escape(say("serve.page.restart", lang)),
            "codes": json.dumps({"idle": IDLE_CLOSE_CODE, "taken": TAKEN_OVER_CODE}),
        }
        text = self._page
        for name, value in values.items():
            text = text.replace("{{ " + name + " }}", value)
        return web.Response(text=text, content_type="text/html", headers=NO_STORE)

    async def handle_root(self, request: web.Request) -> web.Response:
        return notice_page(request, "home", 403)

    # --- the sessions ----------------------------------------------------------------------------
    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        learner, why = self._learner(request)
        if learner is None:
            return notice_page(request, why, 503 if why == "full" else 403)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
        await websocket.prepare(request)
        if (earlier := self.sessions.get(learner.id)) is not None:
            await earlier.close(TAKEN_OVER_CODE)  # one live session per learner: the newest tab wins
        session = self.sessions[learner.id] = Session(learner, websocket)
        service = LearnerApp(
            session, self.config.home(learner), self.config.lessons_dir,
            write_bytes=websocket.send_bytes, write_str=websocket.send_str, close=websocket.close,
            download_manager=self.downloads,
        )  # fmt: skip
        try:
            await service.start(_size(request, "width", 80), _size(request, "height", 24))
            await self._relay(websocket, service, session)
        except asyncio.CancelledError:
            pass
        finally:
            if self.sessions.get(learner.id) is session:  # its place is free as soon as its tab is gone
                del self.sessions[learner.id]
            await websocket.close()
            await service.stop()
        return websocket

    async def _relay(self, websocket: web.WebSocketResponse, service: AppService, session: Session) -> None:
        """The browser's keys, sizes and focus to the app, as textual-serve's server does; a message that
        is not one of those is dropped."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, *rest = json.loads(message.data)
            except (ValueError, TypeError):
                continue
            if kind == "stdin" and rest and isinstance(rest[0], str):
                session.touched()
                await service.send_bytes(rest[0].encode("utf-8"))
            elif kind == "resize" and rest and isinstance(rest[0], dict):
                size = rest[0]
                await service.set_terminal_size(_clamp(size.get("width"), 80), _clamp(size.get("height"), 24))
            elif kind == "ping" and rest:
                await websocket.send_json(["pong", str(rest[0])[:32]])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def _end_idle_sessions(self) -> None:
        limit = self.config.idle_minutes * 60
        while True:
            await asyncio.sleep(min(30.0, max(limit / 4, 0.2)))
            now = time.monotonic()
            for session in list(self.sessions.values()):
                if session.drawn and now - session.last_input > limit:
                    await session.close(IDLE_CLOSE_CODE)

    async def _on_startup(self, app: web.Application) -> None:
        self._reaper = asyncio.create_task(self._end_idle_sessions())

    async def _on_shutdown(self, app: web.Application) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        for session in list(self.sessions.values()):
            await session.close(1001)

    def make_app(self) -> web.Application:
        app = web.Application()
        app.add_routes([
            web.get("/", self.handle_root),
            web.get("/learn/{token}", self.handle_page),
            web.get("/learn/{token}/ws", self.handle_websocket),
            web.static("/static", STATIC, show_index=False, follow_symlinks=False),
        ])  # fmt: skip
        app.on_startup.append(self._on_startup)
        app.on_shutdown.append(self._on_shutdown)
        return app


def _clamp(value: object, default: int) -> int:
    """A terminal size from the browser: a whole number of cells between 10 and 500."""
    return min(500, max(10, value)) if isinstance(value, int) else default


def _size(request: web.Request, name: str, default: int) -> int:
    try:
        return _clamp(int(request.query.get(name, default)), default)
    except ValueError:
        return default


def serve(config: ServeConfig, host: str, port: int, ready=None) -> None:
    """Run the server until interrupted. `ready(port)` is called once it listens (port 0: any free one)."""

    async def main() -> None:
        runner = web.AppRunner(TutorServer(config).make_app(), access_log=None, handle_signals=True)
        await runner.setup()
        listening = socket.create_server((host, port))  # bound here, so that port 0 can say which it got
        await web.SockSite(runner, listening).start()
        if ready is not None:
            ready(listening.getsockname()[1])
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt, web.GracefulExit):
        asyncio.run(main())
