"""A lesson: Markdown prose with a table of contents and the experiments inline.

The prose is Rich's Markdown in a Static, one per chunk between experiments, its lines broken by
tutor.ui.prose (Chinese between characters, at most 100 columns): Textual's Markdown widget makes a
widget per paragraph, and a few hundred widgets made every return to the lesson (screen resume
restyles them all) take a quarter of a second.

Each section is a container of [prose, panel, prose, panel, …, prose] so that switching language
only updates the prose widgets and never drops an experiment that is running. A section counts as
read once its end has been on screen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.content.markdown import split_body
from tutor.content.schema import Lesson, pick
from tutor.ui.messages import OpenExercise, OpenQuiz
from tutor.ui.prose import Prose
from tutor.ui.screens.base import TutorScreen
from tutor.ui.widgets.experiment_panel import ExperimentPanel
from tutor.ui.widgets.key_bar import KeyBar


def prose_between_experiments(body: str, count: int) -> list[str]:
    """The section's text cut at its experiments: `count + 1` chunks (some may be empty)."""
    chunks: list[list[str]] = [[]]
    for part in split_body(body):
        if isinstance(part, str):
            chunks[-1].append(part)
        else:
            chunks.append([])
    while len(chunks) < count + 1:
        chunks.append([])
    head, tail = chunks[:count], chunks[count:]
    return ["\n\n".join(c) for c in head] + ["\n\n".join(p for c in tail for p in c)]


