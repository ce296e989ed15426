"""A class on one server: 40 sessions open, one learner typing, one storming, one at its memory cap; and the
memory of a session as it idles, after a grade, after an experiment, after both.

The real `python -m tutor serve --roster` with SESSIONS + 2 learners. The typing learner is in Debian's
chromium driven by Playwright (1000×640 pixels ≈ 104×30 cells); everyone else is a websocket client of
tests/serve_client.py (what the page does, without a browser), run in a thread of its own:

1. **alone:** the typing learner opens their link and presses ↓/↑ on home KEYS times, no one else on
   the server. A key's latency is measured in the page: from the keydown in xterm.js's input to the first
   bytes of the app's answer on the websocket (xterm.js draws them in the next frame). The app has 10 s
   after its first frame for its own start-up work, and each phase's keys (all three) come after
   WARM_UP keys that are not counted.
2. **SESSIONS open:** SESSIONS − 1 others open their links and wait at home; the same keys again.
   Three of them then grade (the split-heads starter), run an experiment (heads), or both, and the
   memory of an idle, a graded, an experimented and a graded-and-experimented session is read: PSS and
   RSS of every process in that learner's group (the app, and anything forked for it still running),
   from /proc/PID/smaps_rollup. The class's shared processes (the server, its warm judge, its warm
   experiment process) are read the same way.
3. **storm and cap:** one more learner connects and closes 10 times a second without end, and one of
   the open learners grades a file that takes 1.5 times the memory cap as it is imported, again and again
   (the kernel ends each grade it starts at the cap, and the server makes the learner wait after two in a
   row, tutor.serve.forks.Cooling); the keys a third time.

Goal (the class issue): p99 with the storm and the cap at most twice the p99 alone.

    python benchmarks/bench_serve.py [--sessions 40] [--keys 100] [--memory-mb 1024]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser_helpers import TerminalView, launch  # noqa: E402
from tests.serve_client import SPLIT, Learner, Served, app_processes, open_lab, run_heads  # noqa: E402

VIEWPORT = {"width": 1000, "height": 640}
WARM_UP = 20  # keys pressed and not counted before each phase's (the same for all three)
# records, in the page, when a key goes in and when the app's bytes come back
PAGE_TIMER = """
window.__keys = []; window.__frames = [];
document.addEventListener('keydown', () => window.__keys.push(performance.now()), true);
const Native = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const socket = new Native(url, protocols);
  socket.addEventListener('message', (e) => { if (typeof e.data !== 'string') window.__frames.push(performance.now()); });
  return socket;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
"""


def percentile(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def key_latencies(view: TerminalView, presses: int) -> list[float]:
    """ms from each keydown to the first screen bytes after it, for ↓/↑ alternately on home."""
    page = view.page
    page.focus(".xterm-helper-textarea")
    page.evaluate("() => { window.__keys = []; window.__frames = []; }")
    for i in range(presses):
        page.keyboard.press("ArrowDown" if i % 2 == 0 else "ArrowUp")
        page.wait_for_timeout(120)  # one learner's pace, and time for the answer to arrive
    keys, frames = page.evaluate("() => [window.__keys, window.__frames]")
    return [next(f for f in frames if f >= at) - at for at in keys if any(f >= at for f in frames)]


def rollup(pid: int) -> tuple[float, float]:
    """(PSS MiB, RSS MiB) of one process."""
    fields = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            name, value, *_ = line.split()
            fields[name.rstrip(":")] = int(value) / 1024
    return fields.get("Pss", 0.0), fields.get("Rss", 0.0)


def app_pids(server: Served, learner: str) -> list[int]:
    """`learner`'s app process (none, or one)."""
    home = str(server.folder / "learners" / learner).encode()
    found = []
    for pid in app_processes(server.proc.pid):
        with contextlib.suppress(OSError):
            if home in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                found.append(pid)
    return found


def learner_pids(server: Served, learner: str) -> list[int]:
    """Every process of `learner`: their group's (the app, and what was forked for it), else the app's."""
    apps = app_pids(server, learner)
    if not apps:
        return []
    for line in Path(f"/proc/{apps[0]}/cgroup").read_text().splitlines():
        number, names, path = line.split(":", 2)
        if "pids" in names.split(","):
            return [
                int(p)
                for p in (Path("/sys/fs/cgroup/pids") / path.lstrip("/") / "cgroup.procs").read_text().split()
            ]
    return apps


def memory_of(pids: list[int]) -> tuple[float, float]:
    sizes = [rollup(pid) for pid in pids]
    return sum(s[0] for s in sizes), sum(s[1] for s in sizes)


