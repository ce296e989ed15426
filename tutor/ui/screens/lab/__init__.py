"""The exercise screen's parts, one per thing it shows (tutor.ui.screens.exercise composes them): the
predictions asked first, the grade, the training of the learner's own model, the hints. Each owns its
state and handlers and draws into the widgets the screen composes (their ids are the screen's, styled in
tutor.tcss); the screen keeps the page, the learner's file, the editor and the keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.worker import Worker, WorkType

T = TypeVar("T")


def run_exclusive(screen: Screen, work: Callable[[], Awaitable[T]], *, name: str, group: str) -> Worker[T]:
    """`work()` as the screen's worker, replacing the one running in `group`, its error its own: what
    Textual's `@work(exclusive=True, exit_on_error=False)` does for a screen's method. A callable, not a
    coroutine made ahead: one replaced before it started leaves nothing un-awaited. (Textual types
    run_worker's argument as a union that mypy solves for a callable as Never: hence the cast.)"""
    return screen.run_worker(
        cast("WorkType[T]", work), name=name, group=group, exclusive=True, exit_on_error=False
    )
