"""The exercise list (F8, or "Exercise list" in ctrl+p): every exercise of the course with where the learner
stands (new, started, passed), the best score, about how long it takes and how hard it is, in course order
(rustlings' `list`); Enter opens the one highlighted in the lab, Esc goes back.

The rows come from tutor.progress.exercise_status, read in a worker thread (the store may be busy with a
write); `python -m tutor exercise list` prints the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from tutor.i18n import LANGS, pick
from tutor.texts import say
from tutor.ui.messages import OpenExercise
from tutor.ui.prose_text import ProseText
from tutor.ui.screens.base import TutorScreen
from tutor.ui.screens.home import column_widths, row_text
from tutor.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from tutor.progress.exercise_status import ExerciseStatus
    from tutor.progress.store import Store

MARK = {"passed": "✓", "started": "…", "new": "·"}
STYLE = {"passed": "green", "started": "yellow", "new": ""}


class ExercisesScreen(TutorScreen):
    BINDINGS = [
        Binding("enter", "open", "Open", id="open", show=False),
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[ExerciseStatus] | None = None  # tutor.progress.exercise_status rows, once read

    def compose(self) -> ComposeResult:
        yield Static(id="exlist-title", classes="title")
        yield Static(id="exlist-head")
        yield OptionList(id="exlist")
        yield Static(id="exlist-about", classes="summary")
        yield Static(id="exlist-hint", classes="hint")
        yield KeyBar()

    def refresh_content(self) -> None:
        self.query_one("#exlist-title", Static).update(self.t("ex.list.title"))
        self.query_one("#exlist-hint", Static).update(self.t("ex.list.hint"))
        if self.rows is not None:
            self._draw()
        if (store := self.tutor.store) is not None:
            self._read(store)
        self.query_one("#exlist", OptionList).focus()

    def on_screen_resume(self) -> None:  # after TutorScreen's: a grade may have come in meanwhile
        if (store := self.tutor.store) is not None:
            self._read(store)

    @work(thread=True, exclusive=True, group="exercise-list", exit_on_error=False)
    def _read(self, store: Store) -> list[ExerciseStatus]:
        from tutor.grading.workspace import workspace_file
        from tutor.progress.exercise_status import exercise_statuses

        home = self.tutor.home
        return exercise_statuses(store, self.tutor.lessons, lambda ex: workspace_file(home, ex).exists())

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "exercise-list" or event.worker.node is not self:
            return
        if event.state == WorkerState.SUCCESS and event.worker.result != self.rows:
            self.rows = event.worker.result
            self._draw()
        elif event.state == WorkerState.ERROR:
            self.notify(self.t("home.progress_failed", err=event.worker.error), severity="error")

    def _cells(self, row, lang: str) -> list[str]:
        from tutor.progress.exercise_status import difficulty_marks, score_text

        minutes = say("ex.effort.minutes", lang, n=row.minutes) if row.minutes else ""
        return [
            MARK[row.state],
            pick(row.title, lang),
            say(f"ex.cli.state.{row.state}", lang),
            score_text(row, lang),
            minutes,
            difficulty_marks(row.difficulty),
        ]

    def _draw(self) -> None:
        lang, rows = self.lang, self.rows or []
        head = ["", *(self.t(f"ex.list.col.{c}") for c in ("title", "state", "best", "time", "level"))]
        cells = [self._cells(r, lang) for r in rows]
        # measured in every language, so the columns stay put when F5 switches it (as on home)
        every = [self._cells(r, x) for r in rows for x in LANGS]
        heads = [
            ["", *(say(f"ex.list.col.{c}", x) for c in ("title", "state", "best", "time", "level"))]
            for x in LANGS
        ]
        width = self.size.width or self.app.size.width
        widths = column_widths(head, [*heads, *every], width)
        if widths[1] < max((cell_len(c[1]) + 1 for c in cells), default=0):
            widths = column_widths(head, cells, width)
        self.query_one("#exlist-head", Static).update(row_text(head, widths, "bold"))
        table = self.query_one("#exlist", OptionList)
        highlighted = table.highlighted
        table.clear_options()
        table.add_options(
            Option(row_text(c, widths, STYLE[r.state]), id=r.id) for r, c in zip(rows, cells, strict=True)
        )
        if rows:
            here = self.tutor_app.current_exercise
            ids = [r.id for r in rows]
            table.highlighted = (
                highlighted if highlighted is not None else (ids.index(here) if here in ids else 0)
            )
        self._about()

    def _about(self) -> None:
        """The highlighted exercise: its lesson, what to expect, how it is graded."""
        from tutor.progress.exercise_status import effort_text

        row = self._selected()
        box = self.query_one("#exlist-about", Static)
        if row is None:
            box.update("")
            return
        lesson = self.tutor.lesson(row.lesson)
        effort = effort_text(row.minutes, row.difficulty, row.kind, self.lang)
        text = (
            say(
                "ex.list.about",
                self.lang,
                lesson=pick(lesson.title, self.lang) if lesson else row.lesson,
                effort=effort,
            )
            if effort
            else (pick(lesson.title, self.lang) if lesson else row.lesson)
        )
        if row.kind == "runs":
            text += " · " + self.t("ex.effort.kind.runs")
        box.update(ProseText(text))

    def _selected(self) -> ExerciseStatus | None:
        table = self.query_one("#exlist", OptionList)
        if table.highlighted is None or not self.rows:
            return None
        return self.rows[table.highlighted]

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self._about()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        if (row := self._selected()) is not None:
            self.app.post_message(OpenExercise(row.id))  # the app opens the lab (this screen goes first)
            self.dismiss()

    def action_back(self) -> None:
        self.dismiss()

    def on_resize(self) -> None:
        if self.rows is not None:
            self._draw()
