"""Grade a learner's file in a sandboxed child process and build the verdict on the grader's side.

The child is harness.py under `python -I` in a scratch directory, stdin closed, an environment
without TUTOR_* (and HOME pointing at the scratch directory, so it cannot guess the default store
either), hard limits on memory, CPU time and file size, in its own process group (so anything it
starts dies with it). Results stream back on a private pipe as JSON lines stamped with a nonce the
parent sent over a second pipe; stdout and stderr go to a file that is only ever shown as output.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tutor.content.schema import Exercise, pick
from tutor.grading.result import CheckResult, GradeResult

HARNESS = Path(__file__).with_name("harness.py")
ROOT = Path(__file__).resolve().parents[2]  # holds tutor/ and models/

# Address space, not resident memory: grading rope (torch imported, the model trained) peaks at
# ~0.65 GB of virtual memory with one thread (VmPeak, measured by benchmarks/bench_grading.py).
# 3 GiB leaves room for a learner's extra threads (each maps a stack and an allocator arena) and
# stops a 10 GB allocation at once.
DEFAULT_MEM_BYTES = 3 * 2**30
OUTPUT_LIMIT = 8000  # characters of output kept
FSIZE_LIMIT = 16 * 2**20  # bytes the child may write to any file, its output included
RECORD_LIMIT = 2**16  # bytes of one result line; the harness's longest (a 2000-character message) is ~12 KB

Event = dict
OnEvent = Callable[[Event], None]

_SIGNALS = {  # SIGKILL and SIGXCPU are described with the limits in _death_reason
    signal.SIGSEGV: "segmentation fault (your code read or wrote memory it does not own)",
    signal.SIGXFSZ: f"output or file size limit of {FSIZE_LIMIT // 2**20} MB exceeded",
    signal.SIGABRT: "aborted",
    signal.SIGBUS: "bus error",
    signal.SIGFPE: "floating-point exception",
}


@dataclass
class Limits:
    timeout_s: float
    mem_bytes: int = DEFAULT_MEM_BYTES
    output_chars: int = OUTPUT_LIMIT

    @property
    def cpu_s(self) -> int:
        # the whole wall-clock budget on two cores (the learner may start threads), plus slack;
        # wall time is the real limit, this one stops a runaway that escapes it
        return int(self.timeout_s * 2 + 5)


class _Protocol:
    """Checks every record against the nonce and the expected order; any surprise voids the run."""

    def __init__(self, nonce: str, check_ids: list[str]):
        self.nonce = nonce
        self.check_ids = check_ids
        self.started = False
        self.import_error: str | None = None
        self.loading = False  # the learner's file is being imported
        self.imported = False
        self.running: str | None = None
        self.results: dict[str, dict] = {}
        self.tamper: list[str] | None = None
        self.done = False
        self.forged: str | None = None

    def feed(self, line: bytes) -> dict | None:
        if self.forged or self.done:
            self.forged = self.forged or "a record arrived after the end of grading"
            return None
        try:
            rec = json.loads(line)
        except ValueError:
            self.forged = "an unreadable record"
            return None
        if not isinstance(rec, dict) or rec.get("nonce") != self.nonce:
            self.forged = "a record without the grader's nonce"
            return None
        event = rec.get("event")
        expected_next = self.check_ids[len(self.results)] if len(self.results) < len(self.check_ids) else None
        if event == "hello" and not self.started:
            self.started = True
        elif event == "loading" and self.started and not self.loading:
            self.loading = True
        elif event == "import_error" and self.loading and not self.imported:
            self.import_error = str(rec.get("message", ""))
            self.done = True
        elif event == "imported" and self.loading and not self.imported:
            self.imported = True
        elif (
            event == "start" and self.imported and self.running is None and rec.get("check") == expected_next
        ):
            self.running = expected_next
        elif (
            event == "check"
            and self.running is not None
            and rec.get("check") == self.running
            and rec.get("status") in ("pass", "fail", "error")
            and isinstance(rec.get("message"), str)
        ):
            self.results[self.running] = rec
            self.running = None
        elif event == "tamper" and self.started:
            self.tamper = [str(n) for n in rec.get("names", [])][:8]
            self.done = True
        elif event == "done" and self.running is None and len(self.results) == len(self.check_ids):
            self.done = True
        else:
            self.forged = f"an out-of-order {event!r} record"
            return None
        return rec


def _child_env(scratch: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TUTOR_", "PYTHON", "XDG_")) and k not in ("HOME", "VIRTUAL_ENV")
    }
    env.update(HOME=str(scratch), XDG_DATA_HOME=str(scratch), XDG_CACHE_HOME=str(scratch))
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"  # see harness.py: one thread is faster here
    return env


def _read_output(path: Path, limit: int) -> str:
    size = path.stat().st_size if path.exists() else 0
    with open(path, "rb") as fh:
        raw = fh.read(limit * 4)
    text = raw.decode("utf-8", errors="replace")
    if size > len(raw) or len(text) > limit:
        text = (
            text[:limit]
            + f"\n[output truncated: {size:,} bytes in total, the first {limit:,} characters shown]"
        )
    return text


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_child(
    ex: Exercise, source: bytes, display_name: str, limits: Limits, on_event: OnEvent | None = None
) -> tuple[_Protocol, int | None, bool, str, float]:
    """Run the harness on `source`; returns (protocol state, return code, timed out, output, seconds)."""
    check_ids = [c.id for c in ex.checks]
    scratch = Path(tempfile.mkdtemp(prefix="tutor-grade-"))
    sub_path = scratch / "submission.py"
    sub_path.write_bytes(source)
    out_path = scratch.parent / f"{scratch.name}.out"
    nonce = secrets.token_hex(16)
    job = {
        "nonce": nonce,
        "root": str(ROOT),
        "checks_file": str((Path(ex.folder or ".") / "checks.py").resolve()),
        "checks": check_ids,
        "submission": str(sub_path),
        "display_name": display_name,
        "mem_bytes": limits.mem_bytes,
        "cpu_s": limits.cpu_s,
        "fsize_bytes": FSIZE_LIMIT,
    }
    proto = _Protocol(nonce, check_ids)
    job_r, job_w = os.pipe()
    res_r, res_w = os.pipe()
    t0 = time.monotonic()
    deadline = t0 + limits.timeout_s
    timed_out = False
    proc: subprocess.Popen | None = None
    try:
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-I", str(HARNESS), str(job_r), str(res_w)],
                pass_fds=(job_r, res_w),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=scratch,
                env=_child_env(scratch),
                start_new_session=True,
            )
        os.close(job_r)
        os.close(res_w)
        os.write(job_w, json.dumps(job).encode())
        os.close(job_w)
        job_w = -1
        buffer = b""
        grace_set = False
        while True:
            if proto.done and not grace_set:
                # the verdict is in; a process the learner forked may hold the channel open, so wait
                # a moment for the end of the channel, not for the whole time limit
                deadline, grace_set = min(deadline, time.monotonic() + 1.0), True
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = not proto.done
                break
            ready, _, _ = select.select([res_r], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(res_r, 65536)
            if not chunk:
                break  # the child closed the channel: it exited (or closed it itself)
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                rec = proto.feed(line)
                if rec is not None and on_event is not None:
                    on_event(rec)
            if len(buffer) > RECORD_LIMIT and not proto.forged:
                proto.forged = "an overlong record"  # a flood without newlines: stop buffering it
            if proto.forged:
                break
        if buffer.strip() and not proto.forged:
            proto.forged = "a partial record"
        if not timed_out and not proto.forged:  # a void run is stopped at once, not waited for
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = not proto.done  # finished grading but would not exit: the verdict stands
        _kill_group(proc.pid)
        returncode = proc.wait()
        seconds = time.monotonic() - t0
        output = _read_output(out_path, limits.output_chars)
    finally:
        if proc is not None and proc.poll() is None:  # interrupted (Ctrl-C, a cancelled worker)
            _kill_group(proc.pid)
            proc.wait()
        for fd in (job_w, res_r):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        shutil.rmtree(scratch, ignore_errors=True)
        out_path.unlink(missing_ok=True)
    return proto, returncode, timed_out, output, seconds


def _death_reason(returncode: int | None, limits: Limits) -> str:
    if returncode is None:
        return "the grading process vanished"
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        what = _SIGNALS.get(sig, "")
        if sig == signal.SIGKILL:
            what = f"killed (perhaps out of memory; the grader allows {limits.mem_bytes // 2**20} MB)"
        if sig == signal.SIGXCPU:
            what = f"CPU time limit of {limits.cpu_s} s exceeded"
        return f"the grading process crashed: {name}" + (f", {what}" if what else "")
    return (
        f"the process ended with exit code {returncode} before grading finished "
        "(did your code call os._exit() or close the grader's channel?)"
    )


def build_result(
    ex: Exercise,
    proto: _Protocol,
    returncode: int | None,
    timed_out: bool,
    output: str,
    seconds: float,
    limits: Limits,
    lang: str,
) -> GradeResult:
    """The verdict, from the protocol state alone: statuses the child reported, and what the parent saw."""
    checks: list[CheckResult] = []
    status = "pass"
    stop_reason: str | None = None  # why the first unreported check did not finish
    stop_status = "error"
    if proto.forged:
        status, stop_reason = "error", f"grading void: the result channel carried {proto.forged}"
    elif proto.tamper:
        status = "error"
        stop_reason = (
            "your code replaced or changed parts of the grader or of torch ("
            + ", ".join(proto.tamper)
            + "); grading stopped"
        )
    elif proto.import_error is not None:
        status, stop_reason = "error", f"could not load the file: {proto.import_error}"
    elif timed_out:
        status, stop_status = "timeout", "timeout"
        where = "" if proto.imported else " while loading your file"
        stop_reason = f"timed out after {limits.timeout_s:g} s{where}"
    elif not proto.done:
        status = "error"
        stop_reason = _death_reason(returncode, limits)
        if proto.loading and not proto.imported:
            stop_reason = f"{stop_reason}, while loading your file"
        if not proto.loading:  # the harness itself (or checks.py) failed before any learner code ran
            last = (output.strip().splitlines() or ["no output"])[-1]
            stop_reason = f"the grader failed before loading your file (not your fault): {last}"
    skipped_note = None
    for decl in ex.checks:
        title, hint = pick(decl.title, lang), pick(decl.hint, lang)
        rec = proto.results.get(decl.id) if not proto.forged else None
        if rec is not None:
            st, msg = rec["status"], rec["message"]
            if st != "pass" and status == "pass":
                status = "fail"
        elif skipped_note is None and stop_reason is not None:
            st, msg = stop_status, stop_reason
            skipped_note = f"not run: {stop_reason.split(':')[0].split(' (')[0]}"
        else:
            st, msg = "skipped", skipped_note or "not run"
        checks.append(
            CheckResult(
                name=decl.id,
                status=st,
                message=msg,
                hint=hint,
                points=decl.points if st == "pass" else 0,
                max_points=decl.points,
                title=title,
            )
        )
    if status == "pass" and stop_reason is not None:
        status = "error"
    return GradeResult(
        exercise=ex.id,
        status=status,
        score=sum(c.points for c in checks),
        max_score=sum(decl.points for decl in ex.checks),
        checks=checks,
        duration_s=round(seconds, 3),
        output=output,
    )


def grade_code(
    ex: Exercise,
    source: bytes,
    display_name: str,
    *,
    lang: str = "en",
    on_event: OnEvent | None = None,
    limits: Limits | None = None,
) -> GradeResult:
    limits = limits or Limits(timeout_s=ex.timeout_s)
    proto, rc, timed_out, output, seconds = run_child(ex, source, display_name, limits, on_event)
    return build_result(ex, proto, rc, timed_out, output, seconds, limits, lang)


def error_result(ex: Exercise, message: str, lang: str = "en") -> GradeResult:
    """The verdict for a file that could not be loaded at all (unreadable, not UTF-8, ...)."""
    proto = _Protocol("", [c.id for c in ex.checks])
    proto.import_error, proto.done = message, True
    return build_result(ex, proto, 0, False, "", 0.0, Limits(timeout_s=ex.timeout_s), lang)
