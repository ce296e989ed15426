"""The judge: runs an exercise's checks (trusted code) against submissions it never imports.

Started by runner.py as `python -I judge.py` with a JSON job on stdin (its length on a line, the job,
then the files' seeds: runner._framed) and an environment holding no more than the interpreter needs;
writes JSON-line events to stdout. Started as `judge.py --zygote FD`
it is a warm judge: it imports torch and the trusted grading code once and forks a fresh judge per job
(tutor.proc.forkserver.serve), so a grade costs a fork instead of a Python and torch start-up. Every message it writes is in the
job's language (`lang`); the checks write theirs from the exercise's `messages` in that language
(tutor.grading.kit.msg).

Before it reads any check, the judge imports torch and forks the worker's parent (the job says what
the worker is handed: sandbox.box_for, worked out by the tutor while this process imports torch), which enters new namespaces and forks the worker
(worker.py) as process 2 of its PID namespace (process 1 only waits for it: tutor.proc.fork.into_new_pid_namespace); the worker builds its box (sandbox.py) and answers
probes. The judge sends it the file's text and runs the checks in order, the loading and each check
with a time limit of its own (the job's `timeout_s`): every check asks the worker
for values through probes (tutor/grading/judging/remote.py) and computes the verdict here, with this
process's own torch, on inputs drawn from the file's seed (chosen by the tutor under a key of its own:
tutor.grading.kit.grade_seed) and the check's name. The seeds are read from stdin only after the
worker is forked (`read_job`, `read_seeds`): a fork copies the judge's memory, and the worker must not
find in its own what it will be asked. A reply that is not well-formed plain data of bounded
size voids the run with a reason; nothing the worker sends makes the judge raise. The worker is killed
after its file; with `reuse` (the course's own files) one boxed worker answers for every file, so
torch is imported once.

A job with `train` trains the learner's model instead of running checks (own_model.py): the file is
loaded as for a grade, and the training's events come between "isolation" and "done".

Events: {"event": "file", "index"}, {"event": "isolation", "level", "layers", "missing"},
{"event": "import_error", "message"}, {"event": "start", "check"}, {"event": "check", "check",
"status", "message"}, {"event": "stopped", "status", "reason"}, {"event": "done", "seconds",
"output", "output_bytes", "output_cut"}.
"""

from __future__ import annotations

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

if __name__ == "__main__":  # started as a script (python -I judge.py): the course's root is not on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tutor.grading.box.wire import REPLY_LIMIT  # noqa: E402
from tutor.grading.judging.remote import LearnerError, Stopped, Submission  # noqa: E402 - after the path is set
from tutor.proc.fork import fork_session, into_new_pid_namespace  # noqa: E402
from tutor.proc.forkserver import serve  # noqa: E402
from tutor.proc.spawn import die_with_parent  # noqa: E402

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


def _fork_worker(header: dict, probe_r: int, reply_w: int, out_w: int) -> int:
    """The worker's parent, forked from this process after torch is imported and before checks.py is
    loaded. It gets its own session, the three pipes as fds 3, 4 and 1/2 and no other descriptor of
    ours, enters new namespaces and forks the worker into them; it waits for it and ends as it ended.
    Where namespaces are refused it is the worker itself. Returns its pid: its session is the group
    the judge kills, the worker included (whatever ends the judge ends the box)."""
    return fork_session({1: out_w, 2: out_w, 3: probe_r, 4: reply_w}, lambda: _into_box(header))


def _into_box(header: dict) -> None:
    from tutor.grading.box import sandbox, worker

    cgroup = sandbox.join_pids_cgroup(header["limits"]["max_tasks"])  # before the cgroup namespace
    namespaces = sandbox.unshare()
    if namespaces:
        into_new_pid_namespace(range(5))  # only the worker holds fds 0-4: its end is the channel's end
    worker.serve_forked(3, 4, header, namespaces, cgroup)


