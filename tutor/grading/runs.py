"""Grade a "runs" exercise: the learner's stored training runs plus their answer file.

No learner code runs here: the answer is a TOML file (parsed, never executed) and the runs come from
the progress store, so grading happens in this process. The exercise's checks.py (author code, like
every checks.py) gets a `RunsContext` and raises CheckFailed when the runs or the answer are wrong.
"""

from __future__ import annotations

import time
import tomllib
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.content.schema import Exercise, pick
from tutor.grading.result import GradeResult
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


def load_checks(ex: Exercise) -> types.ModuleType:
    from tutor.grading.judge import load_checks as load

    return load(str(Path(ex.folder or ".") / "checks.py"))


def parse_answer(
    source: bytes, display_name: str, lang: str = "en"
) -> tuple[dict[str, Any] | None, str | None]:
    """(answer, None) or (None, what is wrong with the file and where, in `lang`)."""
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


def grade_runs(
    ex: Exercise, source: bytes, display_name: str, runs: list[dict[str, Any]], *, lang: str = "en"
) -> GradeResult:
    """Grade an answer file against `runs` (from `stored_runs(store)`)."""
    from tutor.grading.judge import run_check
    from tutor.grading.kit import speaking
    from tutor.grading.runner import Limits, build_result

    t0 = time.perf_counter()
    answer, problem = parse_answer(source, display_name, lang)
    if problem is not None:
        events = [{"event": "import_error", "message": problem}]
    else:
        module, ctx = load_checks(ex), RunsContext(runs=runs, answer=answer or {})
        events = []
        with speaking(lang, {key: pick(text, lang) for key, text in ex.messages.items()}):
            for decl in ex.checks:
                status, message = run_check(getattr(module, f"check_{decl.id}"), ctx)
                events.append({"event": "check", "check": decl.id, "status": status, "message": message})
    events.append(
        {"event": "done", "seconds": round(time.perf_counter() - t0, 3), "output": "", "output_bytes": 0}
    )
    return build_result(ex, events, Limits(timeout_s=ex.timeout_s), lang)
