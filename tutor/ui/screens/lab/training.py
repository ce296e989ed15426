"""`t`: the learner's passing model trained beside the course's (an exercise's `train`), in the warm
judge's fork (tutor.ui.grading_client): a line that stays for the start, each validation and the end,
and a live step line rewritten in place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tutor.ui.rich_markdown import ProseText
from tutor.ui.screens.lab import run_exclusive

if TYPE_CHECKING:
    from tutor.ui.grading_client import OwnTraining
    from tutor.ui.screens.exercise import ExerciseScreen

GROUP = "train"  # the screen's worker group of a training run


class LabTraining:
    def __init__(self, screen: ExerciseScreen) -> None:
        self.screen = screen
        self._lines: list[str] = []  # the lines of the current run that stay
        self._progress: str | None = None  # its live step line

    def possible(self) -> bool:
        """Only where the file builds a model, and once it passes."""
        pair = self.screen.pair
        return pair is not None and pair[1].train is not None and self._passed()

    def _passed(self) -> bool:
        result = self.screen.grading.result
        return result is not None and result.status == "pass"

    def start(self) -> None:
        screen, pair = self.screen, self.screen.pair
        if pair is None or pair[1].train is None or screen.file is None:
            return
        if not self._passed():
            screen.notify(screen.t("train.own.pass_first"))
            return
        self._lines = []
        self._line(screen.t("train.own.start", steps=pair[1].train.steps, compare=self._compare()))
        run_exclusive(screen, self._train, name="_train", group=GROUP)

    def _line(self, line: str | None = None, progress: str | None = None) -> None:
        """Add a line that stays (the start, each validation, the end), or set the live step line."""
        if line is not None:
            self._lines.append(line)
        self._progress = progress
        box = self.screen.query_one("#ex-train", Static)
        box.display = True
        box.update(ProseText("\n".join([*self._lines, *([progress] if progress else [])])))
        box.scroll_visible(animate=False)

    def _on_event(self, event: dict[str, Any]) -> None:
        """Progress from the judge: the step line is rewritten in place, each validation stays."""
        from tutor.grading.text import own_training_line

        line = own_training_line(event, self.screen.lang, self._compare())
        if event.get("event") == "training":
            self._line(progress=line)
        elif line is not None:
            self._line(line.strip(), progress=self._progress)

    def _compare(self) -> str:
        """The name of the model the learner's is trained beside (e.g. learned positions)."""
        pair = self.screen.pair
        return self.screen.t(f"term.pos.{pair[1].train.compare}") if pair and pair[1].train else ""

    async def _train(self) -> OwnTraining:
        from tutor.ui.grading_client import train_in_thread

        screen, pair = self.screen, self.screen.pair
        assert pair is not None and screen.file is not None
        warm = screen.tutor.warm_judge()
        return await train_in_thread(pair[1], screen.file, screen.lang, warm, self._on_event)

    def on_worker(self, worker: Worker, state: WorkerState) -> None:
        """The screen's training worker ended (or moved on)."""
        if state == WorkerState.SUCCESS:
            from tutor.grading.text import training_end

            self._line(training_end(worker.result, self.screen.lang, self._compare()))
        elif state == WorkerState.ERROR:
            self._line(self.screen.t("train.own.stopped", reason=worker.error))
