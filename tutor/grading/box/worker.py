"""The grading worker: the one process that runs the learner's code, and all it does is compute.

Forked (through the box's parent) by the judge right after it imports torch and before it loads any
check, in its own session, with stdin closed and stdout/stderr on a pipe the judge only ever shows as
output. It builds its box (tutor/grading/box/sandbox.py): a private root of what its exercise is handed,
no capabilities, its environment and the grader's own modules gone, the handed course modules imported,
then limits, Landlock and the system-call allow-list; and it says which layers are in force.
Only then does learner code run: each `submit` probe compiles a submission from the text it carries
(the worker never opens the learner's path), and every later probe is a call the judge asks for:
a function with given inputs, a module built from a config, loaded with given weights, run on given
inputs. Every answer is plain data (tutor/grading/box/wire.py). Nothing here decides anything: the judge
compares the answers with what its own code computes, in its own process.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import linecache
import os
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from tutor.grading.box import sandbox, wire

SUBMISSION = "submission"


def describe_error(err: BaseException, filename: str, limit_mb: int, max_tasks: int) -> dict:
    """The exception as plain data, for the judge to tell in the learner's language
    (tutor.grading.judging.remote.LearnerError.from_reply): its type, one line of text, what kind of failure
    it is, and the learner's own frames (line, function, source line; the last three)."""
    if isinstance(err, SystemExit):
        return {"type": "SystemExit", "kind": "exit", "code": repr(err.code)}
    name = type(err).__name__
    if isinstance(err, SyntaxError) and err.filename == filename:
        return {"type": name, "kind": "syntax", "line": err.lineno, "text": str(err.msg)[:1500]}
    text = f"{name}: {err}".strip()
    kind = None
    if (
        isinstance(err, MemoryError)
        or "can't allocate memory" in str(err)
        or "DefaultCPUAllocator" in str(err)
    ):
        kind = "memory"
    if isinstance(err, OSError) and err.errno == 27:  # EFBIG: RLIMIT_FSIZE (Python ignores SIGXFSZ)
        kind = "fsize"
    if isinstance(err, RuntimeError) and "can't start new thread" in str(err):  # EAGAIN: the task cap
        kind = "threads"
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == filename]
    at = [[f.lineno, f.name, (f.line or "").strip()] for f in frames[-3:]]
    return {
        "type": name,
        "kind": kind,
        "text": text[:1500],
        "limit_mb": limit_mb,
        "max_tasks": max_tasks,
        "at": at,
    }


class Worker:
    def __init__(self, job: dict, reply_fd: int):
        self.job, self.reply_fd = job, reply_fd
        self.sub: types.ModuleType | None = None
        self.display = "submission.py"
        self.kept: dict[int, Any] = {}  # modules, tensors, optimizers: what the learner's code made
        self.step_logits = None  # of the last training step, when the judge asked to keep them
        self.limit_mb = job["limits"]["mem_bytes"] // 2**20
        self.max_tasks = job["limits"]["max_tasks"]

    def send(self, message: dict) -> None:
        data = (json.dumps(message, allow_nan=False) + "\n").encode()
        while data:
            data = data[os.write(self.reply_fd, data) :]

    # --- probes ---------------------------------------------------------------------------------
    def op_submit(self, msg: dict, args: list, kwargs: dict) -> dict:
        """Import a submission from its text; what it defines, by kind."""
        self.display = msg["display"]
        self.kept.clear()
        import random

        import torch

        # the file's own draws repeat on every grade: seeded from its text, never the grade's secret seed
        seed = int(hashlib.sha256(msg["source"].encode("utf-8", "surrogatepass")).hexdigest()[:15], 16)
        torch.manual_seed(seed)
        random.seed(seed)
        module = types.ModuleType(SUBMISSION)
        module.__file__ = self.display
        sys.modules[SUBMISSION] = module
        self.sub = None
        # tracebacks quote the learner's lines from the text: the file itself is out of reach
        linecache.cache[self.display] = (
            len(msg["source"]),
            None,
            msg["source"].splitlines(True),
            self.display,
        )
        exec(compile(msg["source"], self.display, "exec"), module.__dict__)
        self.sub = module
        kinds = {}
        for name, value in list(vars(module).items()):
            if not name.startswith("__"):
                kinds[name] = (
                    "class" if isinstance(value, type) else "function" if callable(value) else "value"
                )
        return {"names": kinds}

    def _target(self, name: str):
        if self.sub is None:
            raise RuntimeError("no submission is loaded")
        return getattr(self.sub, name)

    def op_call(self, msg: dict, args: list, kwargs: dict):
        return self._target(msg["name"])(*args, **kwargs)

    def op_new(self, msg: dict, args: list, kwargs: dict) -> dict:
        import torch

        from tutor.model.gpt import GPTConfig

        obj = self._target(msg["name"])(GPTConfig(**msg["cfg"]))
        self.kept[msg["keep"]] = obj
        if not isinstance(obj, torch.nn.Module):
            return {"class": type(obj).__name__, "params": None, "modules": []}
        return {
            "class": type(obj).__name__,
            "params": {n: list(p.shape) for n, p in obj.named_parameters()},
            "modules": [
                [n, type(m).__name__, type(m).__module__ == SUBMISSION] for n, m in obj.named_modules()
            ],
        }

    def op_load(self, msg: dict, args: list, kwargs: dict) -> dict:
        result = self.kept[msg["ref"]].load_state_dict(args[0], strict=False)  # buffers may stay as built
        return {"missing": list(result.missing_keys), "unexpected": list(result.unexpected_keys)}

    def op_run(self, msg: dict, args: list, kwargs: dict):
        import torch

        obj = self.kept[msg["ref"]]
        fn = obj if msg["method"] == "__call__" else getattr(obj, msg["method"])
        with torch.no_grad():
            return fn(*args, **kwargs)

    def op_logits(self, msg: dict, args: list, kwargs: dict):
        """The logits of a forward pass in eval mode, without gradients and without targets: the judge
        computes a validation's loss from them (own_model.py), never takes the model's own."""
        import torch

        model = self.kept[msg["ref"]]
        model.eval()
        with torch.no_grad():
            return _logits(model(*args, **kwargs))

    def op_grads(self, msg: dict, args: list, kwargs: dict) -> dict:
        """One training step's forward and backward pass: the model's loss and every gradient. With
        `keep_logits`, the forward's logits are kept for op_step_logits."""
        model = self.kept[msg["ref"]]
        model.train()
        model.zero_grad(set_to_none=True)
        out = model(*args, **kwargs)
        loss = out[1] if isinstance(out, tuple) else out
        self.step_logits = _logits(out) if msg.get("keep_logits") else None
        loss.backward()
        return {"loss": loss, "grads": {n: p.grad for n, p in model.named_parameters()}}

    def op_step_logits(self, msg: dict, args: list, kwargs: dict):
        """Rows [start, stop) of the logits the last op_grads kept (an answer stays well under the
        judge's read limit however large the batch)."""
        start, stop = msg["rows"]
        return self.step_logits[start:stop] if self.step_logits is not None else None

    def serve(self, probes) -> None:
        for line in probes:
            msg = json.loads(line)
            op = getattr(self, f"op_{msg['op']}")
            try:
                args = wire.decode(msg.get("args", []))
                kwargs = wire.decode(msg.get("kwargs", {}))
                reply = {"id": msg["id"], "ok": wire.encode(op(msg, args, kwargs))}
            except BaseException as err:  # whatever the learner's code raised is the answer
                reply = {
                    "id": msg["id"],
                    "error": describe_error(err, self.display, self.limit_mb, self.max_tasks),
                }
            _flush()  # what the probe printed reaches the judge before its answer
            self.send(reply)


