"""The app's screens: one file per screen."""

from __future__ import annotations

from textual.app import ScreenStackError, UnknownModeError
from textual.screen import Screen


def on_top(screen: Screen) -> bool:
    """Whether `screen` is the one the learner sees (Textual's is_current also counts the screen right under
    it); False while the app has no screen, as when it shuts down with a timer still ticking."""
    try:
        return screen.app.screen is screen
    except (ScreenStackError, UnknownModeError):
        return False
