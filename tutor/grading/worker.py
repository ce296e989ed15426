"""The grading worker: the one process that runs the learner's code, and all it does is compute.

Forked by the judge right after it imports torch (before it loads any check), in its own session
and scratch folder, with stdin closed and stdout/stderr on a pipe the judge only ever shows as output.
It enters namespaces while it is still single-threaded, imports the course model, confines itself
(tutor/grading/sandbox.py) and says which isolation is in force.
Only then does learner code run: each `submit` probe compiles a submission from the text it carries
(the worker never opens the learner's path), and every later probe is a call the judge asks for:
a function with given inputs, a module built from a config, loaded with given weights, run on given
inputs. Every answer is plain data (tutor/grading/wire.py). Nothing here decides anything: the judge
compares the answers with what its own code computes, in its own process.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import traceback
import types

SUBMISSION = "submission"


def describe(err: BaseException, filename: str, limit_mb: int) -> dict:
    """The exception as plain data, for the judge to tell in the learner's language
    (tutor.grading.remote.LearnerError.from_reply): its type, one line of text, what kind of failure
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
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == filename]
    at = [[f.lineno, f.name, (f.line or "").strip()] for f in frames[-3:]]
    return {"type": name, "kind": kind, "text": text[:1500], "limit_mb": limit_mb, "at": at}


class Worker:
    def __init__(self, job: dict, reply_fd: int):
        self.job, self.reply_fd = job, reply_fd
        self.sub: types.ModuleType | None = None
        self.display = "submission.py"
        self.kept: dict[int, object] = {}
        self.limit_mb = job["limits"]["mem_bytes"] // 2**20

    def send(self, message: dict) -> None:
        data = (json.dumps(message, allow_nan=False) + "\n").encode()
        while data:
            data = data[os.write(self.reply_fd, data) :]

    # --- probes ---------------------------------------------------------------------------------
    def op_submit(self, msg: dict, args: list, kwargs: dict) -> dict:
        """Import a submission from its text; what it defines, by kind."""
        self.display = msg["display"]
        self.kept.clear()
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
        value = self._target(msg["name"])(*args, **kwargs)
        if msg.get("keep") is not None:
            self.kept[msg["keep"]] = value
        return value

    def op_new(self, msg: dict, args: list, kwargs: dict) -> dict:
        import torch

        from models.gpt import GPTConfig

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

    def op_trace(self, msg: dict, args: list, kwargs: dict) -> dict:
        """Run a module while recording the arguments (after the first) of one of the file's own
        functions, e.g. the positions forward hands to apply_rope."""
        name = msg["function"]
        original = self._target(name)
        calls: list = []

        def recorder(*a, **k):
            calls.append([list(a[1:]), k])
            return original(*a, **k)

        setattr(self.sub, name, recorder)
        try:
            output = self.op_run(msg, args, kwargs)
        finally:
            setattr(self.sub, name, original)
        return {"output": output, "calls": calls[:64]}

    def op_grads(self, msg: dict, args: list, kwargs: dict) -> dict:
        model = self.kept[msg["ref"]]
        model.train()
        model.zero_grad(set_to_none=True)
        out = model(*args, **kwargs)
        loss = out[1] if isinstance(out, tuple) else out
        loss.backward()
        return {"loss": loss, "grads": {n: p.grad for n, p in model.named_parameters()}}

    def serve(self, probes) -> None:
        from tutor.grading import wire

        for line in probes:
            msg = json.loads(line)
            op = getattr(self, f"op_{msg['op']}")
            try:
                args = wire.decode(msg.get("args", []), refs=self.kept)
                kwargs = wire.decode(msg.get("kwargs", {}), refs=self.kept)
                reply = {"id": msg["id"], "ok": wire.encode(op(msg, args, kwargs))}
            except BaseException as err:  # whatever the learner's code raised is the answer
                reply = {"id": msg["id"], "error": describe(err, self.display, self.limit_mb)}
            _flush()  # what the probe printed reaches the judge before its answer
            self.send(reply)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # the learner may have replaced or closed the stream
            pass


def _warm_up(torch) -> None:
    """Run each kind of op once: torch reads /proc/cpuinfo and loads kernels on first use, which the
    confined process could no longer do."""
    x = torch.randn(1, 2, 4, 8, requires_grad=True)
    y = torch.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)
    torch.nn.functional.cross_entropy(
        torch.nn.Linear(8, 8)(y).view(-1, 8), torch.zeros(8, dtype=torch.long)
    ).backward()
    torch.softmax(x.detach(), -1).sin().cos().triu().masked_fill(torch.ones(8, dtype=torch.bool), 0)


def serve_forked(probe_fd: int, reply_fd: int, job: dict) -> None:
    """The worker's life, in the process the judge forked (torch already imported): confine, then
    answer probes until the judge closes the probe pipe or kills it."""
    sys.dont_write_bytecode = True

    import faulthandler
    from pathlib import Path

    from tutor.grading import sandbox

    faulthandler.enable(file=sys.stderr)  # a segfault prints where it happened into the output
    scratch = Path(job["scratch"])
    limits = sandbox.Limits(
        **{k: job["limits"][k] for k in ("mem_bytes", "cpu_s", "file_bytes", "total_bytes")}
    )
    # namespaces first, while this process has one thread (the fork left it only this one)
    ns = sandbox.enter_namespaces(scratch, limits.total_bytes) if job["isolate"] else None

    # the libraries a submission may use, imported while the files they read are still readable
    import torch

    import models.gpt
    import models.positions
    import models.tokenizer
    import tutor.grading.kit  # the course tokenizer helper the starters import

    torch.set_num_threads(1)  # the probes are small; two threads on a busy 2-core CPU wait on each other
    _warm_up(torch)
    code_dirs = [Path(models.gpt.__file__).parent, Path(tutor.grading.kit.__file__).parents[1]]
    report = (
        sandbox.confine(scratch, limits, code_dirs, ns)
        if job["isolate"]
        else sandbox.Report(["none (course files)"])
    )
    worker = Worker(job, reply_fd)
    worker.send({"id": 0, "ready": report.to_json()})
    worker.serve(os.fdopen(probe_fd, "rb"))
    _flush()
    os._exit(0)  # skip atexit handlers and threads the learner may have left behind
