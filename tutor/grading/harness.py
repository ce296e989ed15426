"""The grading child: a trusted harness that imports the learner's file and runs the checks on it.

Started by runner.py as `python -I harness.py JOB_FD RESULT_FD` in a scratch directory with a
scrubbed environment and stdin closed. Before any learner code runs it reads the job (paths, check
ids, limits, a random nonce) from JOB_FD and closes it, sets hard resource limits, loads checks.py,
and binds the few functions it reports with. Then it imports the submission and runs each check in
order, writing one JSON line per event to RESULT_FD — the only channel the parent reads a verdict
from. Every line carries the nonce; the parent rejects lines without it, any unknown structure, and a
run that ends without the final "done" record. stdout and stderr are the learner's output, nothing more.

The learner's code shares this process, so before it runs an audit hook (`_install_guard`) closes
the ways to the nonce and the channel: the learner's code gets no frame object at all (sys._getframe,
tb_frame, gi_frame: from any frame, f_back would climb into ours), and no other threads' frames,
trace/profile hooks, garbage-collector object lists, raw memory reads (ctypes.string_at,
/proc/*/mem), nor the grader's /proc entries or signals. What remains possible is the out-of-process kind of
attack a same-user process can make (reading files the learner can read anyway). Printing, exiting
early, raising, looping, allocating, crashing or patching the checks or torch are all caught here or
by the parent.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import re
import sys
import threading
import time
import traceback
import types

# events refused outright once the learner's code may run: each hands out frames or raw memory
_REFUSED_EVENTS = frozenset(
    {
        "sys._current_frames",
        "sys.settrace",
        "sys.setprofile",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "ctypes.string_at",
        "ctypes.wstring_at",
    }
)
_LIBRARY_DIR = os.path.dirname(os.__file__)  # the standard library (and site-packages below it)
# library modules whose business is handing frames to their caller: the caller is who asks
_FRAME_HELPERS = frozenset(
    os.path.join(_LIBRARY_DIR, name)
    for name in ("inspect.py", "traceback.py", os.path.join("logging", "__init__.py"))
)
_PROC_PID = re.compile(r"^/proc/(\d+)/")


def _codes_of(namespace: dict) -> set[types.CodeType]:
    """Every code object defined in a module: its functions' and, recursively, their nested ones'."""
    found: set[types.CodeType] = set()
    todo = [v.__code__ for v in namespace.values() if isinstance(v, types.FunctionType)]
    while todo:
        code = todo.pop()
        if code not in found:
            found.add(code)
            todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return found


def _install_guard(trusted: set[types.CodeType]) -> None:
    """Refuse, from now on, the audited ways to frames and raw memory to the learner's code.

    Who asks is the code that made the request, looked through the library helpers that exist to hand
    frames to their caller (inspect, traceback, logging). Trusted code (the harness's, the checks') and
    other library code (typing, enum, torch ask for frames to read their caller's module name) may; any
    other code may not. This stops a submission from climbing the stack to the nonce; code that poses as
    a library file (compile() under a library file name) is not stopped: the guard raises the bar, the
    parent's order and nonce checks stay the defence of record.
    """
    state = threading.local()  # per thread: one thread inside the hook must not open the door for another
    own, parent = str(os.getpid()), os.getppid()

    def asker() -> types.FrameType | None:
        frame = sys._getframe(2)  # 0 is asker, 1 the hook, 2 the code that triggered the event
        while frame is not None and frame.f_code.co_filename in _FRAME_HELPERS:
            frame = frame.f_back
        return frame

    def allowed(frame: types.FrameType | None) -> bool:
        return frame is not None and (
            frame.f_code in trusted or frame.f_code.co_filename.startswith(_LIBRARY_DIR)
        )

    def hook(event: str, args: tuple) -> None:
        if getattr(state, "busy", False):
            return
        state.busy = True
        try:
            if event in _REFUSED_EVENTS:
                raise RuntimeError(f"{event} is not available to code being graded")
            if event == "open" and isinstance(args[0], str):
                pid = _PROC_PID.match(args[0])
                if args[0].endswith("/mem") or (pid and pid.group(1) != own):
                    raise PermissionError(f"{args[0]} is not available to code being graded")
            if event in ("os.kill", "os.killpg") and args[0] in (parent, os.getpgid(parent)):
                raise PermissionError("code being graded may not signal the grader")
            # every Python-level way to a first frame is audited (f_back and f_locals are not): refuse
            # them all to untrusted code, which could otherwise climb from its own frame into ours
            frame_event = event == "sys._getframe" or (
                event == "object.__getattr__" and args[1] in ("tb_frame", "gi_frame", "cr_frame", "ag_frame")
            )
            if frame_event and not allowed(asker()):
                raise ValueError("stack frames are not available to code being graded")
        finally:
            state.busy = False

    sys.addaudithook(hook)


def _read_job(fd: int) -> dict:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return json.loads(b"".join(chunks))


def _set_limits(job: dict) -> None:
    import resource

    # soft = hard, so the learner's code cannot raise them again
    for name, value in (
        ("RLIMIT_AS", job["mem_bytes"]),
        ("RLIMIT_CPU", job["cpu_s"]),
        ("RLIMIT_FSIZE", job["fsize_bytes"]),
        ("RLIMIT_CORE", 0),
    ):
        limit = getattr(resource, name)
        resource.setrlimit(limit, (value, value))


def _body(where: str, value: object) -> tuple:
    """What can change under an unchanged name: a function's code and defaults (a check's, kit's or
    torch's), and the contents of checks.py's data (its tables of expected values, its model config)."""
    if isinstance(value, types.FunctionType):
        return value.__code__, value.__defaults__, value.__kwdefaults__
    if where == "checks" and (
        isinstance(value, list | dict | set | bytearray)
        or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    ):
        return (repr(value),)
    return ()


def _snapshot(spaces: dict[str, dict]) -> dict[tuple[str, str], tuple[object, tuple]]:
    return {(where, k): (v, _body(where, v)) for where, ns in spaces.items() for k, v in list(ns.items())}


def _tampered(before: dict[tuple[str, str], tuple[object, tuple]], spaces: dict[str, dict]) -> list[str]:
    """Names the learner's code replaced or deleted, or whose function body or data it changed.

    New names do not count (torch adds some lazily), nor a wrapper whose `__wrapped__` is the
    original (torch._dynamo wraps torch.manual_seed the first time an optimizer steps).
    """
    changed = []
    for (where, key), (old, body) in before.items():
        ns = spaces[where]
        new = ns.get(key, _MISSING)
        replaced = new is not old and getattr(new, "__wrapped__", None) is not old
        # code and defaults by identity; a data table by its repr (a fresh string each time)
        now = _body(where, old)
        if replaced or any(
            a is not b and not (type(a) is str and a == b) for a, b in zip(now, body, strict=True)
        ):
            changed.append(f"{where}.{key}")
    return changed


_MISSING = object()


def _describe(err: BaseException, filename: str, limit_mb: int) -> str:
    """One readable line (plus the learner's own frames) for an exception from their code."""
    if isinstance(err, SystemExit):
        return f"your code called sys.exit({err.code!r}); a graded file must not exit"
    if isinstance(err, KeyboardInterrupt):
        return "your code raised KeyboardInterrupt"
    text = f"{type(err).__name__}: {err}".strip()
    if (
        isinstance(err, MemoryError)
        or "can't allocate memory" in str(err)
        or "DefaultCPUAllocator" in str(err)
    ):
        text = f"ran out of memory (the grader allows {limit_mb} MB): {text}"
    if isinstance(err, OSError) and err.errno == 27:  # EFBIG: RLIMIT_FSIZE (Python ignores SIGXFSZ)
        text = f"wrote more output than the grader allows (16 MB, output and files together): {text}"
    if isinstance(err, SyntaxError) and err.filename == filename:
        return f"syntax error in line {err.lineno}: {err.msg}"
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == filename]
    if frames:
        where = "; ".join(f"line {f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-3:])
        text += f" (at {where})"
    return text[:1500]


def load_module(name: str, path: str, display: str | None = None) -> types.ModuleType:
    """Execute the file at `path` as module `name` (registered in sys.modules); tracebacks show `display`."""
    module = types.ModuleType(name)
    module.__file__ = display or path
    sys.modules[name] = module
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    exec(compile(source, display or path, "exec"), module.__dict__)
    return module


def run_check(function, sub, display: str, limit_mb: int, check_failed: type) -> tuple[str, str]:
    """(status, message) of one check: pass, fail (a wrong answer) or error (the learner's code raised)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(0)  # every check starts from the same random state, whatever ran before
    try:
        return "pass", str(function(sub) or "")
    except check_failed as err:
        return "fail", str(err)
    except AssertionError as err:
        return "fail", str(err) or "a check assertion failed"
    except BaseException as err:  # noqa: BLE001 - the learner's code raised while being checked
        return "error", _describe(err, display, limit_mb)


def main(argv: list[str]) -> None:
    job = _read_job(int(argv[1]))
    res_fd = int(argv[2])
    os.set_inheritable(res_fd, False)  # processes the learner starts do not get the channel
    _set_limits(job)
    sys.path.insert(0, job["root"])
    sys.dont_write_bytecode = True

    import faulthandler

    faulthandler.enable(file=sys.stderr)  # a segfault prints where it happened into the output

    nonce, write, dumps, clock = job["nonce"], os.write, json.dumps, time.perf_counter
    limit_mb = job["mem_bytes"] // 2**20

    def emit(record: dict) -> None:
        data = (dumps({**record, "nonce": nonce}) + "\n").encode()
        while data:
            data = data[write(res_fd, data) :]

    def flush_and_exit() -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001, S110 - the learner may have replaced the stream
                pass
        os._exit(0)  # skip atexit handlers and threads the learner may have left behind

    emit({"event": "hello"})

    # checks.py first, under a private name; its functions are held here before any learner code runs
    checks_mod = load_module("_tutor_exercise_checks", job["checks_file"])
    functions = {cid: getattr(checks_mod, f"check_{cid}") for cid in job["checks"]}

    import math

    import tutor.grading.kit as kit

    CheckFailed = kit.CheckFailed  # noqa: N806 - bound before the learner's code can touch kit
    guarded = {
        "builtins": builtins.__dict__,
        "math": math.__dict__,
        "checks": checks_mod.__dict__,
        "kit": kit.__dict__,
    }
    live = dict(guarded)
    torch = sys.modules.get("torch")  # imported by checks.py when the exercise needs it (all but tests')
    if torch is not None:
        # one thread: the checks are small, and two threads on a shared, busy CPU wait on each other
        torch.set_num_threads(1)
        guarded["torch"] = live["torch"] = torch.__dict__
        guarded["torch.Tensor"] = dict(vars(torch.Tensor))  # a copy: compare against the live mappingproxy
        live["torch.Tensor"] = vars(torch.Tensor)
    # the course model and F, as far as checks.py loaded them: checks build references from them
    # (F.scaled_dot_product_attention, models.positions.rope_inv_freq, ...) and look them up late
    for name, module in list(sys.modules.items()):
        if name == "torch.nn.functional" or name == "models" or name.startswith("models."):
            guarded[name] = live[name] = module.__dict__
    before = _snapshot(guarded)

    def check_tamper(stage: str) -> bool:
        changed = _tampered(before, live)
        if changed:
            emit({"event": "tamper", "stage": stage, "names": changed[:8]})
        return bool(changed)

    _install_guard(_codes_of(globals()) | _codes_of(checks_mod.__dict__) | _codes_of(kit.__dict__))
    # the learner's file, compiled under its own name so tracebacks point at their lines
    display = job["display_name"]
    emit({"event": "loading"})
    t0 = clock()
    try:
        sub = load_module("submission", job["submission"], display)
    except BaseException as err:  # noqa: BLE001 - anything the import does is the learner's
        emit({"event": "import_error", "message": _describe(err, display, limit_mb)})
        flush_and_exit()
    if check_tamper("import"):
        flush_and_exit()
    emit({"event": "imported", "seconds": round(clock() - t0, 3)})

    for cid in job["checks"]:
        emit({"event": "start", "check": cid})
        t0 = clock()
        status, message = run_check(functions[cid], sub, display, limit_mb, CheckFailed)
        if check_tamper(cid):
            flush_and_exit()
        emit(
            {
                "event": "check",
                "check": cid,
                "status": status,
                "message": message[:2000],
                "seconds": round(clock() - t0, 3),
            }
        )
    emit({"event": "done"})
    flush_and_exit()


if __name__ == "__main__":
    main(sys.argv)
