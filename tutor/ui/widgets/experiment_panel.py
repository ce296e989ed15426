"""One experiment embedded in the lesson: parameters, Run, progress, results.

Quick experiments run in a thread worker that passes `is_cancelled` as the experiment's stop
check; long ones (training) run in a child process from an async worker and stream progress
events, which arrive on the event loop and move the progress bar and the live loss curve.
Results and errors reach the widgets only through `on_worker_state_changed`, on the UI thread.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Input, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from tutor.content.schema import ExperimentRef
from tutor.experiments.registry import get_registry
from tutor.experiments.result import Msg, Series, SeriesPanel, words
from tutor.settings import PLOT_EVERY_S, TRAINING_GRACE_S, TRAINING_NICENESS
from tutor.texts import say
from tutor.ui.widgets.params_form import ParamsForm
from tutor.ui.widgets.result_view import SeriesPlot, panel_widgets

if TYPE_CHECKING:
    from tutor.experiments.result import Result


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return (
        f"{seconds // 60}:{seconds % 60:02d}"
        if seconds < 3600
        else f"{seconds // 3600}h{seconds % 3600 // 60:02d}"
    )


class ExperimentPanel(Vertical):
    def __init__(self, ref: ExperimentRef, lang: str, home, **kw) -> None:
        super().__init__(classes="experiment", **kw)
        self.ref = ref
        self.lang = lang
        self.home = home
        self.spec = get_registry().get(ref.name)
        self.result: Result | None = None
        self._shown_in: str | None = None  # the language the result's panels are drawn in
        self.last_error: str | None = None
        self._curves: dict[
            int, tuple[Any, list[float], list[float]]
        ] = {}  # run -> (its label, steps, losses)
        self._said: tuple[str, bool, str, dict[str, Any]] = ("run.ready", False, "", {})  # see _say
        self._plotted_at = 0.0

    @property
    def running(self) -> bool:
        return any(w.group == "run" and not w.is_finished for w in self.workers)

    def compose(self) -> ComposeResult:
        yield Static(classes="exp-summary")
        if self.spec is not None:
            with Collapsible(title=say("run.params", self.lang), collapsed=True, classes="exp-params"):
                yield ParamsForm(self.spec, self.ref.params)
        yield Static(classes="exp-status")
        if self.spec is not None and self.spec.long:  # only training reports progress
            yield ProgressBar(show_eta=False, classes="exp-progress")
            yield SeriesPlot(classes="plot live")
        yield Vertical(classes="exp-results")

    def on_mount(self) -> None:
        for widget in self.query(".exp-progress, .live"):
            widget.display = False
        self.refresh_content(self.lang)

    async def show_params(self) -> None:
        """Expand the parameter form (its inputs are created the first time)."""
        await self.query_one(ParamsForm).open()
        self.query_one(Collapsible).collapsed = False

    async def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        event.stop()
        await self.query_one(ParamsForm).open()

    def refresh_content(self, lang: str) -> None:
        self.lang = lang
        if self.spec is None:
            self.border_title = self.ref.name
            self._status(f"unknown experiment {self.ref.name!r}", error=True)
            return
        self.border_title = f"⚗ {say(f'exp.{self.spec.name}.title', lang)}"
        self.border_subtitle = self.ref.name
        self.query_one(".exp-summary", Static).update(Text(say(f"exp.{self.spec.name}.summary", lang)))
        form = self.query_one(ParamsForm)
        changed = form.summary()
        self.query_one(Collapsible).title = say("run.params", lang) + (f": {changed}" if changed else "")
        if not self.running:  # a running one says its progress in the new words at the next event
            key, error, detail, values = self._said
            self._say(key, error, detail, **values)
            if self.result is not None and self._shown_in != lang:
                self._show_panels()

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one(".exp-status", Static)
        status.update(Text(text))
        status.set_class(error, "-error")

    def _say(self, key: str, error: bool = False, detail: str = "", **values: Any) -> None:
        """A status in the learner's words, kept so a language switch can say it again."""
        self._said = (key, error, detail, values)
        text = say(key, self.lang, **values)
        self._status(f"{text}: {detail}" if detail else text, error)

    # --- running ---------------------------------------------------------------------------

    def run(self) -> bool:
        """Start a run with the form's parameters; False (and a message) if it cannot start."""
        if self.spec is None:
            return False
        if self.running:
            self.notify(say("run.busy", self.lang))
            return False
        params = self.query_one(ParamsForm).values()
        if params is None:
            self.query_one(Collapsible).collapsed = False  # the form is open: only it can be wrong
            self._say("run.bad_params", error=True)
            return False
        self.last_error = None
        self.query_one(".exp-results").remove_children()
        if self.spec.long:
            self._start_long(params)
        else:
            first_torch = "torch" not in sys.modules
            self._say("run.loading_torch" if first_torch else "run.running")
            self._run_quick(params)
        return True

    def cancel(self) -> bool:
        return bool(self.workers.cancel_group(self, "run"))

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _run_quick(self, params) -> Result:
        from tutor.experiments.runner import run_quick

        worker = get_current_worker()
        return run_quick(self.ref.name, params, should_stop=lambda: worker.is_cancelled)

    def _start_long(self, params) -> None:
        self._curves.clear()
        bar = self.query_one(".exp-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        live = self.query_one(".live", SeriesPlot)
        live.display = True
        self._say("run.running")
        self._run_long(params)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _run_long(self, params) -> Result:
        from tutor.experiments.runner import run_in_child

        return await run_in_child(
            self.ref.name,
            params,
            on_event=self._on_event,
            home=self.home,
            grace_s=TRAINING_GRACE_S,
            niceness=TRAINING_NICENESS,
        )

    def _on_event(self, event: dict[str, Any]) -> None:
        """Progress from the child; runs on the event loop (the async worker reads the pipe)."""
        if event.get("event") != "progress":
            return
        runs, steps = int(event.get("runs", 1)), int(event.get("steps", 1))
        run, step = int(event.get("run", 1)), int(event.get("step", 0))
        bar = self.query_one(".exp-progress", ProgressBar)
        bar.update(total=runs * steps, progress=(run - 1) * steps + step)
        loss = event.get("loss")
        self._status(
            say(
                "run.eta",
                self.lang,
                run=run,
                runs=runs,
                label=words(event.get("label"), self.lang),
                step=step,
                steps=steps,
                loss=f"{loss:.3f}" if isinstance(loss, float) else "—",
                eta=_duration(float(event.get("eta_s") or 0)),
            )
        )
        if isinstance(loss, float):
            _, xs, ys = self._curves.setdefault(run, (event.get("label"), [], []))
            xs.append(step)
            ys.append(loss)
            now = time.monotonic()
            if not self.screen.is_current:
                return  # plotext is costly: redraw only what the learner can see
            if now - self._plotted_at >= PLOT_EVERY_S or step >= steps:
                self._plotted_at = now
                self._plot_live()

    def _plot_live(self) -> None:
        panel = SeriesPanel(
            title=Msg("exp.train-compare.live"),
            x_label=Msg("exp.train-compare.step"),
            y_label=Msg("exp.train-compare.loss"),
            series=[
                Series(name=words(label, self.lang), x=xs, y=ys) for label, xs, ys in self._curves.values()
            ],
        )
        plot = self.query_one(".live", SeriesPlot)
        plot.lang = self.lang
        plot.show(panel)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "run" or worker.node is not self:
            return
        event.stop()
        if event.state == WorkerState.SUCCESS:
            self._show(worker.result)
        elif event.state == WorkerState.CANCELLED:
            self._finish_bar()
            self._say("run.cancelled")
        elif event.state == WorkerState.ERROR:
            self._finish_bar()
            self._show_error(worker.error)

    def _finish_bar(self) -> None:
        for bar in self.query(".exp-progress"):
            bar.display = False

    def _show(self, result: Result) -> None:
        self.result = result
        self._finish_bar()
        for live in self.query(".live"):
            live.display = False
        # quick runs just say done (their time is mostly the first torch import, not the experiment)
        if self.spec.long:
            self._say("run.done", s=result.duration_s)
        else:
            self._say("run.finished")
        self._show_panels()

    def _show_panels(self) -> None:
        """The result's panels in the current language (again after a language switch)."""
        self._shown_in = self.lang
        box = self.query_one(".exp-results")
        box.remove_children()
        box.mount_all(panel_widgets(self.result, self.lang))

    def _show_error(self, error: BaseException | None) -> None:
        from tutor.experiments.errors import Cancelled, ExperimentError

        if isinstance(error, Cancelled):
            self._say("run.cancelled")
            return
        if isinstance(error, ExperimentError):
            message = str(error)
        else:
            message = f"{type(error).__name__}: {error}"
        self.last_error = message
        self._say("run.failed", error=True, detail=message)
        self.notify(message, title=say("run.failed", self.lang), severity="error", timeout=8)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run()
