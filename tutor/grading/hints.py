"""How a failing grade helps, the same in the terminal and the app: it says what is wrong (each
check's message); how to fix it comes from the tiered hints, one at a time. First the exercise's
general hints, each asked for (`grade --hint`, `h` in the app); once all of them are seen, the first
failure's own hint. Until then a line says how to get the next general hint. Without a store
(`hints_seen` None) the first failure's own hint is shown at once. A general hint is revealed and
recorded by `reveal_hint`."""

from __future__ import annotations

from dataclasses import dataclass

from tutor.content.schema import Exercise
from tutor.errors import TutorError
from tutor.grading.result import CheckResult, GradeResult
from tutor.i18n import pick
from tutor.texts import say


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


def reveal_hint(store, ex: Exercise, number: int | None, lang: str) -> tuple[int, str]:
    """General hint `number` (1-based; None = the next one not yet revealed), recorded in the store."""
    if not ex.hints:
        raise TutorError(say("grade.help.none", lang, id=ex.id))
    seen = {r.hint for r in store.hint_reveals(ex.id)} if store is not None else set()
    if number is None:
        number = next((i for i in range(1, len(ex.hints) + 1) if str(i - 1) not in seen), len(ex.hints))
    if not 1 <= number <= len(ex.hints):
        raise TutorError(say("grade.help.range", lang, id=ex.id, n=str(len(ex.hints)), number=str(number)))
    if store is not None:
        store.record_hint(ex.id, str(number - 1))
    return number, pick(ex.hints[number - 1], lang)
