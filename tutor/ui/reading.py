"""When a lesson section counts as read: it has been on screen for a few seconds in all.

"On screen" means at least half of the section is in view, or it fills at least half of the view
(a long section never fits whole). Time only counts while the lesson is the screen showing; paging
through the sections with `n` shows each for a moment and reads none of them. No Textual here: the
lesson screen measures what is in view and calls `tick` twice a second.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tutor.settings import READ_AFTER_S

MAX_TICK_S = 1.0  # a longer gap between ticks (the app was busy or suspended) counts as this much


def on_screen(top: float, bottom: float, section_top: float, section_bottom: float) -> bool:
    """Whether a section spanning [section_top, section_bottom) counts as on screen in [top, bottom)."""
    height = section_bottom - section_top
    shown = min(bottom, section_bottom) - max(top, section_top)
    return height > 0 and shown > 0 and shown * 2 >= min(height, bottom - top)


@dataclass
class ReadingClock:
    read: set[str] = field(default_factory=set)  # sections read (in this and earlier sittings)
    after_s: float = READ_AFTER_S
    seen_s: dict[str, float] = field(default_factory=dict)  # time on screen so far, unread sections
    _last: float | None = None

    def pause(self) -> None:
        """The lesson is not showing: the next tick starts counting afresh."""
        self._last = None

    def tick(self, now: float, showing: list[str]) -> list[str]:
        """`showing` are the sections on screen now; returns those that have just become read."""
        elapsed = 0.0 if self._last is None else min(max(now - self._last, 0.0), MAX_TICK_S)
        self._last = now
        newly = []
        for section in showing:
            if section in self.read:
                continue
            self.seen_s[section] = self.seen_s.get(section, 0.0) + elapsed
            if self.seen_s[section] >= self.after_s:
                self.read.add(section)
                newly.append(section)
        return newly
