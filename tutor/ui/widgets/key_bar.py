"""The bottom bar: the keys that make sense on this screen now, in the learner's language, and while
a training run is going, a line above them with its step and ETA and the key that stops it.

One Static redrawn from the screen's active bindings. Textual's Footer rebuilds a widget per key
several times on every screen switch, which made going home and back take ~30 ms longer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from tutor.texts import say
from tutor.ui.bindings import label, own_bindings
from tutor.ui.screens import on_top
from tutor.ui.widgets.host import host_of

if TYPE_CHECKING:
    from textual.app import App
    from textual.binding import Binding

    from tutor.ui.messages import Training

STOP = "stop_training"  # the app's action (and binding id) that stops the training run


def duration(seconds: float) -> str:
    """m:ss, or XhMM from an hour on."""
    seconds = max(0, int(seconds))
    return (
        f"{seconds // 60}:{seconds % 60:02d}"
        if seconds < 3600
        else f"{seconds // 3600}h{seconds % 3600 // 60:02d}"
    )


def training_line(training: Training, lang: str) -> str:
    """Where the training job stands, in the learner's language: its steps in all and its time left."""
    from tutor.experiments.result import about  # only once a run is going: experiments are loaded

    title = say(f"exp.{training.experiment}.title", lang)
    if not training.total:
        if training.eta_s:  # timed, not started: the job's expected length
            return say("run.training_timed", lang, title=title, time=about(training.eta_s))
        return say("run.training_start", lang, title=title)
    values = {"done": training.done, "total": training.total, "eta": duration(training.eta_s or 0)}
    if training.runs > 1:  # the step and ETA first: a narrow bar cuts the runs' count, never them
        return say("run.training_job", lang, finished=training.finished, runs=training.runs, **values)
    return say(
        "run.training_step", lang, title=title, step=training.done, steps=training.total, eta=values["eta"]
    )


def stop_key(app: App) -> tuple[Binding | None, str]:
    """The app's binding that stops the training run, and its key as the learner types it."""
    binding = next((b for b in own_bindings(app) if b.id == STOP), None)
    return binding, app.get_key_display(binding) if binding is not None else ""


class KeyBar(Static):
    _keys: Text | None = None  # the keys line, rebuilt when the bindings, size or language change

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        if host_of(self) is not None:
            self.watch(self.app, "training", self._training_changed, init=False)
        self.redraw()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, screen) -> None:
        # also sent when this screen is shown again: the training line catches up then
        if self.is_attached and screen is self.screen:
            self.redraw()

    def _training_changed(self) -> None:
        # several times a second while training: only the top screen's bar, and only its first line
        if self.is_attached and on_top(self.screen):
            self._draw()

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        self._keys = None
        self._draw()

    def _draw(self) -> None:
        app = self.app
        accent = app.current_theme.accent or "yellow"
        host = host_of(self)
        lang = host.lang if host is not None else "en"
        width = self.size.width
        training = host.training if host is not None else None
        if self._keys is None:
            self._keys = self._keys_line(accent, lang, width)
        text = Text(no_wrap=True, overflow="ellipsis")
        if training is not None:
            text.append_text(self._training(training, lang, accent, stop_key(app)[0], width))
            text.append("\n")
        text.append_text(self._keys)
        height = 2 if training is not None else 1
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height
            for rack in self.screen.query("ToastRack"):  # toasts sit above the bar, never on its keys
                rack.styles.margin = (0, 0, height, 0)
        self.update(text)

    def _keys_line(self, accent: str, lang: str, width: int) -> Text:
        app = self.app
        text = Text(no_wrap=True, overflow="ellipsis")
        ends: list[int] = []  # where each key's entry ends: a narrow bar shows whole entries only
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            caption = label(binding, lang)
            if not binding.show or not caption or binding.action in seen:
                continue
            if getattr(self.screen, "key_hidden", lambda action: False)(binding.action):
                continue
            if binding.action == STOP:
                continue  # shown in the training line, while there is one
            seen.add(binding.action)
            style = f"bold {accent}" if active.enabled else "dim"
            text.append(f" {app.get_key_display(binding)} ", style=style)
            text.append(f"{caption} ", style="" if active.enabled else "dim")
            ends.append(len(text))
        text.append(" ^p ", style=f"bold {accent}")
        text.append(say("key.palette", lang))
        ends.append(len(text))
        if width and text.cell_len > width:
            fits = [end for end in ends if cell_len(text.plain[:end].rstrip()) <= width]
            text = text[: fits[-1]] if fits else text
        return text

    def _training(self, training: Training, lang: str, accent: str, stop, width: int) -> Text:
        """The training line: status (cut to fit) then the stop key, which always shows."""
        key = Text()
        if stop is not None:
            key.append(f" {self.app.get_key_display(stop)} ", style=f"bold {accent}")
            key.append(label(stop, lang))
        status = Text(f" {training_line(training, lang)}", style=f"bold {accent}")
        if width and status.cell_len + key.cell_len > width:
            status.truncate(max(width - key.cell_len - 1, 1), overflow="ellipsis")
            status.append(" ")
        return status + key
