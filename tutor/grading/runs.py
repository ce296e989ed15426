"""Grade a "runs" exercise: the learner's stored training runs plus their answer file.

No learner code runs here: the answer is a TOML file (parsed, never executed) and the runs come from
the progress store, so grading happens in this process. The exercise's checks.py (author code, like
every checks.py) gets a `RunsContext` and raises CheckFailed when the runs or the answer are wrong.

The answer file is the learner's input, and TOML can hold more than the answer needs: strings, booleans,
integers of any length, inf and nan, dates and times, arrays and tables. A checks.py declares what each
key must hold (`ANSWER = {"best_heads": (1, 4, 8), "loss_gap": "number", "same_params": "boolean"}`)
and reads it with `answer_value(ctx.answer, key, kind)`, which fails the check with a message naming the
key, what it must be and what the file holds. A file that cannot be read at all (not UTF-8, not TOML,
nested too deeply, an integer too long for Python to read) is an error saying where.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sys
import time
import tomllib
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.content.schema import Exercise
from tutor.grading.result import GradeResult
from tutor.i18n import pick
from tutor.texts import say


@dataclass
class RunsContext:
    runs: list[dict[str, Any]]  # finished training runs: {"key", "config", "final_val_loss", "params", "at"}
    answer: dict[str, Any] = field(default_factory=dict)


def stored_runs(store) -> list[dict[str, Any]]:
    """Every finished training run this machine made, oldest first, as plain dicts. Runs that came
    from `progress --import` are shown as imported but never graded: a file can claim any loss."""
    if store is None:
        return []
    return [
        {
            "key": r.key,
            "config": r.config,
            "final_val_loss": r.final_val_loss,
            "params": r.params,
            "at": r.at.isoformat(),
        }
        for r in store.training_runs(status="done")
        if not r.imported
    ]


def exercise_checks(ex: Exercise) -> types.ModuleType:
    """The exercise's checks.py as a module, loaded as the judge loads it (judge.load_checks)."""
    from tutor.grading.judging.judge import load_checks as load

    return load(str(Path(ex.folder or ".") / "checks.py"))


# what an answer key must hold: "boolean", "number" (a finite one), or the whole numbers it may be
AnswerKind = str | tuple[int, ...]


def want_text(kind: AnswerKind, lang: str = "en") -> str:
    """What a key of this kind must hold, in words ("true or false (without quotes)")."""
    if isinstance(kind, tuple):
        return say("grade.answer.want.choice", lang, choices=[str(c) for c in kind])
    return say(f"grade.answer.want.{kind}", lang)


def _digits(value: int) -> int:
    """How many decimal digits |value| has, without writing it out (Python refuses past 4300)."""
    value = abs(value)
    digits = max(1, int(value.bit_length() * math.log10(2)))
    while value >= 10**digits:
        digits += 1
    return digits


def describe_value(value: Any, lang: str = "en") -> str:
    """What a TOML value is, with a short form of it, for a message: "the string \"?\"",
    "an integer of 5,000 digits", "an array of 3 value(s)"."""

    def got(kind: str, **values: Any) -> str:
        return say(f"grade.answer.got.{kind}", lang, **values)

    if isinstance(value, bool):
        return got("boolean", value=str(value).lower())
    if isinstance(value, int):
        return (
            got("integer", value=str(value))
            if _digits(value) <= 18
            else got("long_integer", digits=_digits(value))
        )
    if isinstance(value, float):
        if math.isfinite(value):
            return got("float", value=repr(value))
        return got("not_finite", value="nan" if math.isnan(value) else "inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return got(
            "string", value=json.dumps(value if len(value) <= 40 else value[:40] + "…", ensure_ascii=False)
        )
    if isinstance(value, dt.datetime):
        return got("datetime", value=value.isoformat())
    if isinstance(value, dt.date):
        return got("date", value=value.isoformat())
    if isinstance(value, dt.time):
        return got("time", value=value.isoformat())
    if isinstance(value, list):
        return got("array", n=len(value))
    if isinstance(value, dict):
        return got("table", n=len(value))
    return type(value).__name__


def _fits(value: Any, kind: AnswerKind) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "number":
        if isinstance(value, int):
            return value.bit_length() <= 1000  # as a float, finite
        return isinstance(value, float) and math.isfinite(value)
    return isinstance(value, int) and value in kind


