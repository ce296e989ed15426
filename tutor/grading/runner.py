"""Grade submissions: the tutor's side. It starts the judge and builds the grade from its events.

Three processes, each with one job:
- this one (the CLI, or `grade --json` under the app) reads the learner's file once, from a regular
  file of bounded size, and never imports torch or the learner's code;
- the judge (judge.py, trusted) runs the exercise's checks and computes every verdict;
- the worker (worker.py, untrusted, confined by sandbox.py) runs the learner's code and answers the
  judge's probes with plain data.
The worker has no channel to this process, and nothing it prints reaches a terminal unfiltered: every
text is decoded with replacement and stripped of control and escape sequences (`clean`), and a check's
message is one line (tutor.grading.untrusted).
Every message is in the learner's language: the judge gets it in its job (`lang`, with the exercise's
`messages` in that language), and what this side adds comes from the same catalogue.
Each file's seed (tutor.grading.kit.grade_seed) is chosen here, under a key this process draws and
never hands on; the judge reads the seeds after the rest of its job, once its worker is forked
(`_framed`), so the worker never holds them.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tutor.content.schema import Exercise
from tutor.grading.box import sandbox
from tutor.grading.judges import JudgeSource, WarmJudge, start_judge
from tutor.grading.kit import grade_seed
from tutor.grading.result import CheckResult, GradeResult
from tutor.grading.untrusted import clean
from tutor.i18n import pick
from tutor.proc.child import ChildTimeout
from tutor.proc.forkserver import ServerGone
from tutor.settings import (
    GRADE_JUDGE_SLACK_S,
    GRADE_MAX_TASKS,
    GRADE_MEM_BYTES,
    GRADE_OUTPUT_CHARS,
    GRADE_TOTAL_BYTES,
    ROOT,
    allow_weak_box,
    box_landlock_abi,
)
from tutor.texts import say

Event = dict
OnEvent = Callable[[Event], object]  # what it returns is not used


@dataclass
class Limits:
    timeout_s: float
    mem_bytes: int = GRADE_MEM_BYTES
    output_chars: int = GRADE_OUTPUT_CHARS

    def cpu_s(self, phases: int = 1) -> int:
        # the whole wall-clock budget of `phases` timed phases (the loading, each check) on two cores
        # plus slack: wall time is the real limit, this one stops a runaway that escapes it
        return int(self.timeout_s * phases * 2 + 5)

    def to_job(self, phases: int = 1) -> dict:
        return {
            "mem_bytes": self.mem_bytes,
            "cpu_s": self.cpu_s(phases),
            "file_bytes": GRADE_TOTAL_BYTES,
            "total_bytes": GRADE_TOTAL_BYTES,
            "max_tasks": GRADE_MAX_TASKS,
            "output_chars": self.output_chars,
        }


_KEY: list[bytes] = []  # this process's secret for the seeds, once drawn (or given: use_grader_key)


def _grader_key() -> bytes:
    """This process's secret for the seeds: drawn once, kept in its memory only (never in a file, the
    judge's job or an environment a child inherits)."""
    if not _KEY:
        _KEY.append(secrets.token_bytes(32))
    return _KEY[0]


def use_grader_key(key: bytes) -> None:
    """Grade with `key` from now on in this process: for pictures of a grade (docs/make_screenshots.py,
    the snapshot tests), which name its probes and must draw the same ones every time. Never for a real
    grade: a key that is known makes every input predictable."""
    _KEY[:] = [key]


def file_seed(source: str) -> str:
    """The seed `source` is graded with in this process (kit.grade_seed under this process's key)."""
    return grade_seed(source, _grader_key())


@lru_cache(maxsize=16)
def _box(imports: tuple[str, ...], files: tuple[str, ...]) -> dict:
    """What a worker is handed (sandbox.box_for), worked out once per process and exercise."""
    return sandbox.box_for(list(imports), list(files), ROOT)


