"""Textual's Linux driver, except that leaving the app does not wait for the input thread.

Textual 8.2.8's `disable_input` joins the input thread, which notices only after its current 0.1 s
`select` and one more 0.1 s `select` for keys in flight: 200 ms of every exit, whatever the app
itself had to do (benchmarks/bench_responsiveness.py measured it). Here, when the app ends, the
thread is told to stop and left to end on its own: the process ends first (tutor.commands.app).
Suspending for the editor (`e` in the lab) still waits for it, so that the editor gets every key.
"""

from __future__ import annotations

import signal
import termios

from textual.drivers.linux_driver import LinuxDriver


class QuickExitDriver(LinuxDriver):
    _suspending = False

    def suspend_application_mode(self) -> None:
        self._suspending = True
        try:
            super().suspend_application_mode()
        finally:
            self._suspending = False

    def disable_input(self) -> None:
        if self._suspending or self.exit_event.is_set():
            super().disable_input()  # (at exit, the second call: nothing left to do)
            return
        # LinuxDriver.disable_input without the join (and the event stays set: the thread reads it)
        signal.signal(signal.SIGWINCH, signal.SIG_DFL)
        self._disable_mouse_support()
        self.exit_event.set()
        try:
            termios.tcflush(self.fileno, termios.TCIFLUSH)
        except termios.error:
            pass
