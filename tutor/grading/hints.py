"""How a failing grade helps, the same in the terminal and the app: it says what is wrong (each
check's message); how to fix it comes from the tiered hints, one at a time. First the exercise's
general hints, each asked for (`grade --hint`, `h` in the app); once all of them are seen, the first
failure's own hint. Until then a line says how to get the next general hint. Without a store
(`hints_seen` None) the first failure's own hint is shown at once."""

from __future__ import annotations

from dataclasses import dataclass

from tutor.content.schema import Exercise
from tutor.grading.result import CheckResult, GradeResult


@dataclass(frozen=True)
class HintStep:
    own: CheckResult | None  # the check whose own hint is shown with this grade
    next: int | None  # the general hint to ask for next (1-based), while some are unseen
    total: int  # the exercise's general hints


def hint_step(result: GradeResult, ex: Exercise, hints_seen: int | None) -> HintStep:
    total = len(ex.hints)
    first = result.first_failure
    if first is None:
        return HintStep(None, None, total)
    if hints_seen is not None and hints_seen < total:
        return HintStep(None, hints_seen + 1, total)
    return HintStep(first if first.hint else None, None, total)
