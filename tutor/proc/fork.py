"""A child forked from this very process, no new program: the grading box's worker, from the judge
(tutor/grading/judging/judge.py, which keeps the policy: which descriptors, which namespaces, what runs).
Standard library only; the judge imports it before any learner's file is read.

    pid = fork_session({1: out_w, 2: out_w, 3: probe_r, 4: reply_w}, run)   # its own session, these fds only
    into_new_pid_namespace(range(5))    # after unshare(CLONE_NEWPID): go on as process 2, process 1 waits
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

from tutor.proc.spawn import die_with_parent


def fork_session(fds: dict[int, int], run: Callable[[], object]) -> int:
    """A child forked from this process, in a session of its own and dying with this process, holding
    `fds` (target: source, put in place in the targets' order), /dev/null as fd 0 unless given, and no
    descriptor above the highest target. It runs `run()` and exits 0, or writes the traceback to its fd 2
    and exits 70. Returns its pid: its session is the group to kill, whatever it started included."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        os.setsid()
        die_with_parent(orphan_check=False)  # whatever ends this process ends the child
        places = {0: os.open(os.devnull, os.O_RDONLY), **fds}
        for target in sorted(places):
            os.dup2(places[target], target)
        os.closerange(max(places) + 1, 65536)
        run()
        code = 0
    except BaseException:  # the parent sees the exit code and the output
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def into_new_pid_namespace(held: range) -> None:
    """After `unshare(CLONE_NEWPID)`: fork process 1 of the new PID namespace, which forks process 2 and
    returns in it; the two others wait and end as it ended. Process 1 cannot end by a signal it sends
    itself (the kernel ignores those), so it hands process 2's wait status to its parent through a pipe;
    process 2's own abort() or SIGXCPU ends it. The waiters close the descriptors `held`: only process 2
    holds them, so they close when it ends."""
    status_r, status_w = os.pipe()
    if os.fork():
        for fd in (*held, status_w):
            os.close(fd)
        data = os.read(status_r, 4)
        _, own = os.wait()
        _end_as(int.from_bytes(data, "little") if len(data) == 4 else own)
    die_with_parent(orphan_check=False)  # the parent's pid reads 0 in here
    os.close(status_r)
    second = os.fork()
    if second:
        for fd in held:
            os.close(fd)
        _, status = os.waitpid(second, 0)
        os.write(status_w, status.to_bytes(4, "little"))
        os._exit(0)
    os.close(status_w)
    die_with_parent(orphan_check=False)


def _end_as(status: int) -> NoReturn:
    """End this process the way a wait status says: an exit code, or the same signal (the judge
    explains a crash by it)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)
