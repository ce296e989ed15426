"""The one place the tutor starts processes (tests/test_layers.py holds every other module to it).

    spawn.py       start a program: `spawn` (blocking callers), `spawn_async` (asyncio: serve, the app's
                   experiments), each in a session of its own, niced with its session (`lower_priority`);
                   `die_with_parent` for a child's first lines; `run` for a short command's exit code
    child.py       a child that speaks JSON lines: SyncChild, AsyncChild, deadlines, cancel, a tree's kill
    forkserver.py  a zygote: the client (ForkServer, ForkedChild) and the server's loop (`serve`), one
                   implementation with two users, the warm judge and the served class's experiments
    fork.py        a child forked from this very process: the box's worker, in a session and a new PID
                   namespace of its own (the judge's policy, this mechanism)

Callers keep their policy (what to run, with which environment, bounds and limits); the mechanism is
here. Importing this package loads nothing: the judge imports it before the box is built.
"""