def _logits(out):
    """The logits of a forward pass (the first of a tuple), detached, in float32 when they are floats."""
    import torch

    logits = out[0] if isinstance(out, tuple) and out else out
    if isinstance(logits, torch.Tensor):
        logits = logits.detach()
        return logits.float() if logits.is_floating_point() else logits
    return logits


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # the learner may have replaced or closed the stream
            pass


def _forget_the_grader() -> None:
    """The grader's own modules were imported before the fork; the learner's code gets none of them
    by name (nothing of tutor/ is handed, so importing it again fails too)."""
    for name in [n for n in sys.modules if n == "tutor" or n.startswith("tutor.")]:
        del sys.modules[name]
    sys.modules["__main__"] = types.ModuleType("__main__")


def serve_forked(probe_fd: int, reply_fd: int, job: dict, namespaces: bool, cgroup: bool) -> None:
    """The worker's life, in the process the judge forked (torch already imported): build the box,
    then answer probes until the judge closes the probe pipe or kills it. `namespaces`: the parent
    entered new namespaces, and this process is in a PID namespace of its own; `cgroup`: the parent
    joined a pids cgroup of the box's own."""
    sys.dont_write_bytecode = True

    import faulthandler

    faulthandler.enable(file=sys.stderr)  # a segfault prints where it happened into the output
    limits = sandbox.ResourceLimits(
        **{k: job["limits"][k] for k in ("mem_bytes", "cpu_s", "file_bytes", "total_bytes", "max_tasks")}
    )
    report = sandbox.Isolation([sandbox.TASKS] if cgroup else [])
    scratch = Path(job["scratch"])
    if namespaces:
        report.layers[:0] = [sandbox.PID, sandbox.NET]
        try:
            sandbox.build_root(scratch, job["handed"], limits.total_bytes)
            report.layers.insert(0, sandbox.ROOT)
            scratch = sandbox.SCRATCH
        except sandbox.RootRefused:  # Landlock and the allow-list still hold; the grade says what is missing
            pass
        sandbox.drop_capabilities()
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update(
        HOME=str(scratch), TMPDIR=str(scratch), LANG="C.UTF-8", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"
    )
    _forget_the_grader()

    import torch

    for name in job["course_modules"]:  # handed to this exercise: read now, from the box
        importlib.import_module(name)
    torch.set_num_threads(1)  # the probes are small; two threads on a busy 2-core CPU wait on each other
    sandbox.confine(report, limits, job["handed"], scratch, job.get("landlock_abi"))
    worker = Worker(job, reply_fd)
    worker.send({"id": 0, "ready": report.to_json()})
    worker.serve(os.fdopen(probe_fd, "rb"))
    _flush()
    os._exit(0)  # skip atexit handlers and threads the learner may have left behind
