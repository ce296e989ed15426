"""The grade: `g` (and every save, told by the kernel or polled, tutor.grading.watch) grades the learner's
file in a judge forked from the app's warm judge (tutor.ui.grading_client). The verdict shows as soon as it
is back, each check with what it measured, the hint the tiered rule allows (tutor.grading.hints) and the
run's output; the writer thread records it meanwhile, and a pass's next step comes once it is recorded. A
grade on screen in another language is graded again in the new one, unrecorded, to word its checks."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tutor.grading.hints import hint_step
from tutor.grading.text import isolation_text
from tutor.grading.watch import SaveWatcher
from tutor.i18n import pick
from tutor.settings import FILE_POLL_S
from tutor.ui.rich_markdown import ProseText
from tutor.ui.screens.lab import run_exclusive

if TYPE_CHECKING:
    from pathlib import Path

    from textual.timer import Timer

    from tutor.grading.result import GradeResult
    from tutor.ui.screens.exercise import ExerciseScreen

ICON = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⏱", "skipped": "·"}
COLOUR = {"pass": "green", "fail": "red", "error": "red", "timeout": "yellow", "skipped": "dim"}
GROUP, REWORD = "grade", "reword"  # the screen's worker groups: a grade, and one worded again


class Grading:
    def __init__(self, screen: ExerciseScreen) -> None:
        self.screen = screen
        self.result: GradeResult | None = None  # the grade on screen
        self._graded_in: str | None = None  # its language (F5 words it again)
        self._watcher: SaveWatcher | None = None
        self._poll_timer: Timer | None = None

    # --- when to grade ----------------------------------------------------------------------

    def grade(self) -> None:
        """Grade the file now; the last grade stays, dimmed, until the new one replaces it."""
        screen = self.screen
        stale = self.result is not None
        self.status(screen.t("ex.grading_again" if stale else "ex.grading"), "yellow")
        screen.query_one("#ex-checks").set_class(stale, "-stale")
        screen.query_one("#ex-status").scroll_visible(animate=False)
        lang = screen.lang
        run_exclusive(screen, partial(self._grade, lang), name="_grade", group=GROUP)

    def watch(self, file: Path) -> None:
        """Re-grade on save: the kernel says when the file was saved (inotify, read by the event
        loop), or, where it cannot, its mtime is polled."""
        self.stop_watching()
        self._watcher = SaveWatcher(file)
        fd = self._watcher.fileno()
        if fd is not None:
            asyncio.get_running_loop().add_reader(fd, self.saved)
        else:
            self._poll_timer = self.screen.set_interval(FILE_POLL_S, self.saved)

    def stop_watching(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is None:
            return
        if (fd := watcher.fileno()) is not None:
            asyncio.get_running_loop().remove_reader(fd)
        else:
            assert self._poll_timer is not None  # polling, since there is no fd to watch
            self._poll_timer.stop()
        watcher.close()

    def saved(self) -> None:
        """The file may have been saved: grade it if it was, while the screen is showing."""
        screen = self.screen
        if self._watcher is not None and self._watcher.saved() and screen.unlocked and screen.is_current:
            self.grade()

    def saved_here(self) -> None:
        """The built-in editor saved the file: graded now, not a second time by the watcher."""
        if self._watcher is not None:
            self._watcher.saved()
        self.screen.action_grade()

    # --- the grade ----------------------------------------------------------------------------

    async def _grade(self, lang: str) -> tuple[str, GradeResult]:
        from tutor.ui.grading_client import grade_in_thread

        screen, pair = self.screen, self.screen.pair
        assert pair is not None and screen.file is not None
        screen.workers.cancel_group(screen, REWORD)  # a new grade replaces the one being worded again
        return lang, await grade_in_thread(
            screen.tutor, pair[1], screen.file, lang, on_recorded=self._recorded
        )

    def _recorded(self, saved: bool) -> None:
        """The grade on screen has been recorded by the writer thread, or not: the store stayed busy.
        A pass's next step is worked out now, from the progress that holds it."""
        screen = self.screen
        if not saved:  # the verdict stands, unrecorded
            screen.notify(screen.t("grade.not_saved"), severity="warning", timeout=8)
        if self.result is not None and self.result.status == "pass" and screen.is_mounted:
            self._suggest_next(True)

    def reword(self) -> None:
        """The grade on screen came in another language: the checks' own messages are worded as they
        run, so the same file is graded again in this one (recorded once already: not again), and
        shown if the file is still the one graded (the same seed). The rest is redrawn at once."""
        screen = self.screen
        if self._graded_in in (None, screen.lang) or screen.file is None:
            return
        lang = screen.lang
        run_exclusive(screen, partial(self._reword_in, lang), name="_reword_in", group=REWORD)

    async def _reword_in(self, lang: str) -> None:
        from tutor.ui.grading_client import grade_in_thread

        screen, pair, shown = self.screen, self.screen.pair, self.result
        if pair is None or shown is None:
            return
        assert screen.file is not None  # graded, so started
        again = await grade_in_thread(screen.tutor, pair[1], screen.file, lang, record=False)
        if (
            self.result is shown
            and again.seed == shown.seed
            and again.status == shown.status
            and lang == screen.lang
        ):
            self.result, self._graded_in = again, lang
            self.show(again)

    def on_worker(self, worker: Worker, state: WorkerState) -> None:
        """The screen's grade worker moved on."""
        screen = self.screen
        if state == WorkerState.CANCELLED and any(
            w.group == GROUP and w.node is screen and not w.is_finished for w in screen.workers
        ):
            return  # a newer grade replaced it and runs
        if worker.is_finished:
            screen.query_one("#ex-checks").remove_class("-stale")
        if state == WorkerState.SUCCESS:
            assert worker.result is not None  # a grade worker returns (language, result)
            self._graded_in, self.result = worker.result
            pair = screen.pair
            if pair is not None and pair[1].train is not None:
                screen.refresh_bindings()  # t (train) shows once the file passes
            self.show(self.result)
            if self.result.status != "pass":  # a pass's next step comes once it is recorded (_recorded)
                self._suggest_next(False)
            screen.refresh(layout=True)  # laid out before the callback below, not after it
            screen.call_after_refresh(self._reveal)
        elif state == WorkerState.ERROR:
            message = screen.t("ex.grade_failed", err=worker.error)
            self.status(message, "red")
            screen.notify(message, severity="error", timeout=8)
        elif state == WorkerState.CANCELLED:
            self.status("")

    # --- showing it ----------------------------------------------------------------------------

    def status(self, text: str, colour: str = "") -> None:
        self.screen.query_one("#ex-status", Static).update(ProseText(text, style=f"bold {colour}".strip()))

    def show(self, result: GradeResult) -> None:
        screen, pair = self.screen, self.screen.pair
        titles = {c.id: pick(c.title, screen.lang) for c in pair[1].checks} if pair else {}
        score = f"{result.score:g}"
        top = f"{result.max_score:g}"
        if result.status == "pass":
            self.status(screen.t("ex.pass", score=score, max=top), "green")
        else:
            verdict = screen.t(f"grade.verdict.{result.status}")
            self.status(screen.t("ex.fail", score=score, max=top, status=verdict), "red")
        table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
        table.add_column(width=1)
        table.add_column(ratio=1)
        first = result.first_failure
        step = hint_step(result, pair[1], screen.hints.shown) if pair else None
        for check in result.checks:
            colour = COLOUR.get(check.status, "")
            title = titles.get(check.name, check.name)
            head = ProseText(f"{title}", style=f"bold {colour}" if check is first else colour)
            # what the check measured, passed or not (the values are what the exercise teaches, as the
            # CLI shows them); how to fix a failure only as the hint rule says
            lines = [screen.t("grade.not_run") if check.status == "skipped" else check.message]
            if check.status != "pass" and step is not None and step.own is check:
                lines.append(f"💡 {check.hint}")
            table.add_row(Text(ICON.get(check.status, "?"), style=colour), head)
            if any(lines):
                table.add_row("", ProseText("\n".join(line for line in lines if line)))
        if step is not None and step.next is not None:
            more = screen.t("ex.more_hints", n=step.next, total=step.total)
            table.add_row("", ProseText(more, style="yellow"))
        if (isolation := isolation_text(result.isolation, screen.lang)) is not None:
            table.add_row("", ProseText(isolation, style="dim"))
        screen.query_one("#ex-checks", Static).update(table)
        output = result.output.strip()
        screen.query_one("#ex-output").display = bool(output)
        screen.query_one("#ex-output-text", Static).update(escape(output))

    def _suggest_next(self, passed: bool) -> None:
        """Under a pass: what to do next (tutor.ui.widgets.next_step; n does it)."""
        from tutor.ui.widgets.next_step import NextStep

        shown = list(self.screen.query(NextStep))
        if not passed:
            for step in shown:
                step.show(None)
            return
        if not shown:
            shown = [NextStep(id="ex-next")]
            self.screen.query_one("#ex-box").mount(shown[0], after="#ex-checks")
        shown[0].suggest()

    def _reveal(self) -> None:
        """Bring a new grade into view: the whole of it if it fits, else from its status line."""
        box = self.screen.query_one("#ex-box", VerticalScroll)
        box.scroll_to_widget(self.screen.query_one("#ex-checks"), animate=False, immediate=True)
        box.scroll_to_widget(self.screen.query_one("#ex-status"), animate=False, immediate=True)