def run_judge(
    ex: Exercise,
    files: list[tuple[str, str]],
    limits: Limits,
    *,
    reuse: bool = False,
    on_event: OnEvent | None = None,
    lang: str = "en",
    warm: JudgeSource | None = None,
    cancel: threading.Event | None = None,
    train: dict | None = None,
    seeds: list[str] | None = None,
) -> tuple[list[list[Event]], str | None]:
    """Grade `files` ([(source text, display name)]) with `seeds` (one a file; default: each file's
    `file_seed`); the judge's events per file, and why the judge
    stopped early (None when it finished), every message in `lang`. The judge comes from `warm` when
    given, else it is started cold. With `train` (own_model.settings) it trains the one file's model
    instead of grading it. A file's "done" event carries the seconds the learner waited for it: from
    the call (the first file: a judge starting or a warm one forking included) or the file before."""
    job = _job(ex, files, limits, reuse=reuse, lang=lang, train=train)
    per_file: list[list[Event]] = [[] for _ in files]
    since = time.monotonic()
    try:
        child = warm.judge() if warm is not None else start_judge()
    except ServerGone as gone:
        return per_file, _judge_exit("?", str(gone), lang)
    try:
        child.send(_framed(job, seeds or [file_seed(source) for source, _ in files]))
        deadline = (
            time.monotonic()
            + limits.timeout_s * _phases(ex, train) * max(len(files), 1)
            + GRADE_JUDGE_SLACK_S
        )
        _sort_events(child.events(deadline=deadline, cancel=cancel), per_file, since, on_event)
        if child.returncode not in (0, None):
            return per_file, _judge_exit(str(child.returncode), child.stderr_tail(), lang)
    except ChildTimeout:
        return per_file, say("grade.stop.judge_late", lang)
    finally:
        child.close()  # the workers die with it (their parent-death signal)
    return per_file, None


def _phases(ex: Exercise, train: dict | None) -> int:
    """The timed phases of one file, each with `timeout_s` of its own: the loading and each check (a
    training run is one)."""
    return 1 if train else 1 + len(ex.checks)


def _job(
    ex: Exercise, files: list[tuple[str, str]], limits: Limits, *, reuse: bool, lang: str, train: dict | None
) -> dict:
    """What the judge is told before it forks its worker: the checks to run (or the training), the
    files, the limits, the worker's box and the messages in the learner's language. No seed: those
    come after (`_framed`)."""
    return {
        "train": train,
        "root": str(ROOT),
        "checks_file": str((Path(ex.folder or ".") / "checks.py").resolve()),
        "checks": [c.id for c in ex.checks],
        "files": [{"source": s, "display": d} for s, d in files],
        "limits": limits.to_job(_phases(ex, train) * (len(files) if reuse else 1)),
        "timeout_s": limits.timeout_s,
        "reuse": reuse,
        "box": {**_box(tuple(ex.worker.imports), tuple(ex.worker.files)), "landlock_abi": box_landlock_abi()},
        "allow_weak_box": allow_weak_box(),
        "lang": lang,
        "messages": {key: pick(text, lang) for key, text in ex.messages.items()},
    }


def _framed(job: dict, seeds: list[str]) -> bytes:
    """The judge's stdin: the job's length in bytes on a line, the job, then the seeds (a JSON list,
    one a file). The judge reads exactly the job, forks its worker, and only then reads the seeds
    (judge.read_job, judge.read_seeds)."""
    head = json.dumps(job).encode()
    return b"%d\n" % len(head) + head + json.dumps(seeds).encode()


def _sort_events(
    events: Iterable[Event], per_file: list[list[Event]], since: float, on_event: OnEvent | None
) -> None:
    """The judge's events into the list of the file they are about (a "file" event starts the next);
    a "done" event gets the wall time since `since` or the file before, not the judge's own clock."""
    current = -1
    for event in events:
        if event.get("event") == "file":
            current = event["index"]
            continue
        if not 0 <= current < len(per_file):
            continue
        if event.get("event") == "done":
            event = {**event, "seconds": round(time.monotonic() - since, 3)}
            since = time.monotonic()
        per_file[current].append(event)
        if on_event is not None:
            on_event(event)


def _judge_exit(code: str, stderr: str, lang: str) -> str:
    """Why the grade stopped when the judge itself ended badly: its exit code and its last word."""
    tail = stderr.strip().splitlines()
    return say(
        "grade.stop.judge_exit",
        lang,
        code=code,
        error=tail[-1] if tail else say("grade.stop.no_output", lang),
    )


def _state(events: list[Event]) -> dict:
    state: dict = {
        "results": {},
        "import_error": None,
        "stop": None,
        "isolation": None,
        "seconds": 0.0,
        "output": "",
        "output_bytes": 0,
        "output_cut": False,
        "running": None,
    }
    for e in events:
        kind = e.get("event")
        if kind == "isolation":
            state["isolation"] = {
                key: e.get(key, default)
                for key, default in (("level", "unknown"), ("layers", []), ("missing", []))
            }
        elif kind == "start":
            state["running"] = e.get("check")  # until its result comes
        elif kind == "check":
            state["results"][e["check"]] = e
            state["running"] = None
        elif kind == "import_error":
            state["import_error"] = clean(str(e.get("message", "")))
        elif kind == "stopped":
            state["stop"] = (e.get("status", "error"), clean(str(e.get("reason", ""))))
        elif kind == "done":
            state["seconds"] = e.get("seconds", 0.0)
            state["output"], state["output_bytes"] = clean(e.get("output", "")), e.get("output_bytes", 0)
            state["output_cut"] = e.get("output_cut") is True
    return state


