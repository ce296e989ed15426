"""An exercise: predictions first, then the task, the learner's file, grading, hints.

The screen keeps the page, the learner's file, the editors and the keys; what it shows is drawn by its
parts, one module each in tutor.ui.screens.lab: the predictions, the grade, the training of the
learner's model and the hints.

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

import shlex
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Collapsible, Static
from textual.worker import Worker

from tutor.i18n import pick
from tutor.proc.spawn import run_in_terminal
from tutor.settings import env
from tutor.ui.messages import OpenLesson
from tutor.ui.rich_markdown import Prose, ProseText
from tutor.ui.screens.base import TutorScreen
from tutor.ui.screens.lab import grading, training
from tutor.ui.screens.lab.grading import Grading
from tutor.ui.screens.lab.hints import Hints
from tutor.ui.screens.lab.predictions import Predictions
from tutor.ui.screens.lab.training import LabTraining
from tutor.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from pathlib import Path

    from tutor.content.schema import Exercise, Lesson
    from tutor.grading.result import GradeResult
    from tutor.ui.widgets.code_editor import CodeEditor

_PAGE_LETTERS = {"edit", "edit_here", "grade", "hint", "solution", "train"}  # the lab's letter keys


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
        self.predictions = Predictions(self)
        self.grading = Grading(self)
        self.training = LabTraining(self)
        self.hints = Hints(self)
        self._solution_shown = False  # s showed the reference: a redraw shows it in the new language
        self._editor: CodeEditor | None = None  # the built-in editor, once opened

    @property
    def pair(self) -> tuple[Lesson, Exercise] | None:
        return self.tutor.exercise(self.exercise_id)

    @property
    def unlocked(self) -> bool:
        """The predictions are answered: the task, the file and its keys are the learner's."""
        return self.predictions.unlocked

    @property
    def result(self) -> GradeResult | None:
        """The grade on screen."""
        return self.grading.result

    @property
    def hints_shown(self) -> int:
        return self.hints.shown

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
        self.grading.stop_watching()

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
        self._show_effort(ex)
        if self.file is None and self._shown():
            self._start(ex)
        self.predictions.draw(lesson, ex)
        task = self.query_one("#ex-task", Static)
        task.update(self.prose(pick(ex.task, lang)))
        task.display = self.unlocked
        self._show_file()
        self.hints.draw()
        if self.grading.result is not None:
            self.grading.show(self.grading.result)
            self.grading.reword()
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

    def _show_effort(self, ex: Exercise) -> None:
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

    def _start(self, ex: Exercise) -> None:
        from tutor.grading.workspace import start_exercise

        try:
            self.file, _created = start_exercise(self.tutor.home, ex, self.lang)
        except OSError as err:
            self.grading.status(f"{self.t('ex.grade_failed', err=err)}", "red")
        else:
            self.grading.watch(self.file)
        self.tutor.start_warm_judge()  # it imports torch now, in its own process: the first grade is warm
        self.hints.count(ex)

    def prose(self, markdown: str) -> Prose:
        """Markdown as the page shows it, its code coloured for the theme."""
        return Prose(markdown, code_theme="monokai" if self.app.current_theme.dark else "default")

    # --- actions ---------------------------------------------------------------------------

    async def action_edit(self) -> None:
        """$VISUAL/$EDITOR with the app suspended, then a grade if the file was saved; the built-in
        editor where neither is set, where the terminal cannot be handed over, or where it shows already."""
        if self.predictions.locked() or self.file is None:
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
                run_in_terminal([*command, str(self.file)])
        except SuspendNotSupported:
            await self.action_edit_here()
            return
        except OSError as err:
            self.notify(self.t("ex.editor_failed", err=err), severity="error", timeout=10)
        self.grading.saved()

    async def action_edit_here(self) -> None:
        """The built-in editor above the page, focused, with the file as it is now, or with what was
        typed there and not saved yet."""
        if self.predictions.locked() or self.file is None:
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

    def on_code_editor_saved(self, event: CodeEditor.Saved) -> None:
        event.stop()
        self.grading.saved_here()

    def on_code_editor_closed(self, event: CodeEditor.Closed) -> None:
        event.stop()
        if self._editor is not None:
            self._editor.display = False
        self.query_one("#ex-box", VerticalScroll).focus()

    def action_grade(self) -> None:
        if self.predictions.locked() or self.file is None:
            return
        self.grading.grade()

    def key_hidden(self, action: str) -> bool:
        # where e opens the built-in editor itself, i (which still does) would only crowd the bar
        return action == "edit_here" and external_editor() is None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _PAGE_LETTERS and self._editor is not None and self._editor.has_focus_within:
            return False  # these letters are typed into the editor: not keys of the page meanwhile
        if action == "train":
            return self.training.possible()
        return True

    def action_train(self) -> None:
        self.training.start()

    def action_hint(self) -> None:
        if self.pair is None or self.predictions.locked():
            return
        if self.hints.reveal() and self.grading.result is not None:
            self.grading.show(self.grading.result)  # the grade's own line about hints follows the count

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
        solution.update(self.prose(text))  # code wrapped, never cut at the edge
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

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == training.GROUP:
            self.training.on_worker(event.worker, event.state)
        elif event.worker.group == grading.GROUP:
            self.grading.on_worker(event.worker, event.state)
