"""The one child-process helper: JSON lines, stray output, deadlines, cancel, and the whole tree killed."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.processes import still_running
from tutor.proc.child import AsyncChild, ChildCancelled, ChildTimeout, SyncChild

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


# --- tutor.proc.spawn and the zygote loop both fork servers share (tutor.proc.forkserver.serve) ---

# a zygote whose forks report who they are and what they were sent; a fork sent "wait" stays
ZYGOTE = """
import json, os, sys, time
from tutor.proc.forkserver import serve

def run():
    data = b""
    while chunk := os.read(0, 4096):
        data += chunk
    me = {"event": "forked", "pid": os.getpid(), "sid": os.getsid(0), "ppid": os.getppid(), "input": data.decode()}
    os.write(1, (json.dumps(me) + "\\n").encode())
    if data == b"wait":
        time.sleep(60)
    os._exit(0)

serve(int(sys.argv[-1]), run)
"""


def test_a_zygotes_fork_reads_its_input_leads_its_session_and_dies_with_the_zygote():
    from tutor.proc.forkserver import ForkServer

    server = ForkServer(
        [sys.executable, "-c", ZYGOTE], env={**ENV, "PYTHONPATH": str(Path(__file__).parents[1])}
    )
    try:
        child = server.fork()
        child.send(b"hello")
        events = list(child.events(deadline=time.monotonic() + 30))
        child.close()
        assert events == [
            {"event": "forked", "pid": child.pid, "sid": child.pid, "ppid": server.proc.pid, "input": "hello"}
        ]
        waiting = server.fork()
        waiting.send(b"wait")
        assert next(waiting.events(deadline=time.monotonic() + 30))["pid"] == waiting.pid
        assert still_running([waiting.pid], timeout=0) == {waiting.pid}  # it waits, alive
    finally:
        server.close()
    assert not still_running([waiting.pid], timeout=10)  # the parent-death signal's kill


def test_spawn_nices_the_child_and_the_session_it_leads():
    from tutor.proc.spawn import PIPE, spawn

    target = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 7)
    says = "import os, sys; print(os.getpriority(os.PRIO_PROCESS, 0), flush=True); sys.stdin.read()"
    proc = spawn([sys.executable, "-c", says], stdin=PIPE, stdout=PIPE, env=ENV, niceness=target)
    try:
        assert proc.stdout is not None and int(proc.stdout.readline()) == target  # as it runs, not before
        assert os.getsid(proc.pid) == proc.pid
        group = Path(f"/proc/{proc.pid}/autogroup")  # "/autogroup-7 nice 10"; empty in a cgroup with
        said = group.read_text().split() if group.exists() else []  # a CPU controller (a CI runner)
        if said:  # a kernel with autogroups, and the session in one: its session is niced too
            assert said[-1] == str(target)
    finally:
        proc.communicate(b"")
