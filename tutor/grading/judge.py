"""The judge: runs an exercise's checks (trusted code) against submissions it never imports.

Started by runner.py as `python -I judge.py` with a JSON job on stdin; writes JSON-line events to
stdout. Every message it writes is in the job's language (`lang`); the checks write theirs from the
exercise's `messages` in that language (tutor.grading.kit.msg). For each file it forks a sandboxed worker (worker.py) in a fresh scratch folder, sends it
the file's text, and runs the checks in order: every check asks the worker for values through probes
(tutor/grading/remote.py) and computes the verdict here, with this process's own torch, on inputs
drawn per run from a fresh seed. The worker is killed after its file; with `reuse` (the course's own
files, trusted) one worker answers for every file, so torch is imported once.

Events: {"event": "file", "index"}, {"event": "isolation", "level", "layers"},
{"event": "import_error", "message"}, {"event": "start", "check"}, {"event": "check", "check",
"status", "message"}, {"event": "stopped", "status", "reason"}, {"event": "done", "seconds",
"output", "output_bytes"}.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

REPLY_LIMIT = 64 * 2**20  # bytes of one answer: far above any probe's (the largest is a few MB)
_PR_SET_PDEATHSIG = 1
# the signals a crash is explained by (grade.signal.NAME in the catalogue)
_SIGNALS = {
    signal.SIGSEGV,
    signal.SIGXFSZ,
    signal.SIGABRT,
    signal.SIGBUS,
    signal.SIGFPE,
    signal.SIGSYS,
    signal.SIGKILL,
    signal.SIGXCPU,
}


def _fork_worker(header: dict, probe_r: int, reply_w: int, out_w: int, scratch: Path) -> int:
    """The worker, forked from this process right after torch is imported and before checks.py is
    loaded: it starts in milliseconds with torch ready, and holds nothing of the checks. It gets its
    own session, the three pipes as fds 3, 4 and 1/2, and no other descriptor of ours."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        os.setsid()
        if sys.platform == "linux":  # die with the judge, whatever ends it
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        for src, dst in ((null, 0), (out_w, 1), (out_w, 2), (probe_r, 3), (reply_w, 4)):
            os.dup2(src, dst)
        os.closerange(5, 65536)
        os.chdir(scratch)
        os.environ.clear()
        os.environ.update(worker_env(scratch))
        from tutor.grading import worker

        worker.serve_forked(3, 4, header)
        code = 0
    except BaseException:  # the judge sees the exit code and the output
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def worker_env(scratch: Path) -> dict[str, str]:
    """The worker's environment: none of the tutor's settings, HOME and temp files in its scratch."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TUTOR_", "PYTHON", "XDG_")) and k not in ("HOME", "VIRTUAL_ENV", "TMPDIR")
    }
    env.update(
        HOME=str(scratch), TMPDIR=str(scratch), XDG_DATA_HOME=str(scratch), XDG_CACHE_HOME=str(scratch)
    )
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    return env


class Channel:
    """One worker process and the three pipes to it: probes in, answers out, output out."""

    def __init__(self, job: dict, isolate: bool):
        from tutor.grading import wire

        self.wire = wire
        self.limits = job["limits"]
        self.lang = job.get("lang", "en")
        self.scratch = Path(tempfile.mkdtemp(prefix="tutor-grade-"))
        probe_r, self.probe_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        self.out_r, out_w = os.pipe()
        header = {
            "root": job["root"],
            "scratch": str(self.scratch),
            "limits": self.limits,
            "isolate": isolate,
        }
        self.pid = _fork_worker(header, probe_r, reply_w, out_w, self.scratch)
        self.returncode: int | None = None
        for fd in (probe_r, reply_w, out_w):
            os.close(fd)
        os.set_blocking(self.probe_w, False)
        self.pending = b""
        self.buffer = b""
        self.output = bytearray()
        self.output_total = 0
        self.next_id = 0
        self.deadline = time.monotonic() + job["timeout_s"]
        self.timeout_s = job["timeout_s"]
        self.isolation: dict | None = None

    def say(self, key: str, **values: Any) -> str:
        """A text of the catalogue in the job's language, values used as given (numbers as code)."""
        from tutor.texts import say

        return say(key, self.lang, **{k: str(v) for k, v in values.items()})

    # --- the select loop ------------------------------------------------------------------------
    def _pump(self) -> None:
        """Move bytes once: the pending probe out, answers and output in. Raises Stopped."""
        from tutor.grading.remote import Stopped

        left = self.deadline - time.monotonic()
        if left <= 0:
            self.kill()
            raise Stopped("timeout", self.say("grade.stop.timeout", s=f"{self.timeout_s:g}"))
        reads = [fd for fd in (self.reply_r, self.out_r) if fd >= 0]
        writes = [self.probe_w] if self.pending else []
        ready_r, ready_w, _ = select.select(reads, writes, [], min(left, 0.5))
        if ready_w:
            try:
                self.pending = self.pending[os.write(self.probe_w, self.pending) :]
            except BlockingIOError:
                pass
            except BrokenPipeError:
                self.pending = b""  # the worker is gone: its answer channel will say so
        if self.out_r in ready_r:
            self._take_output()
        if self.reply_r in ready_r:
            chunk = os.read(self.reply_r, 1 << 20)
            if not chunk:
                raise Stopped("error", self._death_reason())
            self.buffer += chunk
            if len(self.buffer) > REPLY_LIMIT:
                self.kill()
                raise Stopped("error", self.say("grade.stop.answer_too_large", mb=REPLY_LIMIT // 2**20))

    def _take_output(self) -> None:
        from tutor.grading.remote import Stopped

        chunk = os.read(self.out_r, 65536)
        if not chunk:
            os.close(self.out_r)
            self.out_r = -1
            return
        self.output_total += len(chunk)
        keep = self.limits["output_chars"] * 4 - len(self.output)
        if keep > 0:
            self.output += chunk[:keep]
        if self.output_total > self.limits["total_bytes"]:
            self.kill()
            mb = self.limits["total_bytes"] // 2**20
            raise Stopped("error", self.say("grade.stop.output_flood", mb=mb))

    def _death_reason(self) -> str:
        code = self.wait(timeout=2)
        if code is None:
            self.kill()
            return self.say("grade.stop.channel_closed")
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = self.say("grade.stop.signal", n=-code)
            if -code not in _SIGNALS:
                return self.say("grade.stop.crashed", signal=name)
            what = self.say(
                f"grade.signal.{name}", mb=self.limits["mem_bytes"] // 2**20, s=self.limits["cpu_s"]
            )
            return self.say("grade.stop.crashed_because", signal=name, what=what)
        return self.say("grade.stop.exit_code", code=code)

    def _answer(self) -> dict:
        from tutor.grading.remote import Stopped

        while b"\n" not in self.buffer:
            self._pump()
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict) or reply.get("id") != self.next_id:
            self.kill()
            raise Stopped("error", self.say("grade.stop.out_of_turn"))
        self.next_id += 1
        return reply

    def ready(self) -> dict:
        from tutor.grading.remote import Stopped

        if self.isolation is None:
            try:
                reply = self._answer()
            except Stopped as err:
                if err.status == "timeout":
                    raise
                last = (self.output.decode("utf-8", "replace").strip().splitlines() or [err.reason])[-1]
                raise Stopped("error", self.say("grade.stop.failed_early", error=last)) from None
            self.isolation = (
                reply.get("ready") if isinstance(reply.get("ready"), dict) else {"level": "unknown"}
            )
        return self.isolation

    def probe(self, op: str, args: list | None = None, kwargs: dict | None = None, **fields: Any) -> Any:
        from tutor.grading.remote import LearnerError, Stopped

        self.ready()
        message = {"id": self.next_id, "op": op, **fields, "args": self.wire.encode(args or []),
                   "kwargs": self.wire.encode(kwargs or {})}  # fmt: skip
        self.pending += (json.dumps(message, allow_nan=False) + "\n").encode()
        reply = self._answer()
        if "error" in reply:
            raise LearnerError.from_reply(reply["error"], self.lang)
        try:
            return self.wire.decode(reply.get("ok"))
        except self.wire.WireError as err:
            raise Stopped("error", self.say("grade.stop.not_plain_data", error=err)) from None

    def take_output(self) -> tuple[str, int]:
        text = self.output.decode("utf-8", errors="replace")
        total = self.output_total
        self.output, self.output_total = bytearray(), 0
        return text, total

    def restart_clock(self) -> None:
        self.deadline = time.monotonic() + self.timeout_s

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        end = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)  # its own session: the group is the worker
            except (ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        self.kill()
        if self.out_r >= 0:  # what the worker printed last, if any
            while select.select([self.out_r], [], [], 0)[0] and os.read(self.out_r, 65536):
                pass
        for fd in (self.probe_w, self.reply_r, self.out_r):
            if fd >= 0:
                os.close(fd)
        self.probe_w = self.reply_r = self.out_r = -1
        shutil.rmtree(self.scratch, ignore_errors=True)


def load_checks(path: str) -> types.ModuleType:
    module = types.ModuleType("_tutor_exercise_checks")
    module.__file__ = path
    sys.modules[module.__name__] = module
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), module.__dict__)
    return module