def _output(state: dict, limit: int, lang: str) -> str:
    text, total = state["output"], state["output_bytes"]
    if state["output_cut"] or len(text) > limit:
        text = text[:limit] + "\n" + say("grade.code.output_truncated", lang, total=total, limit=limit)
    return text


def _headline(reason: str) -> str:
    """A stop reason's first part, before its details (": …", " (…)"), in any of the languages."""
    return re.split(r"[:：]| \(|（", reason, maxsplit=1)[0]


def _stop(ex: Exercise, state: dict, lang: str, judge_stop: str | None) -> tuple[str, str | None]:
    """(status, reason) of what stopped the grade before its checks were done; reason None: nothing did."""
    if state["import_error"] is not None:
        return "error", say("grade.stop.load", lang, error=state["import_error"])
    if state["stop"] is not None:
        stop_status, stop_reason = state["stop"]
        running = next((decl for decl in ex.checks if decl.id == state["running"]), None)
        if stop_status == "timeout" and running is not None:  # the phase that ran out of time: a check
            check = f"{pick(running.title, lang)} [{running.id}]"
            stop_reason = say("grade.stop.while_checking", lang, reason=stop_reason, check=check)
        elif stop_status == "timeout" and not state["results"]:  # or the loading
            stop_reason = say("grade.stop.while_loading", lang, reason=stop_reason)
        return stop_status, stop_reason
    if len(state["results"]) < len(ex.checks):
        why = judge_stop or say("grade.stop.stopped_early", lang)
        return "error", say("grade.stop.grader_failed", lang, error=why)
    return "error", None


def build_result(
    ex: Exercise,
    events: list[Event],
    limits: Limits,
    lang: str,
    judge_stop: str | None = None,
    seed: str = "",
) -> GradeResult:
    """The grade of one file from the judge's events (the judge is trusted; its texts are cleaned)."""
    state = _state(events)
    stop_status, stop_reason = _stop(ex, state, lang, judge_stop)
    checks: list[CheckResult] = []
    skipped_note = None
    for decl in ex.checks:
        rec = state["results"].get(decl.id)
        if rec is not None:
            st, msg = rec["status"], clean(str(rec["message"]))
        elif skipped_note is None and stop_reason is not None:
            st, msg = stop_status, stop_reason
            skipped_note = say("grade.stop.not_run_because", lang, reason=_headline(stop_reason))
        else:
            st, msg = "skipped", skipped_note or say("grade.not_run", lang)
        checks.append(
            CheckResult(
                name=decl.id,
                status=st,
                message=msg,
                hint=pick(decl.hint, lang),
                points=decl.points if st == "pass" else 0,
                max_points=decl.points,
                title=pick(decl.title, lang),
            )
        )
    if stop_reason is not None:
        status = "timeout" if stop_status == "timeout" else "error"
    else:
        status = "pass" if all(c.status == "pass" for c in checks) else "fail"
    return GradeResult(
        exercise=ex.id,
        status=status,
        score=sum(c.points for c in checks),
        max_score=sum(decl.points for decl in ex.checks),
        checks=checks,
        duration_s=round(state["seconds"], 3),
        output=_output(state, limits.output_chars, lang),
        isolation=state["isolation"] or {"level": "none", "layers": [], "missing": []},
        seed=seed,
    )


