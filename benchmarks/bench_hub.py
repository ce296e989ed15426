"""A class through JupyterHub beside the same class through `serve`, in one run: page to home, key → screen,
memory per learner.

1. **serve:** the real `python -m tutor serve --roster` with LEARNERS learners, each a page of its own in
   Debian's chromium (Playwright, 1000×640 pixels), opened one after another: the time from opening the
   link to home on the screen. With all of them open, the first learner presses ↓/↑ on home KEYS times
   (after WARM_UP uncounted): keydown in xterm.js's input to the app's first bytes back on the websocket,
   timed in the page (benchmarks/bench_serve.py's timer). Memory: PSS of every process of each learner's
   group, and the class's shared processes (the server and its warm judge and experiment processes).
2. **hub:** a real JupyterHub (tests/hub_helpers.py: the recipe docs/hub/jupyterhub_config.py with
   SimpleLocalProcessSpawner and configurable-http-proxy) with LEARNERS users, each logging in in a page
   of their own: login to home on the screen (the hub spawns their server, which starts the tutor). The
   same keys. Memory: PSS of each learner's whole single-user server (jupyterhub-singleuser, the tutor's
   server, its warm processes, the app), and the hub and its proxy.

Both phases run on the same host, one after the other, with nothing else of the benchmark running.

    python benchmarks/bench_hub.py [--learners 20] [--keys 100]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_serve import PAGE_TIMER, WARM_UP, key_latencies, learner_pids, memory_of, percentile  # noqa: E402
from tests.browser_helpers import TerminalView, launch  # noqa: E402
from tests.hub_helpers import PASSWORD, Hub  # noqa: E402
from tests.serve_client import Served  # noqa: E402

VIEWPORT = {"width": 1000, "height": 640}
HOME = ("Attention Tutor", "Multi-head attention")


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        here = todo.pop()
        found.append(here)
        todo += children.get(here, [])
    return found


def singleuser_pids() -> dict[str, int]:
    """Each running single-user server's pid, by its user."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if b"jupyterhub-singleuser" not in cmdline:
                continue
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for item in environ:
            if item.startswith(b"JUPYTERHUB_USER="):
                found[item.split(b"=", 1)[1].decode()] = int(entry)
    return found


def summary(name: str, homes: list[float], latencies: list[float], pss: list[float], shared: float) -> dict:
    return {
        "path": name,
        "page to home, median s": round(statistics.median(homes), 2),
        "page to home, max s": round(max(homes), 2),
        "key median ms": round(statistics.median(latencies), 1),
        "key p95 ms": round(percentile(latencies, 0.95), 1),
        "key p99 ms": round(percentile(latencies, 0.99), 1),
        "PSS per learner, median MiB": round(statistics.median(pss), 0),
        "PSS per learner, max MiB": round(max(pss), 0),
        "shared PSS MiB": round(shared, 0),
        "load after": round(os.getloadavg()[0], 1),
    }


def through_serve(browser, root: Path, n: int, keys: int) -> dict:
    root.mkdir(parents=True)
    roster = root / "class.csv"
    roster.write_text("id,name\n" + "".join(f"u{i:02d},U {i}\n" for i in range(n)), encoding="utf-8")
    folder = root / "class"
    server = Served(
        "--roster", str(roster), "--dir", str(folder), "--max-sessions", str(n + 2), folder=folder
    )
    try:
        links = server.links()
        views, homes = [], []
        for learner in sorted(links):
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.add_init_script(PAGE_TIMER)
            view = TerminalView(page)
            start = time.monotonic()
            page.goto(links[learner])
            view.wait_for(*HOME, timeout=180)
            homes.append(time.monotonic() - start)
            views.append(view)
        views[0].page.wait_for_timeout(10_000)  # the apps' own start-up work
        key_latencies(views[0], WARM_UP)
        latencies = key_latencies(views[0], keys)
        pss = [memory_of(learner_pids(server, learner))[0] for learner in sorted(links)]
        shared = memory_of(descendants(server.proc.pid))[0] - sum(pss)
        for view in views:
            view.page.context.close()
        return summary("serve", homes, latencies, pss, shared)
    finally:
        server.stop()


def through_hub(browser, root: Path, n: int, keys: int) -> dict:
    users = tuple(f"u{i:02d}" for i in range(n))
    hub = Hub(root, users)
    try:
        views, homes = [], []
        for user in users:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.add_init_script(PAGE_TIMER)
            view = TerminalView(page)
            page.goto(hub.base + "/hub/login")
            page.fill("#username_input", user)
            page.fill("#password_input", PASSWORD)
            start = time.monotonic()
            page.click("#login_submit")
            view.wait_for(*HOME, timeout=300)
            homes.append(time.monotonic() - start)
            views.append(view)
        views[0].page.wait_for_timeout(10_000)
        key_latencies(views[0], WARM_UP)
        latencies = key_latencies(views[0], keys)
        servers = singleuser_pids()
        pss = [memory_of(descendants(servers[user]))[0] for user in users]
        everything = memory_of(descendants(hub.proc.pid))[0]
        for view in views:
            view.page.context.close()
        return summary("hub", homes, latencies, pss, everything - sum(pss))
    finally:
        hub.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=20)
    parser.add_argument("--keys", type=int, default=100)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = launch(playwright)
        rows.append(through_serve(browser, Path(tmp) / "serve", args.learners, args.keys))
        print(rows[-1], flush=True)
        rows.append(through_hub(browser, Path(tmp) / "hub", args.learners, args.keys))
        print(rows[-1], flush=True)
        browser.close()
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)


if __name__ == "__main__":
    main()