def run_check(function, sub) -> tuple[str, str]:
    """(status, message): pass, fail (a wrong answer) or error (the learner's code raised).
    Stopped (the worker is gone) passes through: the remaining checks cannot run; so does a message
    the exercise lacks (MessageMissing): the grader failed, not the learner. Messages are in the
    language of the enclosing `kit.speaking`."""
    from tutor.grading.kit import CheckFailed, MessageMissing, lang
    from tutor.grading.remote import LearnerError, Stopped
    from tutor.texts import say

    try:
        return "pass", str(function(sub) or "")
    except (CheckFailed, AssertionError) as err:
        return "fail", str(err) or say("grade.code.assertion", lang())
    except LearnerError as err:
        return "error", err.text
    except (Stopped, MessageMissing):
        raise
    except Exception as err:  # what came back could not even be compared
        return "fail", say("grade.code.no_compare", lang(), error=f"{type(err).__name__}: {err}")[:1500]


class Judge:
    def __init__(self, job: dict, emit):
        self.job, self.emit = job, emit
        self.channel: Channel | None = None

    def _channel(self) -> Channel:
        if self.channel is None or self.channel.poll() is not None:
            if self.channel is not None:
                self.channel.close()
            self.channel = Channel(self.job, isolate=not self.job["reuse"])
        return self.channel

    def grade(self, index: int, item: dict, functions: dict) -> None:
        from tutor.grading.remote import LearnerError, Stopped, Submission

        self.emit({"event": "file", "index": index})
        t0 = time.monotonic()
        channel = self._channel()
        channel.restart_clock() if self.job["reuse"] else None
        try:
            self.emit({"event": "isolation", **channel.ready()})
            names = channel.probe("submit", source=item["source"], display=item["display"])
            if not isinstance(names, dict) or not isinstance(names.get("names"), dict):
                channel.kill()
                raise Stopped("error", channel.say("grade.stop.malformed"))
            sub = Submission(channel, names["names"], item["source"], item["display"])
            for cid, function in functions.items():
                self.emit({"event": "start", "check": cid})
                status, message = run_check(function, sub)
                self.emit({"event": "check", "check": cid, "status": status, "message": message[:2000]})
        except LearnerError as err:
            self.emit({"event": "import_error", "message": err.text})
        except Stopped as err:
            self.emit({"event": "stopped", "status": err.status, "reason": err.reason})
        if not self.job["reuse"] or channel.poll() is not None:
            channel.close()
            self.channel = None
        output, total = channel.take_output()
        self.emit({"event": "done", "seconds": round(time.monotonic() - t0, 3), "output": output,
                   "output_bytes": total})  # fmt: skip


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tutor.childproc import die_with_parent

    die_with_parent()
    import torch  # then torch: the tutor may start this process before it knows the job

    torch.set_num_threads(1)
    job = json.loads(sys.stdin.read())
    sys.path.insert(0, job["root"])
    sys.dont_write_bytecode = True
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the checks print must not mix with the events

    def emit(record: dict) -> None:
        results.write(json.dumps(record) + "\n")  # ASCII: a lone surrogate from the worker stays an escape
        results.flush()

    from tutor.grading.kit import speaking

    judge = Judge(job, emit)
    judge._channel()  # forked now: torch is imported, checks.py is not yet loaded
    checks = load_checks(job["checks_file"])
    functions = {cid: getattr(checks, f"check_{cid}") for cid in job["checks"]}
    try:
        with speaking(job.get("lang", "en"), job.get("messages", {})):
            for index, item in enumerate(job["files"]):
                judge.grade(index, item, functions)
    finally:
        if judge.channel is not None:
            judge.channel.close()


if __name__ == "__main__":
    main()
