"""The next-step line: the one most useful thing to do now (tutor.progress.glance.next_step), in
the learner's language, with the key that does it (n: TutorApp.action_next_step follows it).

Shown on home, and under a pass: a passed exercise, a finished quiz sitting. `suggest()` reads the
store in a worker thread (the UI thread never waits for SQLite); `show()` draws what was read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import work
from textual.widgets import Static

if TYPE_CHECKING:
    from tutor.progress.glance import Step
    from tutor.ui.app import TutorApp


class NextStep(Static):
    # styled in tutor.tcss: a DEFAULT_CSS here made Textual parse the stylesheet again before home's
    # first frame

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.step: Step | None = None

    def on_mount(self) -> None:
        self.watch(self.app, "lang", self._relabel, init=False)

    def _relabel(self) -> None:
        if self.step is not None:
            self.show(self.step)  # in the new language

    @property
    def tutor_app(self) -> TutorApp:
        return cast("TutorApp", self.app)  # Textual types it as App[Any]

    def suggest(self) -> None:
        """Work the step out again (in a thread) and show it."""
        self._read()

    @work(thread=True, exclusive=True, group="next-step", exit_on_error=False)
    def _read(self) -> None:
        from tutor.progress.db import local_now
        from tutor.progress.glance import next_step, read_glance

        app = self.tutor_app
        index = app.tutor.index
        glance = read_glance(app.tutor.home) if index is not None else None
        if glance is None:
            return
        assert index is not None  # glance was read for it
        step = next_step(glance, index.cards, local_now(), app.training_place())
        app.call_from_thread(self.show, step)

    def show(self, step: Step | None) -> None:
        """Draw `step` (None: nothing to suggest) in the app's language; n follows it."""
        from tutor.progress.glance import step_text

        self.step = step
        app = self.tutor_app
        index = app.tutor.index
        self.display = step is not None and index is not None
        if self.display:
            assert step is not None and index is not None  # display says so
            self.update(Text(step_text(step, index.cards, app.lang)))
        app.next_steps[self.screen] = step if self.display else None  # n follows it on this screen
        app.refresh_bindings()
