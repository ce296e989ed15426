"""What every experiment function receives besides its parameters: a cancel check, an event sink
for progress, and the learner's home (for stored training runs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tutor.experiments.errors import Cancelled


@dataclass
class RunContext:
    should_stop: Callable[[], bool] | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None
    home: Path | None = None

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
