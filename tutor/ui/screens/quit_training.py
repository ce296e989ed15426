"""Asked when the learner quits while a training run goes: quit and lose the run in progress, or keep
training (the default: Esc, or Enter on the first button). Finished runs of the job are in the store
already (the child records each as it ends), so the question names only what would be lost: the runs not done
(in progress or still to start), counted as the panel and the key bar count them (one Training for all three)."""

from __future__ import annotations

from tutor.texts import say
from tutor.ui.messages import Training
from tutor.ui.screens.keep_or_lose import KeepOrLose


class QuitTraining(KeepOrLose):
    """Dismissed with "lose" to quit, "keep" to keep training."""

    def __init__(self, training: Training, lang: str) -> None:
        t = training
        body = say(
            "run.quit_body",
            lang,
            title=say(f"exp.{t.experiment}.title", lang),
            finished=t.finished,
            runs=t.runs,
            done=t.done,
            total=t.total,
        )
        lost = max(1, t.runs - t.finished)  # the runs not done, as the panel counts them; before its plan: 1
        super().__init__(
            say("run.quit_title", lang), body, say("run.quit_keep", lang), say("run.quit_lose", lang, n=lost)
        )