def answer_value(answer: dict[str, Any], key: str, kind: AnswerKind) -> Any:
    """`answer[key]` when it is of `kind`; otherwise the check fails, saying what the key must be and
    what the file holds, in the language the checks are speaking. Call it inside a check."""
    from tutor.grading.judging.voice import CheckFailed, lang

    language = lang()
    want = want_text(kind, language)
    if key not in answer:
        raise CheckFailed(say("grade.answer.missing", language, key=key, want=want))
    value = answer[key]
    if not _fits(value, kind):
        got = describe_value(value, language)
        raise CheckFailed(say("grade.answer.wrong", language, key=key, want=want, got=got))
    return value


_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_ASSIGNMENT = re.compile(rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*=")
_INTEGER = re.compile(r"(?<![\w.])[0-9][0-9_]*(?![\w.]|\s*=)")  # not a float, a hex digit run or a key


def _in_code(prefix: str) -> bool:
    """Whether what follows `prefix` (the start of a line) is TOML code: not in a string or comment."""
    quote = None
    escaped = False
    for ch in prefix:
        if quote is None:
            if ch == "#":
                return False
            if ch in "\"'":
                quote = ch
        elif escaped:
            escaped = False
        elif ch == "\\" and quote == '"':
            escaped = True
        elif ch == quote:
            quote = None
    return quote is None


def _huge_integer(text: str, limit: int) -> tuple[int, str | None, int] | None:
    """(line, key, digits) of the first integer longer than Python reads (`limit` digits), and the
    key it is the value of (None when no key can be told)."""
    key, in_multiline = None, None
    for number, line in enumerate(text.splitlines(), 1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2:
                in_multiline = None
            continue
        if match := _ASSIGNMENT.match(line):
            key = match.group(1)[:60]
            if len(key) > 1 and key[0] == key[-1] in "\"'" and key[0] not in key[1:-1]:
                key = key[1:-1]  # "best_heads" = … is best_heads
        elif line.lstrip().startswith("["):
            key = None
        for found in _INTEGER.finditer(line):
            digits = len(found.group().replace("_", ""))
            if digits > limit and _in_code(line[: found.start()]):
                return number, key, digits
        in_multiline = next((q for q in ('"""', "'''") if line.count(q) % 2), None)
    return None


def parse_answer(
    source: bytes, display_name: str, lang: str = "en", expect: dict[str, AnswerKind] | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """(answer, None) or (None, what is wrong with the file and where, in `lang`). `expect` (the
    checks' ANSWER) lets a message about a key say what that key must be."""
    try:
        text = source.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        return None, say("grade.file.not_utf8", lang, name=display_name, byte=str(err.start))
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as err:
        return None, say("grade.file.not_toml", lang, name=display_name, error=str(err))
    except RecursionError:
        return None, say("grade.file.too_deep", lang, name=display_name)
    except ValueError as err:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        huge = _huge_integer(text, sys.get_int_max_str_digits() or 4300)
        if huge is None:
            return None, say("grade.file.not_toml", lang, name=display_name, error=str(err))
        line, key, digits = huge
        if key is None:
            return None, say("grade.file.huge_int_at", lang, name=display_name, line=str(line), digits=digits)
        expect = expect or {}
        advice = (
            say("grade.answer.expected", lang, want=want_text(expect[key], lang))
            if key in expect
            else say("grade.answer.not_graded", lang, key=key)
        )
        return None, say(
            "grade.file.huge_int",
            lang,
            name=display_name,
            line=str(line),
            key=key,
            digits=digits,
            advice=advice,
        )


def grade_runs(
    ex: Exercise, source: bytes, display_name: str, runs: list[dict[str, Any]], *, lang: str = "en"
) -> GradeResult:
    """Grade an answer file against `runs` (from `stored_runs(store)`)."""
    from tutor.grading.judging.judge import run_check
    from tutor.grading.judging.voice import speaking
    from tutor.grading.runner import Limits, build_result

    t0 = time.perf_counter()
    module = exercise_checks(ex)
    answer, problem = parse_answer(source, display_name, lang, getattr(module, "ANSWER", None))
    if problem is not None:
        events: list[dict[str, Any]] = [{"event": "import_error", "message": problem}]
    else:
        ctx = RunsContext(runs=runs, answer=answer or {})
        events = []
        with speaking(lang, {key: pick(text, lang) for key, text in ex.messages.items()}):
            for decl in ex.checks:
                status, message = run_check(getattr(module, f"check_{decl.id}"), ctx)
                events.append({"event": "check", "check": decl.id, "status": status, "message": message})
    events.append(
        {"event": "done", "seconds": round(time.perf_counter() - t0, 3), "output": "", "output_bytes": 0}
    )
    return build_result(ex, events, Limits(timeout_s=ex.timeout_s), lang)
