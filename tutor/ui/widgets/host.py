"""What a widget may ask of the app it runs in: the `Host` protocol, which tutor.ui.app.TutorApp
implements (mypy checks that there), and `host_of(widget)` to reach it.

Widgets never import the app nor cast `self.app` to it: they read these few things through `Host`, and
ask for navigation with the Messages of tutor.ui.messages, as screens do. A widget in another app (the
charts' tests put a panel in a bare Textual App) gets None and does without: no store, no served session,
English.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

    from tutor.progress.glance import Step
    from tutor.serve.session import Served
    from tutor.ui.messages import Training
    from tutor.ui.state import Tutor


@runtime_checkable
class Host(Protocol):
    """The app as its widgets see it."""

    @property
    def tutor(self) -> Tutor:
        """The course, the store and its writer thread, the learner's home."""
        ...

    @property
    def served(self) -> Served | None:
        """The served session's bounds (`python -m tutor serve`), None in a terminal."""
        ...

    @property
    def lang(self) -> str:
        """The learner's language, as it is now (F5 changes it)."""
        ...

    @property
    def training(self) -> Training | None:
        """The one training run, wherever it was started."""
        ...

    def training_place(self) -> tuple[str, str] | None:
        """(lesson, experiment) of the training run going now, for the next step."""
        ...

    def step_shown(self, screen: Screen, step: Step | None) -> None:
        """`screen` shows `step` as its next step (None: none): n follows it there."""
        ...


def host_of(widget: Widget) -> Host | None:
    """The app `widget` runs in, as a Host; None in an app that is not one."""
    app = widget.app
    return app if isinstance(app, Host) else None
