"""What every screen of the app has: the shared Tutor model, the language, a redraw hook.

The texts follow the app's reactives: a screen watches `lang`, `theme` and `course_loaded` and
redraws itself when one changes; one that is not showing then redraws when it is shown again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.css.query import NoMatches
from textual.screen import Screen

from tutor.texts import say
from tutor.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp
    from tutor.ui.state import Tutor

WATCHED = ("lang", "theme", "course_loaded")  # the app's reactives that change what a screen shows


class TutorScreen(Screen):
    _drawn_for: tuple | None = None  # the values of WATCHED the texts were last drawn for
    made_ahead: bool = False  # made behind home before it is shown (tutor.ui.first_frame.ScreensAhead)

    @property
    def tutor_app(self) -> TutorApp:
        return cast("TutorApp", self.app)  # Textual types it as App[Any]

    @property
    def tutor(self) -> Tutor:
        return self.tutor_app.tutor

    @property
    def lang(self) -> str:
        return self.tutor.lang

    def t(self, key: str, **values: object) -> str:
        return say(key, self.lang, **values)

    def key_hidden(self, action: str) -> bool:
        """Whether the key bar and the help leave out a key that works: one that only repeats another
        key here, or says there is nothing to do."""
        return False

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self._app_changed, init=False)
        self.draw()

    def on_screen_resume(self) -> None:
        if self._drawn_for != self._app_state():
            self.redraw()

    def _app_state(self) -> tuple:
        return tuple(getattr(self.app, name) for name in WATCHED)

    def _app_changed(self) -> None:
        if self.is_current:  # the others redraw when they are shown again (on_screen_resume)
            self.redraw()

    def not_saved(self, err: Exception) -> None:
        """A store write failed (called in the writer thread, see Tutor.write): say so; the screen
        goes on, and what was shown stays shown."""
        self.app.call_from_thread(self.notify, self.t("err.app.not_saved", error=err), severity="warning")

    def redraw(self) -> None:
        """Everything in the current language and theme: texts, key labels, the key bar."""
        self.draw()
        for bar in self.query(KeyBar):
            bar.redraw()

    def draw(self) -> None:
        """refresh_content once the widgets exist: a container's own children are composed
        after the screen's Mount event, so a first attempt may come too early and is retried."""
        self._drawn_for = self._app_state()
        try:
            self.refresh_content()
        except NoMatches:
            self.call_after_refresh(self.draw)

    def refresh_content(self) -> None:
        """The course finished loading or the language changed: redraw every text."""
