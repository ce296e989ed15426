"""The served class's warm experiment process (tutor/experiment_zygote.py), through its real protocol."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tutor.experiments.runner import child_command, prepare
from tutor.proc.forkserver import ForkedChild, ForkServer
from tutor.serve.forks import zygote_env
from tutor.settings import shipped_lessons_dir


def _niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


@pytest.mark.slow  # warms torch and the shipped checkpoints: 2.5 s idle, 6 s beside other work
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_forked_training_is_niced_with_its_session_as_the_pools_workers(tmp_path):
    server = ForkServer(
        [sys.executable, "-m", "tutor.experiment_zygote", str(shipped_lessons_dir())],
        env=zygote_env(),
        cwd=tempfile.gettempdir(),
    )
    try:
        home = tmp_path / "home"
        home.mkdir()
        _, params = prepare("train-compare", {})
        argv = child_command("train-compare", params, home)[3:]  # after "python -m tutor"
        pid, pidfd, job_w, events_r = server.fork_fds()
        os.write(job_w, json.dumps({"home": str(home)}).encode() + b"\n")  # the server's header
        child = ForkedChild(pid, pidfd, job_w, events_r)
        child.send(json.dumps({"argv": argv, "nice": 7}).encode())
        first = next(child.events(deadline=time.monotonic() + 120))  # it runs: niced before main
        assert first.get("event") != "error", first
        group = Path(f"/proc/{pid}/autogroup")  # "/autogroup-7 nice 7"; empty in a cgroup with a CPU
        said = group.read_text().split() if group.exists() else []  # controller (a CI runner)
        assert _niceness(pid) == 7
        if said:  # confined by Landlock, it still nices its own session
            assert said[-1] == "7"
        child.close()
    finally:
        server.close()
