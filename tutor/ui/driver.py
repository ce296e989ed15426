"""Textual's Linux driver, with an input thread that ends at once when the app exits.

Textual 8.2.8's input thread waits for keys in 0.1 s `select` calls, and on exit it is joined after
one more 0.1 s `select` for keys still in flight: quitting held the terminal for 200 ms, whatever
the app itself had to do (benchmarks/bench_responsiveness.py measured it). Here the thread also
watches a pipe that `disable_input` writes to, so it wakes at once; what is already waiting on the
terminal is still read (a `select` that does not wait), as Textual does.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver


class QuickExitDriver(LinuxDriver):
    _wake: tuple[int, int] | None = None

    def start_application_mode(self) -> None:
        self._wake = os.pipe()
        super().start_application_mode()  # starts the input thread

    def disable_input(self) -> None:
        if self._wake is not None and not self.exit_event.is_set():
            os.write(self._wake[1], b"x")  # the thread's select returns now; LinuxDriver joins it
        super().disable_input()

    def run_input_thread(self) -> None:
        """LinuxDriver.run_input_thread with the wake-up pipe beside the terminal."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        wake = self._wake[0] if self._wake is not None else None
        if wake is not None:
            selector.register(wake, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        woken = False

        def process(events: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            nonlocal woken
            for last, (key, mask) in loop_last(events):
                if key.fd == wake:
                    woken = True
                    continue
                if not mask & selectors.EVENT_READ:
                    continue
                data = decode(os.read(fileno, 1024 * 4), final=final and last)
                if not data:
                    break
                for event in parser.feed(data):
                    self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not (woken or self.exit_event.is_set()):
                process(selector.select(0.1))
            selector.unregister(fileno)
            process(selector.select(0), final=True)
        finally:
            selector.close()
            if self._wake is not None:
                for fd in self._wake:
                    os.close(fd)
                self._wake = None
            try:
                for _ in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