class Channel:
    """One boxed worker and the three pipes to it: probes in, answers out, output out."""

    def __init__(self, job: dict, box: dict):
        from tutor.grading.box import wire

        self.wire = wire
        self.limits = job["limits"]
        self.lang = job.get("lang", "en")
        self.scratch = Path(tempfile.mkdtemp(prefix="tutor-grade-"))
        probe_r, self.probe_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        self.out_r, out_w = os.pipe()
        header = {"scratch": str(self.scratch), "limits": self.limits, **box}
        self.pid = _fork_worker(header, probe_r, reply_w, out_w)
        self.returncode: int | None = None
        for fd in (probe_r, reply_w, out_w):
            os.close(fd)
        os.set_blocking(self.probe_w, False)
        self.pending = b""
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no newline
        self.output = bytearray()
        self.output_total = 0
        self.next_id = 0
        self.awaiting = False  # a probe is out and its answer not yet read
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
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.kill()
            raise Stopped("timeout", self.say("grade.stop.timeout", s=f"{self.timeout_s:g}"))
        reads = [fd for fd in (self.reply_r, self.out_r) if fd >= 0]
        writes = [self.probe_w] if self.pending else []
        ready_r, ready_w, _ = select.select(reads, writes, [], min(left, 0.5))
        if ready_w:
            self._flush()
        if self.out_r in ready_r:
            self._take_output()
        if self.reply_r in ready_r:
            chunk = os.read(self.reply_r, min(1 << 20, REPLY_LIMIT + 1 - len(self.buffer)))
            if not chunk:
                raise Stopped("error", self._death_reason())
            self.buffer += chunk
            if len(self.buffer) > REPLY_LIMIT and b"\n" not in self.buffer[self.scanned :]:
                self.kill()
                raise Stopped("error", self.say("grade.stop.answer_too_large", mb=REPLY_LIMIT // 2**20))

    def _flush(self) -> None:
        """Write what of the pending probe the pipe takes now, without waiting."""
        try:
            self.pending = self.pending[os.write(self.probe_w, self.pending) :]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            self.pending = b""  # the worker is gone: its answer channel will say so

    def _take_output(self) -> None:
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

    def _line(self) -> bytes:
        """The next answer line; linear in its length (each byte is searched once)."""
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                self.scanned = 0
                return line
            self.scanned = len(self.buffer)
            self._pump()

    def _answer(self) -> dict:
        line = self._line()
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
        if self.isolation is None:
            try:
                reply = self._answer()
            except Stopped as err:
                if err.status == "timeout":
                    raise
                last = (self.output.decode("utf-8", "replace").strip().splitlines() or [err.reason])[-1]
                raise Stopped("error", self.say("grade.stop.failed_early", error=last)) from None
            ready = reply.get("ready")
            self.isolation = ready if isinstance(ready, dict) else {"level": "unknown"}
        return self.isolation

    def probe(self, op: str, args: list | None = None, kwargs: dict | None = None, **fields: Any) -> Any:
        self.send(op, args, kwargs, **fields)
        return self.answer()

    def send(self, op: str, args: list | None = None, kwargs: dict | None = None, **fields: Any) -> None:
        """Send a probe and return at once: the worker computes while this process does its own work
        (`answer` then waits for the reply). One probe is out at a time: an answer never asked for is
        read and dropped first, so replies stay in turn."""
        self.ready()
        if self.awaiting:
            try:
                self.answer()
            except LearnerError:
                pass
        message = {
            "id": self.next_id,
            "op": op,
            **fields,
            "args": self.wire.encode(args or []),
            "kwargs": self.wire.encode(kwargs or {}),
        }
        self.pending += (json.dumps(message, allow_nan=False) + "\n").encode()
        self.awaiting = True
        self._flush()

    def answer(self) -> Any:
        """The reply to the probe `send` sent, as plain data; LearnerError if the learner's code raised."""
        self.awaiting = False
        reply = self._answer()
        if "error" in reply:
            raise LearnerError.from_reply(reply["error"], self.lang)
        try:
            return self.wire.decode(reply.get("ok"))
        except Exception as err:  # noqa: BLE001 - whatever the worker sent, it is not an answer
            self.kill()
            why = str(err) if isinstance(err, self.wire.WireError) else f"{type(err).__name__}: {err}"
            raise Stopped("error", self.say("grade.stop.not_plain_data", error=why[:300])) from None

    def take_output(self) -> tuple[str, int, bool]:
        """What the worker printed (up to the kept bytes), how many bytes it printed, and whether
        some were left out."""
        text = self.output.decode("utf-8", errors="replace")
        total, cut = self.output_total, self.output_total > len(self.output)
        self.output, self.output_total = bytearray(), 0
        return text, total, cut

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
                os.killpg(self.pid, signal.SIGKILL)  # its own session: the box's parent and the worker
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
        from tutor.grading.box import sandbox

        sandbox.remove_pids_cgroup(self.pid)


def load_checks(path: str) -> types.ModuleType:
    module = types.ModuleType("_tutor_exercise_checks")
    module.__file__ = path
    sys.modules[module.__name__] = module
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), module.__dict__)
    return module


