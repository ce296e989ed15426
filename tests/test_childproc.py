"""The one child-process helper: JSON lines, stray output, deadlines, cancel, and the whole tree killed."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

import pytest

from tests.processes import still_running
from tutor.childproc import AsyncChild, ChildCancelled, ChildTimeout, SyncChild

ENV = {"PATH": os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}
# prints two events and a stray line, starts a grandchild that would sleep for a minute, then waits
SCRIPT = """
import json, subprocess, sys, time
print(json.dumps({"event": "a"}))
print("a library warning")
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(json.dumps({"event": "pid", "pid": p.pid}), flush=True)
time.sleep(float(sys.argv[1]))
print(json.dumps({"event": "done"}))
"""


def test_events_arrive_in_order_and_stray_lines_are_marked():
    child = SyncChild([sys.executable, "-c", SCRIPT, "0"], env=ENV)
    child.send()
    events = list(child.events(deadline=time.monotonic() + 30))
    child.close()
    assert [e["event"] for e in events] == ["a", "stray", "pid", "done"]
    assert events[1]["text"] == "a library warning"
    assert child.returncode == 0


def test_a_deadline_stops_the_child_and_everything_it_started():
    child = SyncChild([sys.executable, "-c", SCRIPT, "60"], env=ENV)
    child.send()
    seen = []
    with pytest.raises(ChildTimeout):
        for event in child.events(deadline=time.monotonic() + 3):
            seen.append(event)
    child.close()
    grandchild = next(e["pid"] for e in seen if e["event"] == "pid")
    assert not still_running([grandchild]) and child.returncode is not None


def test_cancel_stops_the_child():
    stop = threading.Event()
    child = SyncChild([sys.executable, "-c", SCRIPT, "60"], env=ENV)
    child.send()
    grandchild = 0
    with pytest.raises(ChildCancelled):
        for event in child.events(cancel=stop):
            if event["event"] == "pid":
                grandchild = event["pid"]
                stop.set()
    child.close()
    assert not still_running([grandchild])


def test_the_async_child_stops_its_tree_when_its_task_is_cancelled():
    async def main() -> int:
        child = await AsyncChild.start([sys.executable, "-c", SCRIPT, "60"], env=ENV)
        pid = 0

        async def read() -> None:
            nonlocal pid
            try:
                async for event in child.events():
                    if event["event"] == "pid":
                        pid = event["pid"]
            finally:
                await child.stop()

        task = asyncio.create_task(read())
        while not pid:
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pid

    grandchild = asyncio.run(main())
    assert not still_running([grandchild])
