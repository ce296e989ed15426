"""The exercise's general hints, revealed one at a time (`h`), each recorded by the store's writer thread
and counted again from the store when the screen starts (tutor.grading.hints)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from tutor.i18n import pick

if TYPE_CHECKING:
    from tutor.content.schema import Exercise
    from tutor.ui.screens.exercise import ExerciseScreen


class Hints:
    def __init__(self, screen: ExerciseScreen) -> None:
        self.screen = screen
        self.shown = 0  # the hints revealed so far

    def count(self, ex: Exercise) -> None:
        """As many as the store says were revealed (in an earlier session too)."""
        store = self.screen.tutor.store
        if store is not None:
            self.shown = len({h.hint for h in store.hint_reveals(ex.id) if h.hint.isdigit()})

    def draw(self) -> Static | None:
        """The hints revealed so far, one Static each; returns the newest one's."""
        screen, pair = self.screen, self.screen.pair
        if pair is None:
            return None
        hints = pair[1].hints[: self.shown]
        box = screen.query_one("#ex-hints", Vertical)
        box.display = bool(hints)
        box.query_children(".ex-hints-title").first(Static).update(Text(screen.t("ex.hints"), style="bold"))
        shown = list(box.query_children(".ex-hint").results(Static))
        for i, hint in enumerate(hints):
            text = screen.prose(f"💡 **{i + 1}.** {pick(hint, screen.lang)}")
            if i < len(shown):
                shown[i].update(text)
            else:
                shown.append(Static(text, classes="ex-hint"))
                box.mount(shown[-1])
        return shown[len(hints) - 1] if hints else None

    def reveal(self) -> bool:
        """The next hint, recorded and shown (scrolled into view); False when none is left."""
        screen, pair = self.screen, self.screen.pair
        if pair is None:
            return False
        ex = pair[1]
        if self.shown >= len(ex.hints):
            screen.notify(screen.t("ex.no_more_hints"))
            return False
        from tutor.grading.hints import reveal_hint

        number, lang = self.shown + 1, screen.lang  # recorded by the writer thread: shown at once
        screen.tutor.write(lambda store: reveal_hint(store, ex, number, lang), on_error=screen.not_saved)
        self.shown = number
        newest = self.draw()
        if newest is not None:
            newest.scroll_visible(animate=False)  # after the next refresh, when it is laid out
        return True
