"""A grade as plain text for the terminal, in the learner's language: one line per check in order, the
first failure marked. The checks' own messages are the exercise's (lesson content).

What the learner's code wrote can never read as one of these lines: a check's message is one line
(tutor.grading.untrusted) indented under its check, each line of output is shown after "| ", and on a
terminal of known width (`render(..., width=)`) a text too long for one row is folded onto rows of the
same indent, so the terminal's own wrapping never starts a row with it."""

from __future__ import annotations

from rich.cells import cell_len

from tutor.content.schema import Exercise
from tutor.grading.box.sandbox import LAYERS
from tutor.grading.hints import hint_step
from tutor.grading.result import GradeResult
from tutor.i18n import pick
from tutor.texts import number, say

MARKS = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⧗", "skipped": "·"}


def render(
    result: GradeResult,
    ex: Exercise,
    lang: str = "en",
    hints_seen: int | None = None,
    width: int | None = None,
) -> str:
    """The grade says what is wrong; how to fix it comes from the tiered hints, one at a time
    (tutor.grading.hints): the general hints first (`--hint`), then the first failure's own. `width`:
    the terminal's columns, to fold long messages and output at (None: not a terminal, never folded)."""
    step = hint_step(result, ex, hints_seen)
    score, top = number(result.score, lang), number(result.max_score, lang)
    status = say(
        "word.labelled", lang, label=pick(ex.title, lang), text=say(f"grade.status.{result.status}", lang)
    )
    lines = [
        f"{ex.id} — {status}  "
        f"{score}/{top} {say('grade.points', lang)}  ({number(result.duration_s, lang, decimals=1)} s)"
    ]
    first = result.first_failure
    for c in result.checks:
        flag = f"   ← {say('grade.first', lang)}" if c is first else ""
        points = f"{number(c.points, lang)}/{number(c.max_points, lang)}"
        lines.append(f"  {MARKS[c.status]} {c.title or c.name} [{c.name}]  {points}{flag}")
        message = say("grade.not_run", lang) if c.status == "skipped" else c.message  # the reason is above
        if message:
            lines.extend(fold(message, "      ", width))
        if c is step.own:
            hint = say("word.labelled", lang, label=say("grade.hint", lang), text=c.hint)
            lines.extend(fold(hint, "      ", width))
    if step.next is not None:
        lines.append("  " + say("grade.more_hints", lang, id=ex.id, n=step.next, total=step.total))
    if result.output.strip():
        lines.append("  " + say("word.labelled", lang, label=say("grade.output", lang), text="").rstrip())
        for line in result.output.rstrip().splitlines():
            lines.extend(fold(line, "    | ", width))
    if result.status == "pass":
        lines.append(say("grade.passed", lang, id=ex.id))
    if (isolation := isolation_text(result.isolation, lang)) is not None:  # --json has the level and layers
        lines.append(f"  {isolation}")
    if result.saved is False:
        lines.append(say("grade.not_saved", lang))
    return "\n".join(lines)


def fold(text: str, indent: str, width: int | None) -> list[str]:
    """`text` after `indent`, as rows of at most `width` terminal columns (double-width characters
    count two), broken at spaces where it can be and inside a word where it must; every row starts
    with `indent`. One row when `width` is None."""
    if width is None:
        return [indent + text]
    room = max(width - cell_len(indent), 20)
    rows, row = [], ""
    for word in text.split(" "):
        piece = f"{row} {word}" if row else word
        if cell_len(piece) <= room:
            row = piece
            continue
        if row:
            rows.append(row)
        row = ""
        for ch in word:  # a word longer than a row is cut where the row ends
            if cell_len(row + ch) > room:
                rows.append(row)
                row = ""
            row += ch
    rows.append(row)
    return [indent + r for r in rows]


def isolation_text(isolation: dict, lang: str) -> str | None:
    """What the box meant for the learner's code, in a sentence ("Your code ran in a sealed box: no
    network, no files outside its folder."), naming the layers this system lacked; None for a grade no
    learner code ran for. The level's own name ("strong") and the layers are the JSON's."""
    level = isolation.get("level", "none")
    if level not in ("strong", "partial", "basic"):
        return None
    missing = [say(f"grade.layer.{m}", lang) for m in isolation.get("missing", []) if m in LAYERS]
    return say(f"grade.box.{level}", lang, layers=missing)


def own_training_line(event: dict, lang: str, compare: str) -> str | None:
    """The line for a progress event of a training run of the learner's model (own_model.py): its length
    measured on its first steps ("estimate"), a step ("training") or a validation ("validated"); None for any
    other event. `compare` names the other model."""
    kind = event.get("event")
    if kind == "estimate":
        from tutor.experiments.result import about, words

        return say(
            "train.own.estimate", lang, step=event["step"], time=words(about(float(event["seconds"])), lang)
        )
    if kind == "training":
        return say(
            "train.own.step",
            lang,
            step=event["step"],
            steps=event["steps"],
            compare=compare,
            loss=number(event["loss"], lang, decimals=3),
            compare_loss=number(event["compare_loss"], lang, decimals=3),
            seconds=number(event["seconds"], lang, decimals=0),
        )
    if kind == "validated":
        return say(
            "train.own.validated",
            lang,
            step=event["step"],
            compare=compare,
            val=number(event["val"], lang, decimals=3),
            compare_val=number(event["compare_val"], lang, decimals=3),
        )
    return None


def training_end(run, lang: str, compare: str) -> str:
    """How a training run of the learner's model ended (runner.OwnTraining): both last losses, or why it
    stopped."""
    if run.stop is not None or not run.curve:
        return say("train.own.stopped", lang, reason=run.stop or "")
    last = run.curve[-1]
    gap = last["compare_val"] - last["val"]
    verdict = say(
        "train.own.lower" if gap > 0 else "train.own.higher",
        lang,
        gap=number(abs(gap), lang, decimals=3),
        compare=compare,
    )
    return say(
        "train.own.done",
        lang,
        steps=run.steps,
        seconds=number(run.seconds, lang, decimals=0),
        val=number(last["val"], lang, decimals=3),
        compare=compare,
        compare_val=number(last["compare_val"], lang, decimals=3),
        verdict=verdict,
    )


def did_not_load(result) -> bool:
    """Whether the grade stopped before the file loaded (it could not be read, did not compile or
    import, or ran out of time loading): its first check carries why, in any of the languages."""
    from tutor.i18n import LANGS

    if result.status not in ("error", "timeout") or not result.checks:
        return False
    message = result.checks[0].message
    for lang in LANGS:
        load = say("grade.stop.load", lang, error="\0").split("\0")[0]
        loading = say("grade.stop.while_loading", lang, reason="\0").split("\0")[-1]
        if message.startswith(load) or message.endswith(loading):
            return True
    return False