async def home(learner: Learner) -> None:
    """F1: home, whatever screen the learner is on (Esc from the lab may go back to the lesson, and the
    lab's and the lesson's screens can show the lesson's name too)."""
    await learner.press("f1")
    await learner.wait_for("Multi-head attention")
    for _ in range(1200):
        if "Your file" not in learner.text() and "r: run" not in learner.text():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not home after F1:\n" + learner.text())


class Crowd:
    """The other learners, as websocket clients in an event loop of their own (a thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.learners: dict[str, Learner] = {}
        self.stop = asyncio.Event()
        self.storm_connects = 0
        self.storm_apps: set[int] = set()  # the stormer's app processes, as seen
        self.cap_grades = 0

    def do(self, coroutine, timeout: float = 600):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    async def open(self, links: dict[str, str], ids: list[str]) -> float:
        """Open `ids`' links, a few at a time; the seconds until all are at home."""
        started = time.monotonic()
        for i in range(0, len(ids), 4):
            batch = ids[i : i + 4]
            for who in batch:
                self.learners[who] = learner = Learner(links[who])
                await learner.__aenter__()
                await learner.open()
            await asyncio.gather(
                *(self.learners[w].wait_for("Multi-head attention", timeout=300) for w in batch)
            )
        return time.monotonic() - started

    async def grade(self, who: str) -> None:
        learner = self.learners[who]
        await open_lab(learner)
        await learner.press("g")
        await learner.wait_for("grading")
        await learner.wait_for("points", timeout=180)
        await home(learner)

    async def experiment(self, who: str) -> None:
        learner = self.learners[who]
        await run_heads(learner)
        await home(learner)

    async def storm(self, link: str, server: Served, who: str) -> None:
        """Connect and close, ten times a second; the apps the server started for it are counted."""

        async def count() -> None:
            while not self.stop.is_set():
                self.storm_apps |= set(app_pids(server, who))
                await asyncio.sleep(0.05)

        counting = asyncio.create_task(count())
        async with Learner(link) as learner:
            while not self.stop.is_set():
                with contextlib.suppress(Exception):
                    await learner.open()
                    await asyncio.sleep(0.1)
                    await learner.close()
                self.storm_connects += 1
        await counting

    async def at_cap(self, who: str) -> None:
        """Grade, again and again, a file that takes 1.5 times the cap as it is imported."""
        learner = self.learners[who]
        await open_lab(learner)
        while not self.stop.is_set():
            await learner.press("g")
            with contextlib.suppress(AssertionError):
                await learner.wait_for("grading…", timeout=20)
                while "grading…" in learner.text() and not self.stop.is_set():
                    await asyncio.sleep(0.05)
            self.cap_grades += 1

    async def close(self) -> None:
        self.stop.set()
        for learner in self.learners.values():
            with contextlib.suppress(Exception):
                await learner.__aexit__()


