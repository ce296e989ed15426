"""An exercise: predictions first, then the task, the learner's file, grading, hints.

`e` opens the file in $VISUAL/$EDITOR (the app is suspended meanwhile), or where neither is set
(a browser: `python -m tutor serve`) in the built-in editor above the page (tutor.ui.widgets.code_editor),
which `i` opens beside an $EDITOR; its ctrl+s saves and grades, as returning from $EDITOR does. `g` grades
it with a judge forked from the app's warm judge (tutor.ui.grading_client), `h` reveals the next hint. While the screen is
showing, saving the file re-grades it (the kernel says when, tutor.grading.watch; where it cannot, the
file's mtime is polled once a second).

The page scrolls with the keys from the start (it holds the focus once the predictions are done),
and a new grade or hint is scrolled into view. Texts are tutor.ui.rich_markdown renderables: they wrap,
code and commands included, and nothing is cut. A failing grade says what is wrong; how to fix it
comes from the tiered hints, one at a time, by the rule the terminal follows (tutor.grading.hints).
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Collapsible, Static
from textual.worker import Worker, WorkerState

from tutor.grading.hints import hint_step
from tutor.grading.text import isolation_text
from tutor.grading.watch import SaveWatcher
from tutor.i18n import pick
from tutor.settings import FILE_POLL_S, env
from tutor.ui.messages import OpenLesson
from tutor.ui.rich_markdown import Prose, ProseText
from tutor.ui.screens.base import TutorScreen
from tutor.ui.widgets.key_bar import KeyBar
from tutor.ui.widgets.quiz_panel import QuizPanel

if TYPE_CHECKING:
    from pathlib import Path

    from textual.timer import Timer

    from tutor.grading.result import GradeResult
    from tutor.ui.widgets.code_editor import CodeEditor

_ICON = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⏱", "skipped": "·"}
_PAGE_LETTERS = {"edit", "edit_here", "grade", "hint", "solution", "train"}  # the lab's letter keys
_COLOUR = {"pass": "green", "fail": "red", "error": "red", "timeout": "yellow", "skipped": "dim"}


def external_editor() -> str | None:
    """$VISUAL, else $EDITOR; None when neither is set (`e` opens the built-in editor then)."""
    return env("VISUAL") or env("EDITOR")


def editor_command() -> list[str] | None:
    editor = external_editor()
    return shlex.split(editor) if editor else None


class NoExerciseScreen(TutorScreen):
    def compose(self) -> ComposeResult:
        yield Static(id="no-exercise", classes="title")
        yield KeyBar()

    def refresh_content(self) -> None:
        self.query_one("#no-exercise", Static).update(self.t("ex.none"))


class ExerciseScreen(TutorScreen):
    AUTO_FOCUS = "#ex-box"  # the arrow and page keys scroll the page at once (no Tab first)
    BINDINGS = [
        Binding("e", "edit", "Edit", id="edit"),
        Binding("i", "edit_here", "Edit here", id="edit_here"),
        Binding("g", "grade", "Grade", id="grade"),
        Binding("h", "hint", "Hint", id="hint"),
        Binding("s", "solution", "Solution", id="solution", show=False),
        Binding("t", "train", "Train", id="train"),
        Binding("escape", "back", "Lesson", id="lesson"),
    ]

    def __init__(self, exercise_id: str) -> None:
        super().__init__()
        self.exercise_id = exercise_id
        self.file: Path | None = None
        self.result: GradeResult | None = None
        self._graded_in: str | None = None  # the language of the grade on screen (F5 words it again)
        self.hints_shown = 0
        self.unlocked = False
        self._solution_shown = False  # s showed the reference: a redraw shows it in the new language
        self._watcher: SaveWatcher | None = None
        self._training: list[str] = []  # the lines of the current training run (t) that stay
        self._progress: str | None = None  # its live step line
        self._poll_timer: Timer | None = None
        self._editor: CodeEditor | None = None  # the built-in editor, once opened

    @property
    def pair(self):
        return self.tutor.exercise(self.exercise_id)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="ex-box"):
            yield Static(id="ex-title", classes="title")
            yield Static(id="ex-effort", classes="hint")  # what to expect, before the predictions too
            yield Vertical(id="ex-predict")
            yield Static(id="ex-task")
            yield Static(id="ex-file", classes="hint")
            yield Static(id="ex-status")
            yield Static(id="ex-checks")
            yield Static(id="ex-train")
            with Vertical(id="ex-hints"):
                yield Static(classes="ex-hints-title")
            yield Static(id="ex-solution")
            with Collapsible(title="", collapsed=True, id="ex-output"):
                yield Static(id="ex-output-text")
        yield KeyBar()

    def on_mount(self) -> None:
        try:
            self.query_one("#ex-output").display = False
        except NoMatches:  # the app ended while it was being made: nothing to set up
            return
        self.query_one("#ex-solution").display = False
        self.query_one("#ex-train").display = False  # until t starts a training run

    def on_unmount(self) -> None:
        self._stop_watching()

    def on_screen_resume(self) -> None:
        """Shown for the first time after it was made ahead: the learner's file and the warm judge now."""
        pair = self.pair
        if self.file is None and pair is not None and self._shown():
            self._start(pair[1])
            self._show_file()

    def _shown(self) -> bool:
        """In view, not made ahead behind home (tutor.ui.first_frame.ScreensAhead)."""
        return self.is_current and not self.made_ahead

    # --- content ---------------------------------------------------------------------------

    def refresh_content(self) -> None:
        pair = self.pair
        if pair is None:
            self.query_one("#ex-title", Static).update(self.t("home.loading"))
            return
        lesson, ex = pair
        lang = self.lang
        self.query_one("#ex-title", Static).update(f"{pick(ex.title, lang)}  ({ex.id})")
        self._show_effort(lesson, ex)
        if self.file is None and self._shown():
            self._start(ex)
        self._predictions(lesson, ex)
        task = self.query_one("#ex-task", Static)
        task.update(self._prose(pick(ex.task, lang)))
        task.display = self.unlocked
        self._show_file()
        self._show_hints()
        if self.result is not None:
            self._show_result(self.result)
            self._reword()
        self.query_one("#ex-output", Collapsible).title = self.t("grade.output")
        if self._solution_shown:
            self.action_solution(scroll=False)
        if self._editor is not None:
            self._editor.set_theme(self.app.current_theme.dark)

    def _show_file(self) -> None:
        where = self.t(
            "word.labelled",
            label=self.t("ex.file"),
            text=self.tutor_app.shown_path(self.file) if self.file else "",
        )
        self.query_one("#ex-file", Static).update(
            ProseText(f"{where}\n{self.t('ex.keys' if external_editor() else 'ex.keys_here')}")
            if self.file
            else ""
        )
        self.query_one("#ex-file").display = self.unlocked

    def _show_effort(self, lesson, ex) -> None:
        """About how long it takes and how hard it is (exercise.toml's minutes and difficulty), and how a
        run exercise is graded; hidden where its file says nothing of it."""
        from tutor.progress.exercise_status import effort_text

        parts = [effort_text(ex.minutes, ex.difficulty, ex.kind, self.lang)]
        if ex.kind == "runs":
            parts.append(self.t("ex.effort.kind.runs"))
        text = " · ".join(p for p in parts if p)
        box = self.query_one("#ex-effort", Static)
        box.update(ProseText(text))
        box.display = bool(text)

    def _start(self, ex) -> None:
        from tutor.grading.workspace import start_exercise

        try:
            self.file, _created = start_exercise(self.tutor.home, ex, self.lang)
        except OSError as err:
            self._status(f"{self.t('ex.grade_failed', err=err)}", "red")
        else:
            self._watch(self.file)
        self.tutor.start_warm_judge()  # it imports torch now, in its own process: the first grade is warm
        if self.tutor.store is not None:
            self.hints_shown = len({h.hint for h in self.tutor.store.hint_reveals(ex.id) if h.hint.isdigit()})

    def _predictions(self, lesson, ex) -> None:
        box = self.query_one("#ex-predict", Vertical)
        panel = next(iter(box.query(QuizPanel)), None)
        if self.unlocked:
            box.display = False
            return
        if panel is not None:
            panel.refresh_content(self.lang)
            return
        if self.tutor.store is None:
            return
        from tutor.quiz.session import QuizSession, predictions_unlocked

        if not ex.predict or predictions_unlocked(self.tutor.store, ex):
            self.unlocked = True
            box.display = False
            return
        session = QuizSession.for_predictions(self.tutor.store, lesson, ex, lang=self.lang)
        box.mount(Static(self.t("ex.predict_first"), classes="hint"))
        box.mount(QuizPanel(session, self.lang, on_finished=self._predictions_done))

    def _predictions_done(self) -> None:
        pair = self.pair
        if pair is None or self.tutor.store is None:
            return
        from tutor.quiz.session import predictions_unlocked

        if predictions_unlocked(self.tutor.store, pair[1]):
            self.unlocked = True
            self.refresh_content()
            box = self.query_one("#ex-box", VerticalScroll)
            box.focus()  # the answer box is gone: the keys scroll the page
            box.scroll_home(animate=False)

    def _prose(self, markdown: str) -> Prose:
        return Prose(markdown, code_theme="monokai" if self.app.current_theme.dark else "default")

    def _status(self, text: str, colour: str = "") -> None:
        self.query_one("#ex-status", Static).update(ProseText(text, style=f"bold {colour}".strip()))

    def _show_hints(self) -> Static | None:
        """The general hints revealed so far, one Static each; returns the newest one's."""
        pair = self.pair
        if pair is None:
            return None
        hints = pair[1].hints[: self.hints_shown]
        box = self.query_one("#ex-hints", Vertical)
        box.display = bool(hints)
        box.query_children(".ex-hints-title").first(Static).update(Text(self.t("ex.hints"), style="bold"))
        shown = list(box.query_children(".ex-hint").results(Static))
        for i, hint in enumerate(hints):
            text = self._prose(f"💡 **{i + 1}.** {pick(hint, self.lang)}")
            if i < len(shown):
                shown[i].update(text)
            else:
                shown.append(Static(text, classes="ex-hint"))
                box.mount(shown[-1])
        return shown[len(hints) - 1] if hints else None

    # --- actions ---------------------------------------------------------------------------

    def _locked(self) -> bool:
        if not self.unlocked:
            self.notify(self.t("ex.predict_first"))
            return True
        return False

    async def action_edit(self) -> None:
        """$VISUAL/$EDITOR with the app suspended, then a grade if the file was saved; the built-in
        editor where neither is set, where the terminal cannot be handed over, or where it shows already."""
        if self._locked() or self.file is None:
            return
        try:
            command = editor_command()
        except ValueError as err:  # e.g. an unclosed quote in $EDITOR: say so, do not crash
            self.notify(self.t("ex.editor_failed", err=err), severity="error", timeout=10)
            return
        if command is None or self._editing():
            await self.action_edit_here()
            return
        from textual.app import SuspendNotSupported

        try:
            with self.app.suspend():
                subprocess.call([*command, str(self.file)])
        except SuspendNotSupported:
            await self.action_edit_here()
            return
        except OSError as err:
            self.notify(self.t("ex.editor_failed", err=err), severity="error", timeout=10)
        self._saved()

    async def action_edit_here(self) -> None:
        """The built-in editor above the page, focused, with the file as it is now, or with what was
        typed there and not saved yet."""
        if self._locked() or self.file is None:
            return
        from tutor.errors import TutorError, in_lang
        from tutor.ui.widgets.code_editor import CodeEditor, draft_path, read_draft, read_for_editing

        editor = self._editor
        if editor is None or not editor.modified:
            try:
                text = read_for_editing(self.file, self.lang)
            except TutorError as err:
                message = self.t("ex.editor.cannot_open", err=in_lang(err, self.lang))
                self.notify(message, severity="error", timeout=10)
                return
            if editor is None:
                editor = CodeEditor(self.file, text, dark=self.app.current_theme.dark, id="ex-editor")
                self._editor = editor
                await self.mount(editor, before="#ex-box")
                if (draft := read_draft(self.file, text)) is not None:  # typed last time, not saved
                    from datetime import datetime

                    editor.show_draft(draft)
                    when = datetime.fromtimestamp(draft_path(self.file).stat().st_mtime).strftime("%H:%M")
                    self.notify(self.t("ex.editor.restored", when=when), timeout=10)
            elif text != editor.area.text:  # changed on disk since (another editor, a reset)
                editor.load(text)
        editor.display = True
        editor.area.focus()

    def _editing(self) -> bool:
        """Whether the built-in editor shows."""
        return self._editor is not None and self._editor.display

    def on_code_editor_saved(self, event) -> None:
        event.stop()
        if self._watcher is not None:
            self._watcher.saved()  # this save is graded here, not a second time by the watcher
        self.action_grade()

    def on_code_editor_closed(self, event) -> None:
        event.stop()
        if self._editor is not None:
            self._editor.display = False
        self.query_one("#ex-box", VerticalScroll).focus()

    def action_grade(self) -> None:
        if self._locked() or self.file is None:
            return
        stale = self.result is not None  # the last grade stays, dimmed, until the new one replaces it
        self._status(self.t("ex.grading_again" if stale else "ex.grading"), "yellow")
        self.query_one("#ex-checks").set_class(stale, "-stale")
        self.query_one("#ex-status").scroll_visible(animate=False)
        self._grade(self.lang)

    def key_hidden(self, action: str) -> bool:
        # where e opens the built-in editor itself, i (which still does) would only crowd the bar
        return action == "edit_here" and external_editor() is None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _PAGE_LETTERS and self._editor is not None and self._editor.has_focus_within:
            return False  # these letters are typed into the editor: not keys of the page meanwhile
        if action == "train":  # only where the file builds a model, and once it passes
            pair = self.pair
            return (
                pair is not None
                and pair[1].train is not None
                and getattr(self.result, "status", "") == "pass"
            )
        return True

    def action_train(self) -> None:
        pair = self.pair
        if pair is None or pair[1].train is None or self.file is None:
            return
        if getattr(self.result, "status", "") != "pass":
            self.notify(self.t("train.own.pass_first"))
            return
        self._training = []
        self._train_line(self.t("train.own.start", steps=pair[1].train.steps, compare=self._compare()))
        self._train()

    def _train_line(self, line: str | None = None, progress: str | None = None) -> None:
        """Add a line that stays (the start, each validation, the end), or set the live step line."""
        if line is not None:
            self._training.append(line)
        self._progress = progress
        box = self.query_one("#ex-train", Static)
        box.display = True
        box.update(ProseText("\n".join([*self._training, *([progress] if progress else [])])))
        box.scroll_visible(animate=False)

    def _on_training(self, event: dict) -> None:
        """Progress from the judge: the step line is rewritten in place, each validation stays."""
        from tutor.grading.text import own_training_line

        line = own_training_line(event, self.lang, self._compare())
        if event.get("event") == "training":
            self._train_line(progress=line)
        elif line is not None:
            self._train_line(line.strip(), progress=self._progress)

    def _compare(self) -> str:
        """The name of the model the learner's is trained beside (e.g. learned positions)."""
        pair = self.pair
        return self.t(f"term.pos.{pair[1].train.compare}") if pair and pair[1].train else ""

    @work(exclusive=True, group="train", exit_on_error=False)
    async def _train(self):
        from tutor.ui.grading_client import train_in_thread

        pair = self.pair
        assert pair is not None and self.file is not None
        warm = self.tutor.warm_judge()
        return await train_in_thread(pair[1], self.file, self.lang, warm, self._on_training)

    def _trained(self, run) -> None:
        from tutor.grading.text import training_end

        self._train_line(training_end(run, self.lang, self._compare()))

    def action_hint(self) -> None:
        pair = self.pair
        if pair is None or self._locked():
            return
        ex = pair[1]
        if self.hints_shown >= len(ex.hints):
            self.notify(self.t("ex.no_more_hints"))
            return
        from tutor.grading.hints import reveal_hint

        number, lang = self.hints_shown + 1, self.lang  # recorded by the writer thread: shown at once
        self.tutor.write(lambda store: reveal_hint(store, ex, number, lang), on_error=self.not_saved)
        self.hints_shown = number
        newest = self._show_hints()
        if newest is not None:
            newest.scroll_visible(animate=False)  # after the next refresh, when it is laid out
        if self.result is not None:  # the grade's own line about hints follows the count
            self._show_result(self.result)

    def action_solution(self, scroll: bool = True) -> None:
        """The reference solution in the learner's language, once the learner has passed
        (grading.workspace.solution_text enforces it); shown again, where it is, when the language or
        the theme changes."""
        pair = self.pair
        if pair is None:
            return
        from tutor.errors import TutorError, in_lang
        from tutor.grading.workspace import solution_text

        try:
            code = solution_text(self.tutor.store, pair[1], self.lang)
        except (TutorError, OSError) as err:
            self.notify(in_lang(err, self.lang))
            return
        text = f"```python\n{code}\n```" if pair[1].kind == "code" else code  # else Markdown already
        solution = self.query_one("#ex-solution", Static)
        solution.update(self._prose(text))  # code wrapped, never cut at the edge
        solution.display = self._solution_shown = True
        if scroll:
            solution.scroll_visible(top=True, animate=False)

    def action_back(self) -> None:
        if self._editing():  # the editor first (it asks when its text is not saved)
            assert self._editor is not None  # it shows
            self._editor.action_close()
            return
        pair = self.pair
        if pair is not None:
            self.post_message(OpenLesson(pair[0].id, pair[1].section))

    # --- grading ---------------------------------------------------------------------------

    def _watch(self, file) -> None:
        """Re-grade on save: the kernel says when the file was saved (inotify, read by the event
        loop), or, where it cannot, its mtime is polled."""
        self._stop_watching()
        self._watcher = SaveWatcher(file)
        fd = self._watcher.fileno()
        if fd is not None:
            asyncio.get_running_loop().add_reader(fd, self._saved)
        else:
            self._poll_timer = self.set_interval(FILE_POLL_S, self._saved)

    def _stop_watching(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is None:
            return
        if (fd := watcher.fileno()) is not None:
            asyncio.get_running_loop().remove_reader(fd)
        else:
            assert self._poll_timer is not None  # polling, since there is no fd to watch
            self._poll_timer.stop()
        watcher.close()

    def _saved(self) -> None:
        """The file may have been saved: grade it if it was, while this screen is showing."""
        if self._watcher is not None and self._watcher.saved() and self.unlocked and self.is_current:
            self.action_grade()

    @work(exclusive=True, group="grade", exit_on_error=False)
    async def _grade(self, lang: str):
        from tutor.ui.grading_client import grade_in_thread

        pair = self.pair
        assert pair is not None and self.file is not None
        self.workers.cancel_group(self, "reword")  # a new grade replaces the one being worded again
        return lang, await grade_in_thread(self.tutor, pair[1], self.file, lang, on_recorded=self._recorded)

    def _recorded(self, saved: bool) -> None:
        """The grade on screen has been recorded by the writer thread, or not: the store stayed busy.
        A pass's next step is worked out now, from the progress that holds it."""
        if not saved:  # the verdict stands, unrecorded
            self.notify(self.t("grade.not_saved"), severity="warning", timeout=8)
        if self.result is not None and self.result.status == "pass" and self.is_mounted:
            self._suggest_next(True)

    def _reword(self) -> None:
        """The grade on screen came in another language: the checks' own messages are worded as they
        run, so the same file is graded again in this one (recorded once already: not again), and
        shown if the file is still the one graded (the same seed). The rest is redrawn at once."""
        if self._graded_in in (None, self.lang) or self.file is None:
            return
        self._reword_in(self.lang)

    @work(exclusive=True, group="reword", exit_on_error=False)
    async def _reword_in(self, lang: str) -> None:
        from tutor.ui.grading_client import grade_in_thread

        pair, shown = self.pair, self.result
        if pair is None or shown is None:
            return
        assert self.file is not None  # graded, so started
        again = await grade_in_thread(self.tutor, pair[1], self.file, lang, record=False)
        if (
            self.result is shown
            and again.seed == shown.seed
            and again.status == shown.status
            and lang == self.lang
        ):
            self.result, self._graded_in = again, lang
            self._show_result(again)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "train":
            if event.state == WorkerState.SUCCESS:
                self._trained(event.worker.result)
            elif event.state == WorkerState.ERROR:
                self._train_line(self.t("train.own.stopped", reason=event.worker.error))
            return
        if event.worker.group != "grade":
            return
        if event.state == WorkerState.CANCELLED and any(
            w.group == "grade" and w.node is self and not w.is_finished for w in self.workers
        ):
            return  # a newer grade replaced it and runs
        if event.worker.is_finished:
            self.query_one("#ex-checks").remove_class("-stale")
        if event.state == WorkerState.SUCCESS:
            assert event.worker.result is not None  # a grade worker returns (language, result)
            self._graded_in, self.result = event.worker.result
            pair = self.pair
            if pair is not None and pair[1].train is not None:
                self.refresh_bindings()  # t (train) shows once the file passes
            self._show_result(self.result)
            if self.result.status != "pass":  # a pass's next step comes once it is recorded (_recorded)
                self._suggest_next(False)
            self.refresh(layout=True)  # laid out before the callback below, not after it
            self.call_after_refresh(self._reveal_result)
        elif event.state == WorkerState.ERROR:
            message = self.t("ex.grade_failed", err=event.worker.error)
            self._status(message, "red")
            self.notify(message, severity="error", timeout=8)
        elif event.state == WorkerState.CANCELLED:
            self._status("")

    def _show_result(self, result: GradeResult) -> None:
        pair = self.pair
        titles = {c.id: pick(c.title, self.lang) for c in pair[1].checks} if pair else {}
        score = f"{result.score:g}"
        top = f"{result.max_score:g}"
        if result.status == "pass":
            self._status(self.t("ex.pass", score=score, max=top), "green")
        else:
            self._status(
                self.t("ex.fail", score=score, max=top, status=self.t(f"grade.verdict.{result.status}")),
                "red",
            )
        table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
        table.add_column(width=1)
        table.add_column(ratio=1)
        first = result.first_failure
        step = hint_step(result, pair[1], self.hints_shown) if pair else None
        for check in result.checks:
            colour = _COLOUR.get(check.status, "")
            title = titles.get(check.name, check.name)
            head = ProseText(f"{title}", style=f"bold {colour}" if check is first else colour)
            # what the check measured, passed or not (the values are what the exercise teaches, as the
            # CLI shows them); how to fix a failure only as the hint rule says
            lines = [self.t("grade.not_run") if check.status == "skipped" else check.message]
            if check.status != "pass" and step is not None and step.own is check:
                lines.append(f"💡 {check.hint}")
            table.add_row(Text(_ICON.get(check.status, "?"), style=colour), head)
            if any(lines):
                table.add_row("", ProseText("\n".join(line for line in lines if line)))
        if step is not None and step.next is not None:
            table.add_row(
                "", ProseText(self.t("ex.more_hints", n=step.next, total=step.total), style="yellow")
            )
        if (isolation := isolation_text(result.isolation, self.lang)) is not None:
            table.add_row("", ProseText(isolation, style="dim"))
        self.query_one("#ex-checks", Static).update(table)
        output = result.output.strip()
        self.query_one("#ex-output").display = bool(output)
        self.query_one("#ex-output-text", Static).update(escape(output))

    def _suggest_next(self, passed: bool) -> None:
        """Under a pass: what to do next (tutor.ui.widgets.next_step; n does it)."""
        from tutor.ui.widgets.next_step import NextStep

        shown = list(self.query(NextStep))
        if not passed:
            for step in shown:
                step.show(None)
            return
        if not shown:
            shown = [NextStep(id="ex-next")]
            self.query_one("#ex-box").mount(shown[0], after="#ex-checks")
        shown[0].suggest()

    def _reveal_result(self) -> None:
        """Bring a new grade into view: the whole of it if it fits, else from its status line."""
        box = self.query_one("#ex-box", VerticalScroll)
        box.scroll_to_widget(self.query_one("#ex-checks"), animate=False, immediate=True)
        box.scroll_to_widget(self.query_one("#ex-status"), animate=False, immediate=True)