def _read_exactly(size: int) -> bytes:
    """`size` bytes of stdin, read from the descriptor itself (a buffered reader would take more)."""
    data = bytearray()
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise EOFError(f"the job ended after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def read_job() -> dict:
    """The job, and not a byte more of stdin: its length on a line, then the job (runner._framed)."""
    line = b""
    while not line.endswith(b"\n"):
        if len(line) > 20:
            raise ValueError("the job's first line is not its length")
        line += _read_exactly(1)
    return json.loads(_read_exactly(int(line)))


def read_seeds(files: list[dict]) -> None:
    """The rest of stdin, the files' seeds, into `files`: called once the worker is forked."""
    chunks = []
    while chunk := os.read(0, 65536):
        chunks.append(chunk)
    seeds = json.loads(b"".join(chunks))
    if len(seeds) != len(files):
        raise ValueError(f"{len(seeds)} seeds for {len(files)} files")
    for item, seed in zip(files, seeds, strict=True):
        item["seed"] = seed


def run_check(function, learner) -> tuple[str, str]:
    """(status, message): pass, fail (a wrong answer) or error (the learner's code raised).
    A check that returns nothing passes "as expected", naming its last call to the learner.
    Stopped (the worker is gone) passes through: the remaining checks cannot run; so does a message
    the exercise lacks (MessageMissing): the grader failed, not the learner. Messages are in the
    language of the enclosing `voice.speaking`."""
    from tutor.grading.judging.voice import CheckFailed, MessageMissing, tell
    from tutor.grading.kit import describe, last_call

    try:
        said = function(learner)
    except (CheckFailed, AssertionError) as err:
        return "fail", str(err) or tell("grade.code.assertion")
    except LearnerError as err:
        return "error", err.text
    except (Stopped, MessageMissing):
        raise
    except Exception as err:  # what came back could not even be compared: not what the check wanted
        error = f"{type(err).__name__}: {err}"
        call, value = last_call()
        if not call:
            return "fail", tell("grade.code.no_compare", error=error)[:1500]
        return "fail", tell(
            "grade.check.type_mismatch_returned", call=call, got=describe(value), error=error
        )[:1500]
    if said is not None:
        return "pass", str(said)
    call, _ = last_call()
    return "pass", tell("grade.check.as_expected_call", call=call) if call else tell(
        "grade.check.as_expected"
    )


class Judge:
    def __init__(self, job: dict, emit, box: dict):
        self.job, self.emit, self.box = job, emit, box
        self.channel: Channel | None = None

    def open_channel(self) -> Channel:
        """The worker for the next file: a fresh one, unless the course's own files share one. The
        first is forked before the seeds are read; a later one (the course's own files, after their
        worker died) is forked after, and those files are trusted."""
        if self.channel is None or self.channel.poll() is not None:
            if self.channel is not None:
                self.channel.close()
            self.channel = Channel(self.job, self.box)
        return self.channel

    def grade(self, index: int, item: dict, functions: dict) -> None:
        from tutor.grading.kit import Learner, seeded

        def checks(sub, channel: Channel) -> None:
            learner = Learner(sub)
            for cid, function in functions.items():
                self.emit({"event": "start", "check": cid})  # the tutor names the check if it times out
                channel.restart_clock()  # each check its own time limit, as the loading had
                with seeded(item["seed"], cid):
                    status, message = run_check(function, learner)
                self.emit({"event": "check", "check": cid, "status": status, "message": message[:2000]})

        self._serve(index, item, checks, reuse=self.job["reuse"])

    def train(self, item: dict, run: dict) -> None:
        """Train the learner's model (own_model.train_own) after loading the file, as `grade` loads it;
        the same events around it, so the tutor reads a training run like a grade."""
        from tutor.grading.judging.own_model import Refused, train_own

        def training(sub, channel: Channel) -> None:
            try:
                train_own(sub, run, self.emit, channel.say)
            except Refused as err:
                self.emit({"event": "stopped", "status": "error", "reason": str(err)})

        self._serve(0, item, training, reuse=False)

    def _refuse_a_weak_box(self, isolation: dict, channel: Channel) -> None:
        """Stopped before the file is loaded, where the box keeps less than "partial" promises (no write,
        signal or lease outside), unless the job allows a weak box."""
        from tutor.grading.box.sandbox import GRADED_LEVELS, LAYERS
        from tutor.texts import say

        if isolation.get("level") in GRADED_LEVELS or self.job.get("allow_weak_box"):
            return
        missing = [channel.say(f"grade.layer.{m}") for m in isolation.get("missing", []) if m in LAYERS]
        raise Stopped("error", say("grade.stop.weak_box", channel.lang, layers=missing))

    def _serve(self, index: int, item: dict, work, reuse: bool) -> None:
        """Load file `index` in the worker and hand it to `work(sub, channel)`: every way that can end
        is an event, then "done" with what the worker printed. With `reuse` the worker stays for the
        next file (unless it died)."""
        self.emit({"event": "file", "index": index})
        t0 = time.monotonic()
        channel = self.open_channel()
        channel.restart_clock() if reuse else None
        try:
            isolation = channel.ready()
            self.emit({"event": "isolation", **isolation})
            self._refuse_a_weak_box(isolation, channel)
            work(Submission.load(channel, item["source"], item["display"]), channel)
        except LearnerError as err:
            self.emit({"event": "import_error", "message": err.text})
        except Stopped as err:
            self.emit({"event": "stopped", "status": err.status, "reason": err.reason})
        except Exception as err:  # noqa: BLE001 - a fault of the grader's own: said, never a traceback
            channel.kill()
            reason = channel.say("grade.stop.grader_failed", error=f"{type(err).__name__}: {err}"[:300])
            self.emit({"event": "stopped", "status": "error", "reason": reason})
        if not reuse or channel.poll() is not None:
            channel.close()
            self.channel = None
        output, total, cut = channel.take_output()
        self.emit(
            {
                "event": "done",
                "seconds": round(time.monotonic() - t0, 3),
                "output": output,
                "output_bytes": total,
                "output_cut": cut,
            }
        )


def _warm_up(torch) -> None:
    """Run each kind of op once: torch loads kernels and reads CPU facts (/proc/cpuinfo) on first
    use, which a boxed worker could no longer do; every worker forked after this has them."""
    x = torch.randn(1, 2, 4, 8, requires_grad=True)
    y = torch.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)
    torch.nn.functional.cross_entropy(
        torch.nn.Linear(8, 8)(y).view(-1, 8), torch.zeros(8, dtype=torch.long)
    ).backward()
    torch.softmax(x.detach(), -1).sin().cos().triu().masked_fill(torch.ones(8, dtype=torch.bool), 0)


