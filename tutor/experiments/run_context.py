"""What every experiment function receives besides its parameters: a cancel check, an event sink
for progress, and the caller's earlier training runs (experiments compute; their callers keep runs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tutor.experiments.errors import Cancelled


class StoredRun(Protocol):
    """A finished training run as the caller kept it (tutor.progress's TrainingRun is one)."""

    final_val_loss: float | None
    params: int | None
    seconds: float | None
    curve: Sequence[Sequence[float | None]]  # (step, train loss, val loss)


@dataclass
class RunContext:
    should_stop: Callable[[], bool] | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None
    stored_run: Callable[[str], StoredRun | None] | None = None  # a finished run by its key, or None

    def check(self) -> None:
        """Call between steps: raises Cancelled once the caller asked to stop."""
        if self.should_stop is not None and self.should_stop():
            raise Cancelled()

    def emit(self, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)
