"""The quick first frame and the quick first F3 and F4: what the app does for them that leans on how
Textual starts a mode, shows a screen and applies the stylesheet, in one place.

Each rests on a behaviour of Textual that is not part of its documented API, as it is in textual==8.2.8
(pinned in pyproject.toml); after an upgrade, check each against Textual's source (`textual/app.py`), and
run the test named with it:

1. `App._init_mode` starts DEFAULT_MODE with `get_default_screen()` and registers that screen without
   `_load_screen_css` or `refresh_css`, where a mode added with `add_mode` has its stylesheet parsed a
   second time before its first frame. So the app's DEFAULT_MODE is "home" and its default screen is home
   itself (no blank screen first); `add_mode("home", ...)` on mount only names it for `switch_mode("home")`,
   whose stack `_init_mode` then finds and keeps. The time: benchmarks/bench_startup.py (docs/figures.md);
   home first: tests/test_startup.py::test_home_lists_the_lessons_from_the_saved_cards_before_the_course_loads.
2. `App.switch_mode` calls `delay_update()`, which holds every frame back for 50 ms to mask the switch: the
   app's `delay_update` holds for MODE_SWITCH_HOLD_S only (its screens are built already and show in one
   frame). The time of an F1/F2 switch: benchmarks/bench_responsiveness.py.
3. A screen shown for the first time has `_init_mode` (or `push_screen`) run `_load_screen_css` and, as its
   `_css_update_count` is behind the app's, `refresh_css`: the stylesheet applied to every screen the app
   holds and the styles of widgets not seen before parsed, 150-200 ms at the first F3 or F4 once a lesson
   is open. `ScreensAhead` makes the quiz's and the lab's first screens at start-up, when only home is
   there: inside `batch_update()` (no frame is drawn until it ends) it switches to the mode, which makes
   the screen, restyles it and switches back to home. The modes' factories may return an installed
   screen's name, which `_init_mode` passes to `_get_screen` (add_mode's type says a Screen only).
   Caught by tests/test_ui_first_keys.py::test_the_first_f3_and_f4_show_screens_made_behind_home_without_a_trace.
4. A screen starts with `_css_update_count` -1, and `switch_mode` runs `refresh_css` when the screen it
   shows has a count behind the app's; `refresh_css` brings up to date only the screens of the current
   mode's stack. Home, started as the default screen (1), never had one: `restyle_home`, run once the
   course is loaded, spares the learner's first return home that restyle. The time of the first F1:
   benchmarks/bench_responsiveness.py.
5. The command palette has the class `-ready` once its first search is drawn (`CommandPalette`'s
   gathering of commands adds it): `ScreensAhead` waits for it rather than make screens under a palette
   still opening. Caught by tests/test_ui_first_keys.py, as in 3, when a palette is open at start-up.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tutor.settings import PREPARE_RETRY_S

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp
    from tutor.ui.screens.base import TutorScreen

AHEAD = ("quiz", "lab")  # the modes whose first screens are made behind home


def restyle_home(app: TutorApp) -> None:
    """Textual re-parses the stylesheet the first time a screen that has not seen it is shown again; the
    home screen (started as the default screen) has not: do it now, not at the learner's first return
    home (behaviour 4)."""
    app.refresh_css(animate=False)


class ScreensAhead:
    """The quiz's and the lab's first screens, made behind home at start-up so the first F3 and F4 only
    show them (behaviour 3). A screen made ahead is marked `made_ahead` while it is being made and builds
    no sitting (the quiz) and starts no file or warm judge (the lab) until it is first shown."""

    def __init__(self, app: TutorApp) -> None:
        self.app = app
        self.made: list[TutorScreen] = []  # every screen made ahead (drawn again once the course loads)
        self._prepared: set[str] = set()  # the modes whose first screens were made ahead
        self._seen: set[str] = set()  # ... and those the learner has been in
        self._making = False  # ... one being made now
        self._ahead: list[TutorScreen] = []  # ... the screen it is making

    def watch_modes(self) -> None:
        """Note each mode the learner goes to (one been in is not made ahead): from the app's on_mount."""
        self.app.mode_change_signal.subscribe(self.app, self._mode_changed)

    def _mode_changed(self, mode: str) -> None:
        if not self._making and mode != "home":
            self._seen.add(mode)

    def mark(self, screen: TutorScreen) -> TutorScreen:
        """A mode's first screen (from the mode's factory), marked while it is being made ahead."""
        if self._making:
            screen.made_ahead = True
            self._ahead.append(screen)
        return screen

    async def prepare_then(self, done: asyncio.Event) -> None:
        """`prepare`, then `done` set, whatever happened."""
        try:
            await self.prepare()
        finally:
            done.set()

    async def prepare(self) -> None:
        """Make the modes' first screens now, behind home. Each is mounted and styled in a batch of its
        own that ends back at home, so nothing shows; it runs in the app's own message loop, so a key
        pressed meanwhile waits for it, and before the course counts as loaded (course_ready), so nothing
        else looks at the app meanwhile. From home only, with nothing over it but the command palette, and
        only a mode the learner has not been in; if anything else moved the app meanwhile (an opener
        running as a worker), the app stays where that put it. A learner who left home before the course
        had loaded meets the first F3 and F4 as Textual makes them."""
        app = self.app
        if app.tutor.course is None or app.current_mode != "home":
            return
        if not self._settled():  # a screen over home still opening: again in a moment
            app.set_timer(PREPARE_RETRY_S, self.prepare)
            return
        for mode in AHEAD:
            if mode in self._prepared or mode in self._seen:
                continue
            self._prepared.add(mode)
            if not await self._make(mode):
                return  # something else was shown meanwhile: leave the app there

    async def _make(self, mode: str) -> bool:
        """One mode's first screen, mounted and styled in a batch that ends back at home; False if
        something else moved the app meanwhile."""
        app = self.app
        self._making, self._ahead = True, []
        try:
            with app.batch_update():
                await app.switch_mode(mode)
                self._making = False
                ours = self._ahead[0] if self._ahead else None
                if ours is None or app.screen is not ours:
                    return False
                app.refresh_css(animate=False)  # styled now: its first show restyles nothing
                await app.switch_mode("home")
                return True
        finally:
            self._making = False
            self.made += self._ahead
            for screen in self._ahead:
                screen.made_ahead = False
                if screen.is_current:  # shown after all (something moved the app there): draw it whole
                    screen.draw()

    def _settled(self) -> bool:
        """Home on top, or the command palette over it, open and ready (behaviour 5)."""
        from textual.command import CommandPalette

        from tutor.ui.screens.home import HomeScreen

        top = self.app.screen
        return isinstance(top, HomeScreen) or (isinstance(top, CommandPalette) and top.has_class("-ready"))
