"""Home: the lessons in order with progress, what is due, and "continue where I left off"."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.markup import escape
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.texts import say
from tutor.ui.messages import ContinueLast, OpenExercise, OpenLesson, OpenQuiz
from tutor.ui.screens.base import TutorScreen
from tutor.ui.widgets.key_bar import KeyBar

WIDTHS = (3, 0, 6, 7, 10, 7)  # columns: #, lesson (fills), read, quiz, exercises, due


def row_text(cells: list[str], title_width: int, style: str = "") -> Text:
    """One aligned row; widths count terminal cells, so Chinese titles line up too."""
    widths = [title_width if w == 0 else w for w in WIDTHS]
    return Text("".join(set_cell_size(c, w) for c, w in zip(cells, widths, strict=True)), style=style)


class HomeScreen(TutorScreen):
    _shown: tuple | None = None  # (language, rows) in the table now
    BINDINGS = [
        Binding("c", "continue", "Continue", id="continue"),
        Binding("enter", "open", "Open", id="open", show=False),
        Binding("q", "quiz", "Quiz", id="quiz"),
        Binding("x", "exercise", "Exercise", id="lab"),
        Binding("r", "review", "Review due", id="review"),
    ]

    def compose(self) -> ComposeResult:
        # flat, and with the real text: the first frame is the finished home screen
        yield Static(self.t("app.title"), id="home-title", classes="title")
        # an OptionList of aligned rows: a DataTable made the first screen ~20 ms slower
        yield Static(id="lessons-head")
        yield OptionList(id="lessons")
        yield Static(self.t("home.loading"), id="lesson-summary", classes="summary")
        yield Static(id="home-due", classes="due")
        yield Static(id="home-errors", classes="error-panel")
        yield Static(self.t("home.hint"), id="home-hint", classes="hint")
        yield KeyBar()

    def refresh_content(self) -> None:
        self.query_one("#home-title", Static).update(self.t("app.title"))
        self.query_one("#home-hint", Static).update(self.t("home.hint"))
        if self.tutor.course is None and self.tutor.error is None:
            # still loading: draw without importing the content models (pydantic) on this thread
            self.query_one("#lesson-summary", Static).update(self.t("home.loading"))
            self.query_one("#home-errors", Static).display = False
            return
        from tutor.content.schema import pick

        summary = self._summary()
        rows = []
        for i, lesson in enumerate(self.tutor.lessons, 1):
            p = summary.get(lesson.id)
            cells = ["", "", "", ""]
            if p is not None:
                pct = 100 * p.sections_read // max(p.sections_total, 1)
                cells = [
                    f"{pct}%",
                    f"{p.quiz.correct}/{p.quiz.questions}",
                    f"{p.exercises.passed}/{p.exercises.total}",
                    str(p.quiz.due) if p.quiz.due else "·",
                ]
            rows.append((lesson.id, [str(i), pick(lesson.title, self.lang), *cells]))
        if (self.lang, rows) != self._shown:  # rebuilding the table is the costly part of coming back
            self._shown = (self.lang, rows)
            self._fill_table(rows)
        self._show_summary()
        self.query_one("#home-due", Static).update(
            self._review_line() if summary else self.t("home.nothing_due")
        )
        self._show_errors()
        self.query_one("#lessons", OptionList).focus()

    def _fill_table(self, rows: list[tuple[str, list[str]]]) -> None:
        table = self.query_one("#lessons", OptionList)
        head = ["#", self.t("home.col.lesson")] + [
            self.t(f"home.col.{k}") for k in ("read", "quiz", "ex", "due")
        ]
        title_width = max([cell_len(head[1])] + [cell_len(cells[1]) for _, cells in rows]) + 2
        self.query_one("#lessons-head", Static).update(row_text(head, title_width, "bold"))
        highlighted = table.highlighted
        table.clear_options()
        table.add_options(Option(row_text(cells, title_width), id=lesson_id) for lesson_id, cells in rows)
        if rows:
            table.highlighted = min(max(highlighted or 0, 0), len(rows) - 1)

    def _summary(self) -> dict:
        if self.tutor.store is None or not self.tutor.lessons:
            return {}
        from tutor.progress.summary import summarise

        try:
            return {p.id: p for p in summarise(self.tutor.store, self.tutor.lessons, self.lang).lessons}
        except Exception as err:  # progress is extra; the lessons still open
            self.notify(f"progress could not be read: {err}", severity="error")
            return {}

    def _review_line(self) -> str:
        """What `r` would ask (tutor.quiz.status.review_plan): the due count, and new questions apart."""
        from tutor.quiz.status import review_plan

        plan = review_plan(self.tutor.store, self.tutor.lessons, self.tutor.store.now())
        line = self.t("home.due", n=len(plan.due)) if plan.due else self.t("home.nothing_due")
        return f"{line} · {say('quiz.new_waiting', self.lang, n=len(plan.new))}" if plan.new else line

    def _show_errors(self) -> None:
        panel = self.query_one("#home-errors", Static)
        tutor = self.tutor
        lines: list[str] = []
        if tutor.error:
            lines.append(escape(tutor.error))
        elif tutor.course is not None and not tutor.lessons:
            lines.append(escape(self.t("home.no_lessons", dir=tutor.lessons_dir)))
        if tutor.course is not None and tutor.course.skipped:
            lines.append(self.t("home.load_errors"))
            for problem in tutor.course.errors[:6]:
                lines.append(f"  • {escape(str(problem))}")
            if len(tutor.course.errors) > 6:
                lines.append(f"  … {len(tutor.course.errors) - 6} more: python -m tutor check")
        panel.update("\n".join(lines))
        panel.display = bool(lines)

    def _selected(self) -> str | None:
        table = self.query_one("#lessons", OptionList)
        if table.highlighted is None or table.option_count == 0:
            return None
        return table.get_option_at_index(table.highlighted).id

    def _show_summary(self) -> None:
        if self.tutor.course is None:
            return
        from tutor.content.schema import pick

        lesson = self.tutor.lesson(self._selected() or "")
        text = Text(pick(lesson.summary, self.lang) if lesson else "")
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
        lesson = self.tutor.lesson(self._selected() or "")
        if lesson is None:
            return
        if not lesson.exercises:
            self.notify(self.t("lesson.no_exercise"))
            return
        self.post_message(OpenExercise(lesson.exercises[0].id))

    def on_screen_resume(self) -> None:
        if self.tutor.course is not None:
            self.refresh_content()  # progress changed while the learner was elsewhere