class LessonScreen(TutorScreen):
    AUTO_FOCUS = "#prose"  # arrows and page keys scroll the text; Tab reaches the contents
    BINDINGS = [
        Binding("n", "section(1)", "Next §", id="next"),
        Binding("p", "section(-1)", "Prev §", id="prev"),
        Binding("r", "run", "Run", id="run"),
        Binding("c", "cancel", "Cancel run", id="cancel"),
        Binding("e", "next_experiment", "Next experiment", id="next_exp", show=False),
        Binding("q", "quiz", "Quiz", id="quiz"),
        Binding("x", "exercise", "Exercise", id="lab"),
        Binding("t", "toggle_toc", "Contents", id="toc", show=False),
        Binding("escape", "home", "Home", id="home", show=False),
    ]

    def __init__(self, lesson_id: str | None) -> None:
        super().__init__()
        self.lesson_id = lesson_id
        self.read: set[str] = set()
        self.current_section: str | None = None
        self._built = False
        self._pending: tuple[str | None, str | None] | None = None

    @property
    def lesson(self) -> Lesson | None:
        return self.tutor.lesson(self.lesson_id) if self.lesson_id else None

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="toc")
            with VerticalScroll(id="prose"):
                yield Static(id="lesson-title", classes="title")
        yield KeyBar()

    def refresh_content(self) -> None:
        lesson = self.lesson
        title = self.query_one("#lesson-title", Static)
        if lesson is None:
            title.update(self.t("lesson.none") if self.tutor.course is not None else self.t("home.loading"))
            return
        title.update(pick(lesson.title, self.lang))
        if not self._built:
            self._build(lesson)
        else:
            self._relabel(lesson)
        self._fill_toc(lesson)
        if self._pending is not None:
            section, experiment = self._pending
            self._pending = None
            self.call_after_refresh(self.go_to, section, experiment)

    def on_mount(self) -> None:
        self._show_toc(self.app.size.width >= 100)
        if self.tutor.store is not None and self.lesson_id:
            try:
                self.read = {r.section for r in self.tutor.store.sections_read(self.lesson_id)}
            except Exception:  # unknown read state only means no ✓ marks
                self.read = set()
        prose = self.query_one("#prose", VerticalScroll)
        self.watch(prose, "scroll_y", self._scrolled, init=False)
        self.set_interval(0.5, self._scrolled)  # layout settles after mounting: re-check regions

    # --- building --------------------------------------------------------------------------

    def _build(self, lesson: Lesson) -> None:
        prose = self.query_one("#prose", VerticalScroll)
        for section in lesson.sections:
            box = Vertical(classes="section", id=f"sec-{section.id}")
            prose.mount(box)
            chunks = prose_between_experiments(pick(section.body, self.lang), len(section.experiments))
            widgets = [
                Static(pick(section.title, self.lang), classes="section-title"),
                Static(self._prose(chunks[0]), classes="prose"),
            ]
            for i, ref in enumerate(section.experiments):
                widgets.append(ExperimentPanel(ref, self.lang, self.tutor.home, id=f"exp-{section.id}-{i}"))
                widgets.append(Static(self._prose(chunks[i + 1]), classes="prose"))
            box.mount_all(widgets)
        self._built = True

    def _prose(self, text: str) -> Prose:
        return Prose(text, code_theme="monokai" if self.app.current_theme.dark else "default")

    def _relabel(self, lesson: Lesson) -> None:
        for section in lesson.sections:
            box = self.query_one(f"#sec-{section.id}", Vertical)
            chunks = prose_between_experiments(pick(section.body, self.lang), len(section.experiments))
            box.query_children(".section-title").first(Static).update(pick(section.title, self.lang))
            for widget, text in zip(box.query_children(".prose").results(Static), chunks, strict=False):
                widget.update(self._prose(text))
            for panel in box.query_children(ExperimentPanel):
                panel.refresh_content(self.lang)

    def _fill_toc(self, lesson: Lesson) -> None:
        toc = self.query_one("#toc", OptionList)
        highlighted = toc.highlighted
        toc.clear_options()
        toc.add_options(
            Option(("✓ " if s.id in self.read else "  ") + pick(s.title, self.lang), id=s.id)
            for s in lesson.sections
        )
        if highlighted is not None and highlighted < toc.option_count:
            toc.highlighted = highlighted

    # --- moving and reading ----------------------------------------------------------------

    def go_to(self, section: str | None = None, experiment: str | None = None) -> None:
        """Scroll to a section or to the first panel of an experiment (after the screen is built)."""
        if not self._built:
            self._pending = (section, experiment)
            return
        target = None
        if experiment is not None:
            target = next((p for p in self.query(ExperimentPanel) if p.ref.name == experiment), None)
        if target is None and section is not None:
            target = next(iter(self.query(f"#sec-{section}")), None)
        if target is not None:
            self._aim(target, tries=12)

    def _aim(self, target, tries: int, last: tuple[int, float] | None = None) -> None:
        """Scroll the target to the top, and again every 0.15 s for a while: the prose above it
        is laid out after mounting and pushes it down. Stops as soon as the learner scrolls."""
        prose = self.query_one("#prose", VerticalScroll)
        if last is not None and prose.scroll_y != last[1]:
            return  # the learner moved: leave them where they are
        y = self._content_y(target)
        prose.scroll_to(y=y, animate=False, immediate=True)
        if tries > 0:
            self.set_timer(0.15, lambda: self._aim(target, tries - 1, (y, prose.scroll_y)))

    def _sections(self) -> list[Vertical]:
        return list(self.query(".section").results(Vertical))

    def _scrolled(self, _value: float | None = None) -> None:
        lesson = self.lesson
        prose = self.query_one("#prose", VerticalScroll)
        if lesson is None or not self._built or not self.is_current or prose.virtual_size.height == 0:
            return
        top, bottom = prose.scroll_y, prose.scroll_y + prose.scrollable_content_region.height
        current = None
        newly_read = []
        for box in self._sections():
            region = box.virtual_region
            if region.height == 0:
                return  # not laid out yet
            section_id = box.id.removeprefix("sec-") if box.id else ""
            if region.y <= top + 2:
                current = section_id
            # read once its end has been on screen (jumping past a section does not count)
            if top <= region.bottom <= bottom + 1 and section_id not in self.read:
                newly_read.append(section_id)
        if current is None and lesson.sections:
            current = lesson.sections[0].id
        for section_id in newly_read:
            self.read.add(section_id)
            if self.tutor.store is not None:
                try:
                    self.tutor.store.mark_read(lesson.id, section_id)
                except Exception as err:  # reading goes on; the mark is just lost
                    self.notify(f"could not save progress: {err}", severity="warning")
        if newly_read:
            self._fill_toc(lesson)
        if current != self.current_section:
            self.current_section = current
            self.tutor.remember(screen="lesson", lesson=lesson.id, section=current)
            ids = [s.id for s in lesson.sections]
            if current in ids:
                self.query_one("#toc", OptionList).highlighted = ids.index(current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.go_to(section=event.option.id)

    def action_section(self, step: int) -> None:
        lesson = self.lesson
        if lesson is None or not lesson.sections:
            return
        ids = [s.id for s in lesson.sections]
        index = ids.index(self.current_section) if self.current_section in ids else 0
        self.go_to(section=ids[min(max(index + step, 0), len(ids) - 1)])

    # --- experiments -----------------------------------------------------------------------

    def panel_in_view(self) -> ExperimentPanel | None:
        """The panel holding the focus, else the first one on screen, else the next one below."""
        focused = self.focused
        while focused is not None and not isinstance(focused, ExperimentPanel):
            focused = focused.parent if focused.parent is not self else None
        if isinstance(focused, ExperimentPanel):
            return focused
        prose = self.query_one("#prose", VerticalScroll)
        top, bottom = prose.scroll_y, prose.scroll_y + prose.scrollable_content_region.height
        panels = list(self.query(ExperimentPanel))
        for panel in panels:
            y = self._content_y(panel)
            if y + panel.outer_size.height > top and y < bottom:
                return panel
        return next((p for p in panels if self._content_y(p) >= top), None)

    def _content_y(self, widget) -> int:
        """The widget's line in the scrolled prose (regions are relative to the parent)."""
        prose = self.query_one("#prose", VerticalScroll)
        y = 0
        while widget is not None and widget is not prose:
            y += widget.virtual_region.y
            widget = widget.parent
        return y

    def action_run(self) -> None:
        panel = self.panel_in_view()
        if panel is None:
            self.notify(self.t("lesson.no_experiment"))
            return
        panel.scroll_visible(animate=False)
        panel.run()

    def action_cancel(self) -> None:
        running = [p for p in self.query(ExperimentPanel) if p.running]
        for panel in running:
            panel.cancel()

    def action_next_experiment(self) -> None:
        panels = list(self.query(ExperimentPanel))
        if not panels:
            return
        prose = self.query_one("#prose", VerticalScroll)
        at_end = prose.scroll_y >= prose.max_scroll_y - 1  # the last panels cannot reach the top
        after = [p for p in panels if self._content_y(p) > prose.scroll_y + 1]
        target = after[0] if after and not at_end else panels[0]
        prose.scroll_to_widget(target, top=True, animate=False)

    def action_quiz(self) -> None:
        if self.lesson_id:
            self.post_message(OpenQuiz(self.lesson_id))

    def action_exercise(self) -> None:
        lesson = self.lesson
        if lesson is None or not lesson.exercises:
            self.notify(self.t("lesson.no_exercise"))
            return
        here = [ex for ex in lesson.exercises if ex.section == self.current_section]
        self.post_message(OpenExercise((here or lesson.exercises)[0].id))

    def action_toggle_toc(self) -> None:
        self._show_toc(not self.query_one("#toc").display)

    def _show_toc(self, show: bool) -> None:
        """Show or hide the contents. Hidden, it must not hold the focus: Textual still counts a
        hidden widget as focusable, and the arrow and page keys would go to it (PageDown on a
        never-drawn OptionList raises KeyError and ends the app)."""
        toc = self.query_one("#toc", OptionList)
        toc.display = toc.can_focus = show
        if not show and toc.has_focus:
            self.query_one("#prose", VerticalScroll).focus()

    def action_home(self) -> None:
        self.app.switch_mode("home")
