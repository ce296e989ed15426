"""Home: the lessons in order with progress, what is due, the next step, and "continue".

The rows come from the course's cards (tutor.content.index): saved from the last start, they list
the lessons in the very first frame, before the course and the progress store are open. The
progress columns, the review line and the next step are in that frame too: read straight from the
progress file (tutor.progress.glance, a few milliseconds, no pydantic). Later reads (each time the
learner comes back here, or the course finished loading) run in a worker thread, so a screen switch
never waits for SQLite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from tutor.i18n import pick
from tutor.texts import LANGS, say
from tutor.ui.messages import ContinueLast, OpenExercise, OpenLesson, OpenQuiz
from tutor.ui.prose_text import ProseText
from tutor.ui.screens.base import TutorScreen
from tutor.ui.widgets.key_bar import KeyBar
from tutor.ui.widgets.next_step import NextStep

if TYPE_CHECKING:
    from tutor.content.index import Card
    from tutor.progress.glance import Standing

COLUMNS = ("read", "quiz", "ex", "due")  # after "#" and the lesson title
GAP = 2  # blank cells after each column
SIDES = 3  # the list's margin and padding, left and right (tutor.tcss)
MAX_ERRORS = 6  # problems listed on home; `python -m tutor check` lists them all


def column_widths(head: list[str], rows: list[list[str]], width: int) -> list[int]:
    """Cell widths: each column as wide as its header or widest cell, then a gap of two cells (one
    where the titles would not fit otherwise; none after the last); the title takes what is left
    of `width` (a title that still does not fit is cut with …). Widths count terminal cells."""
    widest = [max(cell_len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for gap in (GAP, 1):
        widths = [w + gap for w in widest[:-1]] + [widest[-1]]
        room = width - SIDES - (sum(widths) - widths[1])
        if width <= 0 or widths[1] <= room:
            break
    if width > 0:
        widths[1] = max(min(widths[1], room), cell_len(head[1]) + 1)
    return widths


def row_text(cells: list[str], widths: list[int], style: str = "") -> Text:
    """One aligned row; widths count terminal cells, so Chinese titles line up too."""
    out = []
    for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
        room = w if i == len(widths) - 1 else w - 1  # at least one blank cell between columns
        if cell_len(cell) > room:
            cell = set_cell_size(cell, room - 1) + "…"
        out.append(set_cell_size(cell, w))
    return Text("".join(out), style=style)


class HomeScreen(TutorScreen):
    _shown: tuple | None = None  # (language, width, rows) in the table now
    BINDINGS = [
        Binding("c", "continue", "Continue", id="continue"),
        Binding("enter", "open", "Open", id="open", show=False),
        Binding("q", "quiz", "Quiz", id="quiz"),
        Binding("x", "exercise", "Exercise", id="lab"),
        Binding("r", "review", "Review due", id="review"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._standing: Standing | None = None  # the progress last read (tutor.progress.glance)

    def compose(self) -> ComposeResult:
        # flat, and with the real text: the first frame is the finished home screen
        yield Static(self.t("app.title"), id="home-title", classes="title")
        # an OptionList of aligned rows: a DataTable made the first screen ~20 ms slower
        yield Static(id="lessons-head")
        yield OptionList(id="lessons")
        yield Static(self.t("home.loading"), id="lesson-summary", classes="summary")
        yield Static(id="home-due", classes="due")
        yield NextStep(id="home-next")
        yield Static(id="home-errors", classes="error-panel")
        yield Static(self.t("home.hint"), id="home-hint", classes="hint")
        yield KeyBar()

    @property
    def cards(self) -> list[Card]:
        index = self.tutor.index
        return index.cards if index is not None else []

    def card(self, lesson_id: str | None) -> Card | None:
        return next((c for c in self.cards if c.id == lesson_id), None)

    def refresh_content(self) -> None:
        self.query_one("#home-title", Static).update(self.t("app.title"))
        self.query_one("#home-hint", Static).update(self.t("home.hint"))
        if self.tutor.index is None and self.tutor.error is None:
            self.query_one("#lesson-summary", Static).update(self.t("home.loading"))
            self.query_one("#home-errors", Static).display = False
            return
        if self._standing is None:  # the first frame: read now, a few ms (see the module docstring)
            self._standing = self._read_standing()
        self._draw_rows()
        self._show_summary()
        self._show_standing()
        self._show_errors()
        self.query_one("#lessons", OptionList).focus()
        self._read_progress()

    def _cells(self) -> dict[str, list[str]]:
        """Each lesson's progress cells: read, quiz, exercises, due."""
        if self._standing is None:
            return {}
        return {
            r.id: [
                f"{100 * r.sections_read // max(r.sections_total, 1)}%",
                f"{r.correct}/{r.questions}",
                f"{r.exercises_passed}/{r.exercises_total}",
                str(r.due) if r.due else "·",
            ]
            for r in self._standing.rows
        }

    def _draw_rows(self) -> None:
        cells = self._cells()
        rows = [
            (card.id, [str(i), pick(card.title, self.lang), *cells.get(card.id, ["", "", "", ""])])
            for i, card in enumerate(self.cards, 1)
        ]
        width = self.size.width or self.app.size.width
        if (self.lang, width, rows) == self._shown:  # rebuilding is the costly part of coming back
            return
        self._shown = (self.lang, width, rows)
        table = self.query_one("#lessons", OptionList)
        head = ["#", self.t("home.col.lesson"), *(self.t(f"home.col.{k}") for k in COLUMNS)]
        # measured over every language, so that the columns stay put when F5 switches it; unless
        # that cuts a title this language's own widths would keep whole (a narrow terminal)
        heads = [["#", say("home.col.lesson", x), *(say(f"home.col.{k}", x) for k in COLUMNS)] for x in LANGS]
        every = [
            [c[0], pick(card.title, x), *c[2:]]
            for x in LANGS
            for card, (_, c) in zip(self.cards, rows, strict=True)
        ]
        widths = column_widths(head, [*heads, *every], width)
        widest = max((cell_len(cells[1]) + 1 for _, cells in rows), default=0)
        if widths[1] < widest:
            widths = column_widths(head, [cells for _, cells in rows], width)
        self.query_one("#lessons-head", Static).update(row_text(head, widths, "bold"))
        highlighted = table.highlighted
        table.clear_options()
        table.add_options(Option(row_text(cells, widths), id=lesson_id) for lesson_id, cells in rows)
        if rows:
            table.highlighted = min(max(highlighted or 0, 0), len(rows) - 1)
            self._highlight_current()

    def _highlight_current(self) -> None:
        """The lesson the learner was in last is the one Enter opens."""
        table = self.query_one("#lessons", OptionList)
        ids = [c.id for c in self.cards]
        current = self.tutor.where.get("lesson")
        if current in ids and table.option_count == len(ids):
            table.highlighted = ids.index(current)

    def on_resize(self) -> None:
        if self.tutor.index is not None:
            self._draw_rows()

    def _read_standing(self) -> Standing | None:
        """The progress, the review counts and the next step, from the progress file and the cards
        (None: no cards yet, or a file this tutor cannot read: the store says why once it opens)."""
        from tutor.progress.db import local_now
        from tutor.progress.glance import read_glance, standing

        if self.tutor.index is None:
            return None
        glance = read_glance(self.tutor.home)
        if glance is None:
            return None
        return standing(glance, self.cards, local_now(), self.tutor_app.training_place())

    def _read_progress(self) -> None:
        """Read the progress again, in a worker thread (the store may be busy with a write)."""
        if self.tutor.index is not None:
            self._progress_worker()

    @work(thread=True, exclusive=True, group="progress", exit_on_error=False)
    def _progress_worker(self) -> Standing | None:
        return self._read_standing()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "progress" or event.worker.node is not self:
            return
        if event.state == WorkerState.SUCCESS and event.worker.result is not None:
            if event.worker.result != self._standing:
                self._standing = event.worker.result
                self._draw_rows()
                self._show_standing()
        elif event.state == WorkerState.ERROR:  # progress is extra; the lessons still open
            self.notify(self.t("home.progress_failed", err=event.worker.error), severity="error")

    def _show_standing(self) -> None:
        """The review line and the next step."""
        standing, due = self._standing, self.query_one("#home-due", Static)
        if standing is None:
            due.update("")
            self.query_one(NextStep).show(None)
            return
        line = self.t("home.due", n=standing.due) if standing.due else self.t("home.nothing_due")
        if standing.new:
            line = f"{line} · {say('quiz.new_waiting', self.lang, n=standing.new)}"
        due.update(line)
        self.query_one(NextStep).show(standing.step)

    def _show_errors(self) -> None:
        panel = self.query_one("#home-errors", Static)
        tutor = self.tutor
        lines: list[str] = []
        if tutor.error:
            lines.append(escape(tutor.error.in_lang(self.lang)))
        elif tutor.index is not None and not tutor.index.cards:
            lines.append(escape(self.t("home.no_lessons", dir=tutor.lessons_dir)))
        if tutor.index is not None and tutor.index.skipped:
            problems = tutor.index.problems
            lines.append(self.t("home.load_errors"))
            shown = [problem.get(self.lang, problem["en"]) for problem in problems[:MAX_ERRORS]]
            lines.extend(f"  • {escape(problem)}" for problem in shown)
            if len(problems) > MAX_ERRORS:
                lines.append("  " + escape(self.t("home.more_problems", n=len(problems) - MAX_ERRORS)))
        panel.update("\n".join(lines))
        panel.display = bool(lines)

    def _selected(self) -> str | None:
        table = self.query_one("#lessons", OptionList)
        if table.highlighted is None or table.option_count == 0:
            return None
        return table.get_option_at_index(table.highlighted).id

    def _show_summary(self) -> None:
        card = self.card(self._selected())
        if card is not None or self.tutor.index is not None:
            text = ProseText(pick(card.summary, self.lang) if card else "")  # Chinese breaks as prose does
            self.query_one("#lesson-summary", Static).update(text)

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self._show_summary()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.post_message(OpenLesson(event.option.id))

    def action_open(self) -> None:
        if lesson_id := self._selected():
            self.post_message(OpenLesson(lesson_id))

    def action_continue(self) -> None:
        self.post_message(ContinueLast())

    def action_quiz(self) -> None:
        if lesson_id := self._selected():
            self.post_message(OpenQuiz(lesson_id))

    def action_review(self) -> None:
        self.post_message(OpenQuiz(None))

    def action_exercise(self) -> None:
        card = self.card(self._selected())
        if card is None:
            return
        if not card.exercises:
            self.notify(self.t("lesson.no_exercise"))
            return
        self.post_message(OpenExercise(card.exercises[0].id))

    def on_screen_resume(self) -> None:  # after TutorScreen's (Textual calls both)
        if self.tutor.index is not None:
            self._highlight_current()
            self._read_progress()  # progress may have changed while the learner was elsewhere
