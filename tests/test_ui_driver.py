"""tutor/ui/driver.py leans on how Textual's Linux driver leaves the app: these fail when Textual
changes underneath it (then look again at what QuickExitDriver.disable_input repeats)."""

from __future__ import annotations

import ast
import inspect
import textwrap

from textual.drivers.linux_driver import LinuxDriver

from tutor.ui.driver import QuickExitDriver


def _calls(function) -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return [ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)]


def test_textuals_disable_input_is_still_what_the_quick_exit_driver_repeats_plus_the_join():
    textual = _calls(LinuxDriver.disable_input)
    ours = _calls(QuickExitDriver.disable_input)
    assert "self._key_thread.join" in textual  # the 200 ms wait at exit that QuickExitDriver leaves out
    for step in ("signal.signal", "self._disable_mouse_support", "self.exit_event.set", "termios.tcflush"):
        assert step in textual and step in ours, step
    assert "self._key_thread.join" not in ours


def test_the_quick_exit_driver_still_overrides_methods_textual_has():
    for name in ("disable_input", "suspend_application_mode"):
        assert callable(getattr(LinuxDriver, name)) and name in vars(QuickExitDriver)