def oom_kills(pids: list[int]) -> int:
    for pid in pids[:1]:
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if "memory" in names.split(","):
                text = (Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.oom_control").read_text()
                return int(text.split("oom_kill ")[1].split()[0])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--memory-mb", type=int, default=1024)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    ids = [f"l{i:02d}" for i in range(args.sessions + 1)]  # l00 types; the last one storms
    typing, others, stormer = ids[0], ids[1 : args.sessions], ids[-1]
    graded, experimented, both, idle, capped = others[:5]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        (folder / "class.csv").write_text("id,name,language\n" + "".join(f"{i},{i},en\n" for i in ids))
        server = Served(
            "--roster",
            str(folder / "class.csv"),
            "--dir",
            str(folder / "class"),
            "--max-sessions",
            str(args.sessions + 2),
            "--memory-mb",
            str(args.memory_mb),
            folder=folder / "class",
        )
        with open(folder / "class" / "links.csv", encoding="utf-8") as fh:
            links = {row["id"]: server.base + "/learn/" + row["token"] for row in csv.DictReader(fh)}
        hog = folder / "class" / "learners" / capped / "workspace" / "split-heads"
        hog.mkdir(parents=True)
        # 1.5 times the cap, written as the file is imported, in pieces (the box's address space is 3 GiB)
        taker = f"HOG = [b'x' * (64 << 20) for _ in range({3 * args.memory_mb // 128})]\n"
        (hog / "split_heads.py").write_text(taker + (SPLIT / "solution.py").read_text(encoding="utf-8"))
        crowd = Crowd()
        browser = launch(playwright)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.add_init_script(PAGE_TIMER)
            view = TerminalView(page)
            started = time.perf_counter()
            page.goto(links[typing])
            view.wait_for("Attention Tutor", "Multi-head attention", timeout=120)
            first_home = time.perf_counter() - started
            time.sleep(10)  # the app's work after its first frame (the course, the other screens' imports)
            key_latencies(view, WARM_UP)
            alone = key_latencies(view, args.keys)
            loads = {"alone": os.getloadavg()[0]}

            opened_s = crowd.do(crowd.open(links, others))
            time.sleep(3)
            key_latencies(view, WARM_UP)
            crowded = key_latencies(view, args.keys)
            loads["open"] = os.getloadavg()[0]

            crowd.do(crowd.grade(graded))
            crowd.do(crowd.experiment(experimented))
            crowd.do(crowd.grade(both))
            crowd.do(crowd.experiment(both))
            time.sleep(3)
            memory = {
                name: memory_of(learner_pids(server, who))
                for name, who in (
                    ("idle", idle),
                    ("graded", graded),
                    ("experimented", experimented),
                    ("graded and experimented", both),
                    ("typing (the browser's)", typing),
                )
            }
            every = [memory_of(learner_pids(server, who)) for who in others + [typing]]
            shared = memory_of([server.proc.pid, *(p for p in _warm(server.proc.pid))])

            crowd.start(crowd.storm(links[stormer], server, stormer))
            crowd.start(crowd.at_cap(capped))
            deadline = time.monotonic() + 120
            while oom_kills(learner_pids(server, capped)) == 0 and time.monotonic() < deadline:
                time.sleep(0.5)
            key_latencies(view, WARM_UP)
            stormed = key_latencies(view, args.keys)
            loads["stormed"] = os.getloadavg()[0]
            kills = oom_kills(learner_pids(server, capped))
            storm_connects, cap_grades, storm_apps = (
                crowd.storm_connects,
                crowd.cap_grades,
                len(crowd.storm_apps),
            )
        finally:
            crowd.do(crowd.close(), timeout=60)
            browser.close()
            said = server.stop()

    load = os.getloadavg()[0]
    bounds = next((line for line in said.splitlines() if line.startswith("Each learner")), "?")
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} cores; {bounds}")
    print(
        f"page to home, the typing learner alone: {first_home * 1000:.0f} ms; the {len(others)} others "
        f"opened 4 at a time, all at home after {opened_s:.0f} s"
    )
    rows = (
        ("alone", alone, loads["alone"]),
        (f"{args.sessions} sessions open", crowded, loads["open"]),
        (
            f"{args.sessions} open, a reconnect storm and a learner at the memory cap",
            stormed,
            loads["stormed"],
        ),
    )
    print(
        "key -> update (↓/↑ on home, keydown to the app's bytes, timed in the page; the host's load average"
    )
    print("after each):")
    for name, xs, at in rows:
        print(
            f"  {name:<62} n={len(xs):3d} median {statistics.median(xs):6.1f} ms  p95 {percentile(xs, 0.95):6.1f}"
            f" ms  p99 {percentile(xs, 0.99):6.1f} ms  (load {at:.1f})"
        )
    ratio = percentile(stormed, 0.99) / percentile(alone, 0.99)
    print(
        f"  p99 with the storm and the cap / p99 alone: {ratio:.2f} (goal <= 2: {'met' if ratio <= 2 else 'NOT met'})"
    )
    print(
        f"  meanwhile the stormer connected {storm_connects} times; the learner at the cap asked for {cap_grades} "
        f"grades: {kills} ended by the kernel at {args.memory_mb} MiB, the others told to wait (the server's "
        f"back-off after ends at the cap); the stormer's connects started {storm_apps} app processes"
    )
    print("memory per session (every process in that learner's group; PSS / RSS):")
    for name, (pss, rss) in memory.items():
        print(f"  {name:<28} {pss:6.0f} MiB / {rss:4.0f} MiB")
    pss = sorted(m[0] for m in every)
    print(
        f"  all {len(every)} sessions: PSS {sum(pss):.0f} MiB in all (median {statistics.median(pss):.0f}, max {pss[-1]:.0f})"
    )
    print(
        f"  the class's shared processes (server, warm judge, warm experiments): PSS {shared[0]:.0f} MiB / RSS {shared[1]:.0f} MiB"
    )
    worst = memory["graded and experimented"][0]
    print(
        f"  a class of 100 that has graded and experimented: 100 × {worst:.0f} + {shared[0]:.0f} = "
        f"{(100 * worst + shared[0]) / 1024:.1f} GiB (goal: a graded-and-experimented session <= 150 MiB: "
        f"{'met' if worst <= 150 else 'NOT met'})"
    )


def _warm(server_pid: int) -> list[int]:
    """The server's warm processes (its own children that are not apps)."""
    from tests.serve_client import descendants

    apps = set(app_processes(server_pid))
    out = []
    for pid in descendants(server_pid):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
            if pid not in apps and (b"--zygote" in argv or b"experiment_zygote" in argv):
                if Path(f"/proc/{pid}/stat").read_text().split()[3] == str(server_pid):
                    out.append(pid)
    return out


if __name__ == "__main__":
    main()