def grade_many(
    ex: Exercise,
    files: list[tuple[str, str]],
    *,
    lang: str = "en",
    limits: Limits | None = None,
    reuse: bool = False,
    on_event: OnEvent | None = None,
    warm: JudgeSource | None = None,
    jobs: int = 1,
    cancel: threading.Event | None = None,
    on_done: Callable[[int], None] | None = None,
    seed: str | None = None,
) -> list[GradeResult]:
    """Learners' files get a judge each: a worker is forked from its judge, so no judge may have seen
    another learner's file; with `jobs` > 1, that many are graded at once (each in its own judge and
    box), and the results keep the order of `files`. The course's own files (`reuse`) share one judge
    and one worker. `on_done(n)` is called as each grade is made, with the number made so far (from a grading thread).
    Each file is graded with its `file_seed`, or with `seed` when given (a grade replayed)."""
    limits = limits or Limits(timeout_s=ex.timeout_s)
    batches = [files] if reuse else [[f] for f in files]
    lock, done = threading.Lock(), [0]  # files graded so far, counted under the lock

    def grade_batch(batch: list[tuple[str, str]]) -> list[GradeResult]:
        seeds = [seed or file_seed(source) for source, _ in batch]
        per_file, stopped = run_judge(
            ex,
            batch,
            limits,
            reuse=reuse,
            on_event=on_event,
            lang=lang,
            warm=warm,
            cancel=cancel,
            seeds=seeds,
        )
        results = [
            build_result(ex, events, limits, lang, stopped, drawn_from)
            for events, drawn_from in zip(per_file, seeds, strict=True)
        ]
        if on_done is not None:
            with lock:
                for _ in batch:
                    done[0] += 1
                    on_done(done[0])
        return results

    if jobs > 1 and len(batches) > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            graded = list(pool.map(grade_batch, batches))
    else:
        graded = [grade_batch(batch) for batch in batches]
    return [result for batch in graded for result in batch]


def grade_code(
    ex: Exercise,
    source: str,
    display_name: str,
    *,
    lang: str = "en",
    on_event: OnEvent | None = None,
    limits: Limits | None = None,
    warm: JudgeSource | None = None,
    cancel: threading.Event | None = None,
    seed: str | None = None,
) -> GradeResult:
    return grade_many(
        ex,
        [(source, display_name)],
        lang=lang,
        limits=limits,
        on_event=on_event,
        warm=warm,
        cancel=cancel,
        seed=seed,
    )[0]


def grade_trusted(
    items: list[tuple[Exercise, list[Path]]], lang: str = "en", warm: WarmJudge | None = None, jobs: int = 1
) -> dict[Path, GradeResult]:
    """{path: GradeResult} for the course's own files (references, starters, broken variants): one
    judge per exercise, one worker for all its files, all forked from one warm judge (`warm`, or one
    started for this call), so torch is imported once; `jobs` exercises are graded at once."""
    if warm is None:
        with WarmJudge() as own:
            return grade_trusted(items, lang, own, jobs)

    def grade(item: tuple[Exercise, list[Path]]) -> list[GradeResult]:
        ex, paths = item
        files = [(Path(p).read_text(encoding="utf-8"), str(p)) for p in paths]
        return grade_many(ex, files, lang=lang, reuse=True, warm=warm)

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(items)))) as pool:
        graded = list(pool.map(grade, items))
    return {
        Path(p): result
        for (_, paths), results in zip(items, graded, strict=True)
        for p, result in zip(paths, results, strict=True)
    }


@dataclass
class OwnTraining:
    """A training run of the learner's own model (exercise train): `curve` holds {"step", "val",
    "compare_val"} at every evaluation; `stop` says why it ended early (None when it ran every step)."""

    steps: int
    seconds: float
    curve: list[dict]
    compare: str
    stop: str | None = None
    isolation: dict | None = None


def training_result(events: list[Event], stopped: str | None, compare: str, lang: str) -> OwnTraining:
    """The training run of the learner's model from the judge's events (a job with `train`), and
    `stopped`, why the judge stopped early (run_judge)."""
    state = _state(events)
    curve = [
        {k: e[k] for k in ("step", "val", "compare_val")} for e in events if e.get("event") == "validated"
    ]
    done = [e for e in events if e.get("event") == "trained"]
    stop = None
    if state["import_error"] is not None:
        stop = say("grade.stop.load", lang, error=state["import_error"])
    elif state["stop"] is not None:
        stop = state["stop"][1]
    elif not done:
        stop = stopped or say("grade.stop.stopped_early", lang)
    return OwnTraining(
        steps=done[0]["steps"] if done else (curve[-1]["step"] if curve else 0),
        seconds=float(done[0]["seconds"]) if done else state["seconds"],
        curve=curve,
        compare=compare,
        stop=stop,
        isolation=state["isolation"],
    )


def error_result(ex: Exercise, message: str, lang: str = "en") -> GradeResult:
    """The verdict for a file that could not be given to the grader at all (unreadable, not UTF-8, ...)."""
    return build_result(
        ex, [{"event": "import_error", "message": message}], Limits(timeout_s=ex.timeout_s), lang
    )
