"""Driving the served tutor in Debian's chromium with Playwright, and reading what it shows.

The page draws the terminal with WebGL, so its text is not in the DOM. What the page draws is what
the server sends over the websocket: the app's terminal output. `TerminalView` listens to those
frames (Playwright's websocket events) and plays them into pyte, a terminal emulator, sized as the
page told the server (in the websocket's address, then its `resize` messages): its lines are the screen
the learner sees.

No browser is downloaded: `CHROMIUM` is Debian's (`apt-get install chromium fonts-wqy-microhei`).
"""

from __future__ import annotations

import json
import shutil
import time
from urllib.parse import parse_qs, urlparse

import pyte

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# as root, in a container, on a machine whose network is closed (see ../.library/env)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


class TerminalView:
    """The screen of one page's tutor session, read from the websocket's frames."""

    def __init__(self, page) -> None:
        self.page = page
        self.screen = pyte.Screen(200, 60)
        self.stream = pyte.ByteStream(self.screen)
        self.frames = 0
        self.last_frame = 0.0
        self.closed = False
        page.on("websocket", self._attach)

    def _attach(self, websocket) -> None:
        self.screen.reset()
        size = parse_qs(urlparse(websocket.url).query)  # the first size rides in the websocket's address
        if "width" in size and "height" in size:
            self.screen.resize(int(size["height"][0]), int(size["width"][0]))
        websocket.on("framereceived", self._received)
        websocket.on("framesent", self._sent)
        websocket.on("close", lambda _ws: setattr(self, "closed", True))

    def _received(self, payload) -> None:
        if isinstance(payload, bytes):
            self.stream.feed(payload)
            self.frames += 1
            self.last_frame = time.monotonic()

    def _sent(self, payload) -> None:
        try:
            kind, *rest = json.loads(payload)
        except (ValueError, TypeError):
            return
        if kind == "resize" and rest:
            self.screen.resize(rest[0]["height"], rest[0]["width"])

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, *wanted: str, timeout: float = 30.0) -> str:
        """Wait until every string of `wanted` is on the screen; return the screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if all(w in text for w in wanted):
                return text
            self.page.wait_for_timeout(50)  # Playwright's events are delivered while it waits
        raise AssertionError(f"not on the screen after {timeout} s: {wanted}\n{self.text()}")

    def wait_until_gone(self, unwanted: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if unwanted not in text:
                return text
            self.page.wait_for_timeout(50)
        raise AssertionError(f"still on the screen after {timeout} s: {unwanted}\n{self.text()}")

    def press(self, *keys: str) -> None:
        """Keys as the learner types them, into xterm.js's input (the page's focused textarea)."""
        self.page.focus(".xterm-helper-textarea")
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.page.focus(".xterm-helper-textarea")
        self.page.keyboard.type(text)