def _judge_job() -> None:
    """One judge's life: read the job from stdin, grade its files, write the events to stdout, end."""
    try:
        job = read_job()
        sys.path.insert(0, job["root"])
        results = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)  # what the checks print must not mix with the events

        def emit(record: dict) -> None:
            results.write(
                json.dumps(record) + "\n"
            )  # ASCII: a lone surrogate from the worker stays an escape
            results.flush()

        judge = Judge(job, emit, job["box"])
        judge.open_channel()  # forked now: checks.py is not yet loaded, no seed yet read
        read_seeds(job["files"])
        from tutor.grading.judging.voice import speaking

        try:
            if job.get("train"):  # practice: train the learner's model; no checks run
                judge.train(job["files"][0], job["train"])
            else:
                checks = load_checks(job["checks_file"])
                functions = {cid: getattr(checks, f"check_{cid}") for cid in job["checks"]}
                with speaking(job.get("lang", "en"), job.get("messages", {})):
                    for index, item in enumerate(job["files"]):
                        judge.grade(index, item, functions)
        finally:
            if judge.channel is not None:
                judge.channel.close()
        results.flush()
    except BaseException:  # the tutor sees no "done" event and says the grader failed, with this
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)  # every event is out: skip tearing torch down (0.3 s the tutor would wait for)


def main() -> None:
    die_with_parent()  # and if the tutor was already gone, end now
    import torch  # then torch: the tutor may start this process before it knows the job

    torch.set_num_threads(1)
    _warm_up(torch)
    # the trusted grading code every judge runs, imported once (a zygote's judges inherit it)
    from tutor.grading import kit  # noqa: F401
    from tutor.grading.box import seccomp, worker  # noqa: F401
    from tutor.grading.judging import remote  # noqa: F401

    seccomp.load_library()  # opened here: the worker's root has no /usr/lib
    sys.dont_write_bytecode = True
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        # a fresh judge per job, reading it and writing its events exactly as a judge started cold; the
        # zygote never reads a job, so no learner's file is in its memory, nor in a later judge's
        serve(int(sys.argv[2]), _judge_job)
    _judge_job()


if __name__ == "__main__":
    main()
