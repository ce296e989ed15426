"""The served class's warm process for experiments: `python -m tutor.experiment_zygote LESSONS FD`.

It imports torch, every experiment and the shipped models once, and never runs one: for each request
on the control socket FD it forks a fresh process (tutor.proc.forkserver.serve, the warm judge's loop too), which is
what `python -m tutor experiment NAME --jsonl ...` would be, warm. So the torch and model pages of every
learner's runs are this process's, shared, and a quick experiment starts in a few milliseconds.

A forked process reads its input to the end. Its first line is the server's (tutor.serve.forks writes
it before the learner's app gets the pipe): `{"home": PATH or null}`, the only home it may write. It
confines itself to that (tutor.serve.confine: Landlock, the course and the code read-only, nothing
else written), then takes the rest, the app's `{"argv": ["experiment", NAME, ...], "nice": N}`, and
runs it as the command line would, its events on its stdout. The server has moved it into the learner's
bounds (memory, CPU, processes) before the app could send anything.
"""

from __future__ import annotations

import json
import os
import sys

from tutor.proc.forkserver import serve
from tutor.proc.spawn import die_with_parent, lower_priority, open_session


def _warm() -> None:
    import torch

    torch.set_num_threads(1)  # no thread pool is started before a fork: a fork of one breaks it
    from tutor import cli  # noqa: F401  (the command line, as each run starts it)
    from tutor.commands import experiment  # noqa: F401
    from tutor.experiments import cache
    from tutor.experiments.registry import get_registry

    for spec in get_registry().values():
        spec.function  # noqa: B018  (imports the experiment's module)
    for name in (cache.LEARNED, cache.ROPE_SHORT):
        try:
            cache.checkpoint(name)
        except Exception:  # a missing checkpoint is the run's to report
            pass


def _run() -> None:
    """The forked process (tutor.proc.forkserver.serve): the job on fd 0, events to fd 1; never returns."""
    code = 1
    try:
        data = b""
        while chunk := os.read(0, 1 << 16):
            data += chunk
            if len(data) > 1 << 20:
                raise ValueError("a job larger than 1 MiB")
        header, _, job = data.partition(b"\n")
        home = json.loads(header).get("home")
        from tutor.serve.confine import confine_fork

        session = open_session(os.getpid())  # its session's niceness: /proc is read-only once confined
        confine_fork(home)
        request = json.loads(job)
        argv = request.get("argv")
        if (
            not isinstance(argv, list)
            or not argv
            or argv[0] != "experiment"
            or not all(isinstance(a, str) for a in argv)
        ):
            raise ValueError("not an experiment")
        if (argv[argv.index("--home") + 1] if "--home" in argv[:-1] else None) != home:
            raise ValueError("not this learner's home")
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        nice = request.get("nice", 0)
        if isinstance(nice, int) and 0 < nice <= 19:
            lower_priority(os.getpid(), nice, session=session)  # as the pool's workers: its session too
        if session is not None:
            os.close(session)
        from tutor.cli import main

        code = main(argv)
    except BaseException as err:  # said as the protocol says failures: one line, never a traceback
        sys.stdout.write(json.dumps({"event": "error", "message": f"{type(err).__name__}: {err}"}) + "\n")
    finally:
        sys.stdout.flush()
        os._exit(code if isinstance(code, int) else 1)


def main() -> None:
    die_with_parent()
    _warm()
    serve(int(sys.argv[-1]), _run)


if __name__ == "__main__":
    main()
