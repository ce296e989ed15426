"""A lesson: Markdown prose with a table of contents and the experiments inline.

The prose is Rich's Markdown in a Static, one per chunk between experiments, its lines broken by
tutor.ui.rich_markdown (Chinese between characters, at most 100 columns): Textual's Markdown widget makes a
widget per paragraph, and a few hundred widgets made every return to the lesson (screen resume
restyles them all) take a quarter of a second.

Each section is a container of [prose, panel, prose, panel, …, prose] so that switching language
only updates the prose widgets and never drops an experiment that is running. A section counts as
read once it has been on screen for a few seconds (tutor/ui/reading.py).

Moving: `n`/`p`, the contents and `e` aim at a section or panel (one aim at a time, kept while the
text above it lays out, dropped as soon as the learner scrolls). `r` runs the panel `e` last moved
to while it is in view, else the panel most in view. The lesson stays where the learner left it
when they go elsewhere and come back.

Keeping the place: when the text's width changes (the contents shown or hidden, the terminal resized,
here or while another screen was on top) every line breaks anew; the widget that was at the top of the
view (a paragraph, a panel) is aimed at again, as far into it. That place is noted as the learner scrolls
and as an aim ends, at the width it was measured at, and never from a layout of another width (a resize
lays out before the screen hears of it); an aim still going on is the place itself and is taken up again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.content.markdown import split_body
from tutor.content.schema import Lesson
from tutor.i18n import pick
from tutor.ui.messages import OpenExercise, OpenQuiz
from tutor.ui.reading import ReadingClock, on_screen
from tutor.ui.rich_markdown import Prose
from tutor.ui.screens import on_top
from tutor.ui.screens.base import TutorScreen
from tutor.ui.widgets.experiment_panel import RUN_GROUPS, ExperimentPanel
from tutor.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

    from tutor.progress.store import Store


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
        # in the order of the key bar, which shows as many whole entries as fit
        Binding("n", "section(1)", "Next §", id="next"),
        Binding("p", "section(-1)", "Prev §", id="prev"),
        Binding("e", "next_experiment", "Next experiment", id="next_exp"),
        Binding("r", "run", "Run", id="run"),
        Binding("o", "params", "Parameters", id="params", show=False),  # of the panel `r` would run
        Binding("c", "cancel", "Cancel run", id="cancel"),  # shown while a run of this lesson goes
        Binding("t", "toggle_toc", "Contents", id="toc"),
        Binding("q", "quiz", "Quiz", id="quiz"),
        Binding("x", "exercise", "Exercise", id="lab"),
        Binding("escape", "home", "Home", id="home", show=False),
    ]
    AIM_S = 1.8  # how long an aim is kept while the text above the target lays out
    REMEMBER_AFTER_S = 0.5  # the place is saved once the scrolling has stopped this long

    def __init__(self, lesson_id: str | None) -> None:
        super().__init__()
        self.lesson_id = lesson_id
        self.clock = ReadingClock()
        self.current_section: str | None = None
        self.chosen: ExperimentPanel | None = None  # the panel `e` (or an opening at it) moved to
        self._wrap_next = False  # e said there is no panel further on: e again goes to the first
        self._panels: list[ExperimentPanel] = []  # in lesson order, kept from _build (no DOM walks)
        self._boxes: dict[str, Vertical] = {}  # section id -> its container, in lesson order
        self._built = False
        self._pending: tuple[str | None, str | None, int] | None = None
        self._aim_at: tuple[int, object, int, float] | None = None  # (generation, target, offset, until)
        self._resume_aim: tuple[object, int] | None = None  # (target, offset) of an aim cut short by leaving
        self._aim_generation = 0
        self._aimed_y: float | None = None
        self._remember_timer: Timer | None = None  # the save of the place, waiting for the scrolling to stop
        self._place: dict[str, str | None] | None = None  # that place (measured as the scrolling went)
        self._kept: tuple[Widget, float, int] | None = None  # (widget at the top, fraction into it, width)

    @property
    def read(self) -> set[str]:
        return self.clock.read

    @property
    def showing(self) -> bool:
        """The top screen, the one the learner sees."""
        return on_top(self)

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
            section, experiment, offset = self._pending
            self._pending = None
            self.call_after_refresh(self.go_to, section, experiment, offset)

    def on_mount(self) -> None:
        self._show_toc(self.app.size.width >= 100)
        if self.tutor.store is not None and self.lesson_id:
            try:
                self.clock.read.update(r.section for r in self.tutor.store.sections_read(self.lesson_id))
            except Exception:  # unknown read state only means no ✓ marks
                pass
        prose = self.query_one("#prose", VerticalScroll)
        self.watch(prose, "scroll_y", self._moved, init=False)
        self.set_interval(0.5, self._tick)  # reading time; layout settles after mounting: re-check

    def on_screen_suspend(self) -> None:
        self.clock.pause()
        self._leave_panels()
        # an aim not finished yet (the learner jumped and left at once) is taken up again on return
        self._resume_aim = self._aim_at[1:3] if self._aim_at is not None else None
        self._aim_at = None
        self._remember_left()

    def on_screen_resume(self) -> None:
        if self._resume_aim is not None:
            target, offset = self._resume_aim
            self._resume_aim = None
            self.aim(target, offset)
        elif self._kept is not None and self._kept[2] != self._width():
            self._hold_place()  # the terminal was resized while another screen was on top

    def on_resize(self) -> None:
        self._hold_place()

    def on_unmount(self) -> None:
        """The app ends: a place measured and not saved yet is saved (nothing is measured now: the
        widgets are gone)."""
        if self._place is not None:
            self._remember_left()

    def _remember_left(self) -> None:
        """Save the place now (the learner leaves, or the app ends), unless they went on elsewhere."""
        place, self._place = self._place, None
        if self._remember_timer is not None:
            self._remember_timer.stop()
            self._remember_timer = None
        where = self.tutor.where
        if where.get("screen") == "lesson" and where.get("lesson") == self.lesson_id:
            if place is not None:
                self.tutor.remember(**place)  # measured while it was laid out
            else:
                self._remember(leaving=True)  # the line reached

    # --- building --------------------------------------------------------------------------

    def _build(self, lesson: Lesson) -> None:
        prose = self.query_one("#prose", VerticalScroll)
        for section in lesson.sections:
            box = Vertical(classes="section", id=f"sec-{section.id}")
            self._boxes[section.id] = box
            prose.mount(box)
            chunks = prose_between_experiments(pick(section.body, self.lang), len(section.experiments))
            widgets: list[Widget] = [
                Static(pick(section.title, self.lang), classes="section-title"),
                Static(self._prose(chunks[0]), classes="prose"),
            ]
            for i, ref in enumerate(section.experiments):
                panel = ExperimentPanel(ref, self.lang, self.tutor.home, id=f"exp-{section.id}-{i}")
                self._panels.append(panel)
                widgets.append(panel)
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

    def go_to(self, section: str | None = None, experiment: str | None = None, offset: int = 0) -> None:
        """Scroll to a section (`offset` lines into it) or to the first panel of an experiment
        (after the screen is built); with neither, stay where the learner was."""
        if not self._built:
            self._pending = (section, experiment, offset)
            return
        target: ExperimentPanel | Vertical | None = None
        if experiment is not None:
            target = next((p for p in self._panels if p.ref.name == experiment), None)
            self.chosen = target
        if target is None and section is not None:
            target = self._boxes.get(section)
            if target is not None:
                self.chosen = None
                self._set_section(section)
        if target is not None:
            self.aim(target, offset if target is not self.chosen else 0)

    def aim(self, target, offset: int = 0) -> None:
        """Scroll the target to the top now, and keep it there for AIM_S while the prose above it
        is laid out and pushes it down. A new aim replaces this one; the learner scrolling ends it."""
        self._aim_generation += 1
        self._aim_at = (self._aim_generation, target, offset, time.monotonic() + self.AIM_S)
        self._aimed_y = None
        box = target if target.has_class("section") else target.parent
        if box is not None and box.id and box.id.startswith("sec-"):
            self._set_section(box.id.removeprefix("sec-"))  # while aiming, the aim says where we are
        self._aim_step(self._aim_generation)

    def _aim_step(self, generation: int) -> None:
        if self._aim_at is None or self._aim_at[0] != generation or not self.is_attached:
            return
        _, target, offset, until = self._aim_at
        prose = self.query_one("#prose", VerticalScroll)
        if self._aimed_y is not None and prose.scroll_y != self._aimed_y:
            self._aim_at = None  # the learner moved: leave them where they are
            self._scrolled()
            self._kept = None
            self._note_anchor()
            return
        prose.scroll_to(y=self._content_y(target) + offset, animate=False, immediate=True)
        self._aimed_y = prose.scroll_y
        if time.monotonic() >= until:
            self._aim_at = None
            self._scrolled()
            self._kept = None
            self._note_anchor()  # the place reached, at this width
            return
        self.set_timer(0.15, lambda: self._aim_step(generation))

    def _sections(self) -> list[Vertical]:
        return list(self._boxes.values())

    def _view(self) -> tuple[float, float] | None:
        """The lines of the prose in view, or None before it is laid out (or while not showing)."""
        if self.lesson is None or not self._built or not self.showing:
            return None
        found = self.query("#prose")
        if not found:  # the screen is being taken down: its widgets go before its timers
            return None
        prose = found.first(VerticalScroll)
        if prose.virtual_size.height == 0:
            return None
        return prose.scroll_y, prose.scroll_y + prose.scrollable_content_region.height

    def _section_spans(self) -> list[tuple[str, int, int]] | None:
        """(section id, first line, end line) of every section, or None while not laid out."""
        spans = []
        for box in self._sections():
            region = box.virtual_region
            if region.height == 0:
                return None
            spans.append((box.id.removeprefix("sec-") if box.id else "", region.y, region.bottom))
        return spans

    def _moved(self, _value: float) -> None:
        """The prose scrolled (the learner, `e`, `n`, a jump): which section is at the top now, and
        the place saved for "continue" once the scrolling stops (a write per stop, not per line)."""
        self._scrolled()
        self._note_anchor()
        if (place := self._where()) is None:
            return
        self._place = place
        if self._remember_timer is not None:
            self._remember_timer.stop()
        self._remember_timer = self.set_timer(self.REMEMBER_AFTER_S, self._remember_settled)

    def _remember_settled(self) -> None:
        place, self._place, self._remember_timer = self._place, None, None
        if place is not None and self.showing:
            self.tutor.remember(**place)

    def _scrolled(self, _value: float | None = None) -> None:
        """The section at the top of the view is the current one ("continue" comes back to it)."""
        view, spans = self._view(), self._section_spans()
        if view is None or not spans or self._aim_at is not None:
            return  # (while aiming, the aim says which section the learner is in)
        top = view[0]
        current = next((sid for sid, y, _ in reversed(spans) if y <= top + 2), spans[0][0])
        ids = [sid for sid, _, _ in spans]
        prose = self.query_one("#prose", VerticalScroll)
        if (
            prose.scroll_y >= prose.max_scroll_y - 1
            and self.current_section in ids
            and ids.index(self.current_section) > ids.index(current)
        ):
            return  # at the end: the last sections cannot reach the top, `n` moved to one of them
        if current != self.current_section:
            self._set_section(current)

    def _set_section(self, section: str) -> None:
        self.current_section = section
        self._remember()
        lesson = self.lesson
        ids = [s.id for s in lesson.sections] if lesson else []
        if section in ids:
            self.query_one("#toc", OptionList).highlighted = ids.index(section)

    def _remember(self, leaving: bool = False) -> None:
        """Where the learner is, down to the line inside the section, for "continue" (by the
        screen showing, or by this one as the learner leaves it)."""
        if not (self.showing or leaving) or (place := self._where()) is None:
            return
        self.tutor.remember(**place)

    def _where(self) -> dict[str, str | None] | None:
        """The place in this lesson: the section at the top, the line in it, and the panel `e` moved
        to if the view starts at it (continue opens there at any terminal width)."""
        if self.lesson_id is None or self.current_section is None:
            return None
        offset, experiment = 0, None
        box = self._boxes.get(self.current_section)
        if box is not None and box.virtual_region.height:
            prose = self.query_one("#prose", VerticalScroll)
            offset = max(0, int(prose.scroll_y) - self._content_y(box))
            chosen = self.chosen
            if (
                chosen is not None
                and chosen.is_attached
                and abs(prose.scroll_y - self._content_y(chosen)) < 1
            ):
                experiment = chosen.ref.name  # at the panel `e` moved to: continue there (any width)
        return {
            "screen": "lesson",
            "lesson": self.lesson_id,
            "section": self.current_section,
            "offset": str(offset),
            "experiment": experiment,
        }

    def _tick(self) -> None:
        """Twice a second: count the time the sections in view have been on screen."""
        view, spans = self._view(), self._section_spans()
        if view is None or spans is None:
            self.clock.pause()
            return
        showing = [sid for sid, y, end in spans if on_screen(view[0], view[1], y, end)]
        newly_read = self.clock.tick(time.monotonic(), showing)
        lesson = self.lesson
        assert lesson is not None  # sections are spanned once it is built
        for section_id in newly_read:  # written by the app's writer thread, not this one

            def mark(store: Store, s: str = section_id) -> object:  # a def: mypy types no lambda with one
                return store.mark_read(lesson.id, s)

            self.tutor.write(mark, on_error=self.not_saved)
        if newly_read:
            self._fill_toc(lesson)
        self._scrolled()

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
        """The panel `e` last moved to while at least half of it is in view (or it fills half the
        view), else the panel with the most lines in view, else the next one below. (Where the
        focus is does not count: it stays on a panel's parameters while the learner moves on.)"""
        prose = self.query_one("#prose", VerticalScroll)
        top, bottom = prose.scroll_y, prose.scroll_y + prose.scrollable_content_region.height

        def shown(panel: ExperimentPanel) -> float:
            y = self._content_y(panel)
            return min(bottom, y + panel.outer_size.height) - max(top, y)

        chosen = self.chosen
        if chosen is not None and chosen.is_attached:
            if shown(chosen) * 2 >= min(chosen.outer_size.height, bottom - top):
                return chosen
        panels = self._panels
        in_view = [(shown(p), -i, p) for i, p in enumerate(panels) if shown(p) > 0]
        if in_view:
            return max(in_view, key=lambda x: x[:2])[2]
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

    def _runs_here(self) -> bool:
        """Whether one of this lesson's experiments runs."""
        return any(
            w.group in RUN_GROUPS and not w.is_finished and w.node in self._panels for w in self.app.workers
        )

    def key_hidden(self, action: str) -> bool:
        return action == "cancel" and not self._runs_here()  # the key shows only while a run goes

    def action_cancel(self) -> None:
        """Cancel the run of the panel in view; a run elsewhere goes on, and the learner is told where;
        with nothing running, the learner is told so."""
        panel = self.panel_in_view()
        if panel is not None and panel.running:
            panel.cancel()
            return
        running = next((p for p in self._panels if p.running), None)
        if running is not None:
            self.notify(self.t("lesson.cancel_elsewhere", title=self.t(f"exp.{running.ref.name}.title")))
        else:
            self.notify(self.t("lesson.nothing_to_cancel"))

    async def action_params(self) -> None:
        """Open the parameters of the panel `r` would run, the focus in its first field."""
        panel = self.panel_in_view()
        if panel is None or panel.form is None:
            self.notify(self.t("lesson.no_experiment"))
            return
        await panel.show_params(focus=True)

    # --- focus -----------------------------------------------------------------------------

    @property
    def focus_chain(self) -> list:
        """Tab goes through the contents, the text and the panels in view, not every panel of the lesson."""
        chain = super().focus_chain
        view = self._view()
        if view is None:
            return chain
        top, bottom = view
        near = {
            p for p in self._panels if (y := self._content_y(p)) < bottom and y + p.outer_size.height > top
        }
        return [w for w in chain if w is self.focused or self._panel_of(w) in near | {None}]

    def _panel_of(self, widget) -> ExperimentPanel | None:
        for node in widget.ancestors_with_self:
            if isinstance(node, ExperimentPanel):
                return node
        return None

    def _leave_panels(self) -> None:
        """Focus back on the text if it was in a panel: the keys are the lesson's when the learner comes
        back, never typed into a field scrolled out of sight."""
        if self.focused is not None and self._panel_of(self.focused) is not None:
            self.set_focus(self.query_one("#prose", VerticalScroll), scroll_visible=False)

    def action_next_experiment(self) -> None:
        """The next panel below the top of the view. Past the last one, e says so and stays; e again
        then goes back to the first (moving forward never jumps back unannounced)."""
        panels = self._panels
        if not panels:
            return
        prose = self.query_one("#prose", VerticalScroll)
        top = prose.scroll_y
        at_end = top >= prose.max_scroll_y - 1  # the last panels cannot reach the top
        if self.chosen in panels and self._aim_at is not None:
            # still aiming at the last one (its text above may not be laid out): count from it
            after = panels[panels.index(self.chosen) + 1 :]
        else:
            after = [p for p in panels if self._content_y(p) > top + 1]
            if at_end and self.chosen in panels:
                after = panels[panels.index(self.chosen) + 1 :]
        if not after and not self._wrap_next:
            self._wrap_next = True
            self.notify(self.t("lesson.last_experiment"))
            return
        self._wrap_next = False
        target = after[0] if after else panels[0]
        self.chosen = target
        prose.focus()  # out of any panel's parameters: the keys are the lesson's again
        self.aim(target)

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
        """Show or hide the contents; the text keeps its place (see the module's docstring)."""
        self._note_anchor()
        self._show_toc(not self.query_one("#toc").display)
        self._hold_place()

    def _width(self) -> int:
        return self.query_one("#prose", VerticalScroll).size.width

    def _note_anchor(self) -> None:
        """Note the place (the widget at the top of the view, how far into it) at the text's width now,
        unless an aim says where the learner is or the width changed since the place was noted (the
        layout of the new width is not the learner's place: `_hold_place` takes the noted one up)."""
        if self._aim_at is not None or (self._kept is not None and self._kept[2] != self._width()):
            return
        anchor = self._anchor()
        if anchor is not None:
            self._kept = (*anchor, self._width())

    def _hold_place(self) -> None:
        """The text's width changed or is about to: go back to the place noted (or aimed at) before."""
        if self._aim_at is not None:  # an aim under way (its target's text above may not be laid out)
            _, target, offset, _ = self._aim_at
            self.call_after_refresh(self.aim, target, offset)
            return
        kept, self._kept = self._kept, None
        if kept is not None:
            self.call_after_refresh(self._keep_anchor, kept[0], kept[1])

    def _anchor(self) -> tuple[Widget, float] | None:
        """The widget of the current section at the top of the view, and how far into it the view
        starts (a fraction of its height); None before the text is laid out."""
        box = self._boxes.get(self.current_section or "")
        if box is None or self._view() is None:
            return None
        top = self.query_one("#prose", VerticalScroll).scroll_y
        above = [c for c in box.children if c.outer_size.height and self._content_y(c) <= top]
        if not above:
            return box, 0.0
        child = above[-1]  # the view starts in it (or in the margin after it)
        return child, (top - self._content_y(child)) / child.outer_size.height

    def _keep_anchor(self, widget, fraction: float) -> None:
        if widget.is_attached:
            self.aim(widget, round(fraction * widget.outer_size.height))

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
