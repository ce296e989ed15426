"""What every screen of the app has: the shared Tutor model, the language, a redraw hook."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.css.query import NoMatches
from textual.screen import Screen

from tutor.ui.bindings import localise
from tutor.ui.strings import t

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp
    from tutor.ui.state import Tutor


class TutorScreen(Screen):
    @property
    def tutor_app(self) -> TutorApp:
        return self.app  # type: ignore[return-value]

    @property
    def tutor(self) -> Tutor:
        return self.tutor_app.tutor

    @property
    def lang(self) -> str:
        return self.tutor.lang

    def t(self, key: str, **values: object) -> str:
        return t(key, self.lang, **values)

    def on_mount(self) -> None:
        localise(self, self.lang)
        self.draw()

    def draw(self) -> None:
        """refresh_content once the widgets exist: a container's own children are composed
        after the screen's Mount event, so a first attempt may come too early and is retried."""
        try:
            self.refresh_content()
        except NoMatches:
            self.call_after_refresh(self.draw)

    def refresh_content(self) -> None:
        """The course finished loading or the language changed: redraw every text."""
