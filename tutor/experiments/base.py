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


def fmt(x: float, digits: int = 4) -> str:
    """Compact number text for table cells: 0.0001234 -> 1.234e-04, 12.5 -> 12.5."""
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"
