"""The next-step line: the one most useful thing to do now (tutor.progress.glance.next_step), in
the learner's language, with the key that does it (n follows it: the line tells its host app what it
shows, tutor.ui.widgets.host).

Shown on home, and under a pass: a passed exercise, a finished quiz sitting. `suggest()` reads the
store in a worker thread (the UI thread never waits for SQLite); `show()` draws what was read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.widgets import Static

from tutor.ui.widgets.host import host_of

if TYPE_CHECKING:
    from tutor.progress.glance import Step


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

    def suggest(self) -> None:
        """Work the step out again (in a thread) and show it."""
        self._read()

    @work(thread=True, exclusive=True, group="next-step", exit_on_error=False)
    def _read(self) -> None:
        from tutor.progress.db import local_now
        from tutor.progress.glance import next_step, read_glance

        host = host_of(self)
        if host is None or (index := host.tutor.index) is None:
            return
        glance = read_glance(host.tutor.home)
        if glance is None:
            return
        step = next_step(glance, index.cards, local_now(), host.training_place())
        self.app.call_from_thread(self.show, step)

    def show(self, step: Step | None) -> None:
        """Draw `step` (None: nothing to suggest) in the app's language; n follows it."""
        from tutor.progress.glance import step_text

        self.step = step
        host = host_of(self)
        index = host.tutor.index if host is not None else None
        self.display = host is not None and step is not None and index is not None
        if host is None:
            return
        if step is not None and index is not None:
            self.update(Text(step_text(step, index.cards, host.lang)))
        host.step_shown(self.screen, step if self.display else None)  # n follows it on this screen
