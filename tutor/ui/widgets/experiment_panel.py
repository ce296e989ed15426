"""One experiment embedded in the lesson: parameters, Run, progress, results.

Every run takes one path, tutor.experiments.runner.run_async in an async worker: a quick
experiment runs in a thread, a long one (training) in a child process whose progress events
arrive on the event loop and move the progress bar and the live loss curve. Quick runs go side by
side with each other and with training; one training run at a time in the whole app, announced
to it (TrainingProgress) so that every screen shows its step and ETA and any screen can stop it.
Results and errors reach the widgets only through `on_worker_state_changed`, on the UI thread.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, ProgressBar, Static
from textual.worker import Worker, WorkerState

from tutor.content.schema import ExperimentRef
from tutor.experiments.registry import get_registry
from tutor.experiments.result import Msg, Series, SeriesPanel, about, words
from tutor.settings import PLOT_EVERY_S, TRAINING_GRACE_S, TRAINING_NICENESS
from tutor.texts import say
from tutor.ui.messages import Training, TrainingProgress
from tutor.ui.prose_text import ProseText
from tutor.ui.screens import on_top
from tutor.ui.widgets.host import host_of
from tutor.ui.widgets.key_bar import duration, stop_key
from tutor.ui.widgets.params_form import ParamsForm
from tutor.ui.widgets.params_toggle import ParamsToggle
from tutor.ui.widgets.result_view import SeriesPlot, panel_widgets

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from tutor.experiments.result import Result

QUICK, TRAINING = "run", "training"  # worker groups: quick runs, and the one training run
RUN_GROUPS = (QUICK, TRAINING)
LIVE_POINTS = 150  # points per curve in the live loss plot


def thin(xs: list[float], ys: list[float], most: int = LIVE_POINTS) -> tuple[list[float], list[float]]:
    """At most `most` evenly spread points of a curve, its last one kept: plotext's time grows with
    the points (1,000 a curve took ~36 ms a frame here, 100 ~14 ms), and the plot is ~70 columns."""
    if len(xs) <= most:
        return xs, ys
    keep = sorted({len(xs) * i // most for i in range(most)} | {len(xs) - 1})
    return [xs[i] for i in keep], [ys[i] for i in keep]


READY = ("run.ready", "run.ready_long", "run.ready_untimed")  # the idle statuses


def job_line(training: Training, lang: str) -> str:
    """The panel's status while a training job goes: one line for the job (its runs train side by side, so
    a run's own step would jump between them), its runs done and its steps in all, and the stored runs it
    reused; before its first step, its length as timed (or, until it is, as its size says)."""
    from tutor.experiments.result import about

    if training.total:
        line = say(
            "run.job",
            lang,
            finished=training.finished,
            runs=training.runs,
            done=training.done,
            total=training.total,
            eta=duration(training.eta_s or 0),
        )
    else:
        key = "run.estimate_rough" if training.rough else "run.estimate"
        line = say(key, lang, runs=training.runs, time=about(training.eta_s or 0))
    if training.stored:
        line += " · " + say("run.stored_reused", lang, stored=training.stored, runs=training.runs)
    return line


def training_workers(workers: Iterable[Worker]) -> list[Worker]:
    """The training run going on in the app, if any (a list of at most one)."""
    return [w for w in workers if w.group == TRAINING and not w.is_finished]


class ExperimentPanel(Vertical):
    def __init__(self, ref: ExperimentRef, lang: str, home, **kw) -> None:
        super().__init__(classes="experiment", **kw)
        self.ref = ref
        self.lang = lang
        self.home = home
        self.spec = get_registry().get(ref.name)
        self.form = ParamsForm(self.spec, ref.params, lang) if self.spec is not None else None
        self.result: Result | None = None
        self._shown_in: str | None = None  # the language the result's panels are drawn in
        self.last_error: str | None = None
        self._curves: dict[
            int, tuple[Any, list[float], list[float]]
        ] = {}  # run -> (its label, steps, losses)
        self._said: tuple[str, bool, Any, dict[str, Any]] = ("run.ready", False, "", {})  # see _say
        self._plotted_at = 0.0
        self._job: Training | None = (
            None  # where this panel's training job stands (one line for all its runs)
        )

    @property
    def running(self) -> bool:
        """This panel's own run (other panels' runs do not count)."""
        return any(w.node is self and w.group in RUN_GROUPS and not w.is_finished for w in self.workers)

    def compose(self) -> ComposeResult:
        # Few widgets until they are needed: every widget of a lesson is restyled each time the
        # learner comes back to it. The form is mounted when first opened, the results box with
        # the first result, the progress bar and the live curve when training first starts.
        yield Static(classes="exp-summary")
        if self.spec is not None:
            yield ParamsToggle(say("run.params", self.lang), classes="exp-params")
        yield Static(classes="exp-status")

    def on_mount(self) -> None:
        self.refresh_content(self.lang)

    async def _open_form(self, focus: bool = False) -> None:
        """Show the form once its fields are there; with `focus`, with the focus in its first field in
        the same step. The form is hidden while its fields are mounted (a frame or more under load):
        shown before the focus was in it, what the learner typed at the sight of it went to the lesson."""
        assert self.form is not None  # the parameters toggle, and so this, only with a form
        if not self.form.is_attached:
            self.form.display = False
            await self.mount(self.form, after=self.query_one(ParamsToggle))
        await self.form.open()
        self.form.display = True
        if focus and (first := self.form.first_field()) is not None:
            # at once, not by Widget.focus (a callback later); not laid out yet: the form is scrolled to below
            self.screen.set_focus(first, scroll_visible=False)
        self.query_one(ParamsToggle).expanded = True

    async def show_params(self, focus: bool = False) -> None:
        """Expand the parameter form (its inputs are created the first time) and bring it into view once
        it is laid out; with `focus`, into its first field (the focus is never in a field out of sight)."""
        await self._open_form(focus)
        self.call_after_refresh(self._form_in_view)

    def _form_in_view(self) -> None:
        """The form in view, and the rest of the panel down to its status where the screen has room
        (the form's top first when it is taller than the view)."""
        assert self.form is not None  # called once the form opened
        if not (self.form.is_attached and self.form.display):
            return
        status = self.query_one(".exp-status")
        status.scroll_visible(animate=False, immediate=True)
        self.form.scroll_visible(animate=False, immediate=True, top=False)
        self.query_one(ParamsToggle).scroll_visible(animate=False, immediate=True)

    async def on_params_toggle_toggled(self, event: ParamsToggle.Toggled) -> None:
        event.stop()
        assert self.form is not None  # the toggle exists only with a form
        if event.toggle.expanded:
            await self._open_form()
        elif self.form.is_attached:
            focused = self.screen.focused
            if focused is not None and self.form in focused.ancestors:  # keys never go to a hidden field
                event.toggle.focus()
            self.form.display = False

    def refresh_content(self, lang: str) -> None:
        self.lang = lang
        if self.spec is None:
            self.border_title = self.ref.name
            self._status(
                say("err.experiment.unknown", lang, name=self.ref.name, names=list(get_registry())),
                error=True,
            )
            return
        self.border_title = f"⚗ {say(f'exp.{self.spec.name}.title', lang)}"
        self.border_subtitle = self.ref.name
        summary = ProseText(say(f"exp.{self.spec.name}.summary", lang))  # Chinese breaks as prose does
        self.query_one(".exp-summary", Static).update(summary)
        self._title_params()
        if not self.running:  # a running one says its progress in the new words at the next event
            if self._said[0] in READY:
                self._ready()
            key, error, detail, values = self._said
            self._say(key, error, detail, **values)
            if self.result is not None and self._shown_in != lang:
                self._show_panels()

    def _ready(self) -> None:
        """The idle status: `r` runs; for a training job, how many runs and how long they will take
        at the pace the learner's kept runs had here (measured as the job starts when there are none)."""
        from tutor.experiments.params import TrainCompareParams

        assert self.spec is not None and self.form is not None  # a known experiment's panel
        params = self.form.values() if self.spec.long else None
        if not isinstance(params, TrainCompareParams):
            self._said = ("run.ready", False, "", {})
            return
        from tutor.experiments.course.training import expected_seconds, planned_runs

        seconds = expected_seconds(params, self._kept())
        runs = len(planned_runs(params))
        if seconds is None:
            self._said = ("run.ready_untimed", False, "", {"runs": runs})
        else:
            self._said = ("run.ready_long", False, "", {"runs": runs, "time": about(seconds)})

    def _kept(self) -> list[tuple[dict[str, Any], float | None, int]]:
        """The learner's finished training runs, as (config, seconds, steps) each."""
        host = host_of(self)
        store = host.tutor.store if host is not None else None
        try:
            return [
                (r.config, r.seconds, r.config.get("train", {}).get("steps"))
                for r in (store.training_runs(status="done") if store is not None else [])
            ]
        except Exception:  # an unreadable store only loses the estimate
            return []

    def on_select_changed(self, _event) -> None:  # a drop-down of the form: as for a typed value
        self.on_input_changed(None)

    def on_input_changed(self, _event: Input.Changed | None) -> None:
        if not self.running and self._said[0] in READY:
            self._ready()
            self._say(*self._said[:3], **self._said[3])

    def _title_params(self) -> None:
        assert self.form is not None  # the parameters' title is a known experiment's
        changed = self.form.summary()
        self.query_one(ParamsToggle).set_title(
            say("run.params", self.lang) + (f": {changed}" if changed else "")
        )
        self.form.set_lang(self.lang)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one(".exp-status", Static)
        status.update(ProseText(text))
        status.set_class(error, "-error")

    def _say(self, key: str, error: bool = False, detail: Any = "", **values: Any) -> None:
        """A status in the learner's words, kept so a language switch can say it again (`detail`:
        text, or an error worded in the language)."""
        self._said = (key, error, detail, values)
        text = say(key, self.lang, **values)
        detail = detail.in_lang(self.lang) if hasattr(detail, "in_lang") else detail
        self._status(f"{text}: {detail}" if detail else text, error)

    # --- running ---------------------------------------------------------------------------

    def run(self) -> bool:
        """Start a run with the form's parameters; False (and a message) if it cannot start."""
        if self.spec is None:
            return False
        if self.running:
            self.notify(say("run.busy", self.lang))
            return False
        if self.spec.long and training_workers(self.workers):
            training = host.training if (host := host_of(self)) is not None else None
            title = say(f"exp.{training.experiment}.title", self.lang) if training else ""
            key = stop_key(self.app)[1]
            self.notify(say("run.training_busy", self.lang, title=title, key=key), severity="warning")
            return False
        assert self.form is not None  # only a known experiment runs
        params = self.form.values()
        if params is None:
            self.query_one(ParamsToggle).expanded = True  # the form is open: only it can be wrong
            self._say("run.bad_params", error=True)
            return False
        served = host.served if (host := host_of(self)) is not None else None
        if served is not None:  # a served session: the learner's caps bound the form too
            from tutor.serve.budget import over_cap

            if (why := over_cap(self.ref.name, params, served)) is not None:
                self.query_one(ParamsToggle).expanded = True
                self._say(why.key, error=True, **why.args)
                return False
        self.last_error = None
        self._title_params()
        # the last result stays in view, marked as old, until the new one replaces it
        for box in self.query_children(".exp-results"):
            box.add_class("-stale")
        if self.spec.long:
            self._curves.clear()
            bars = self.query(".exp-progress").results(ProgressBar)
            if bar := next(bars, None):
                bar.update(total=None, progress=0)
                bar.display = True
                self.query_one(".live", SeriesPlot).display = True
            else:  # the first run: only training reports progress
                self.mount(
                    ProgressBar(show_eta=False, classes="exp-progress"), after=self.query_one(".exp-status")
                )
                self.mount(SeriesPlot(classes="plot live"), after=self.query_one(".exp-progress"))
            self._say("run.running")
            self._job = None
            self.post_message(TrainingProgress(Training(self.ref.name)))
            self._announce(params)
        else:
            warm = "torch" in sys.modules or served is not None  # served: the server's process has it
            self._say("run.running" if warm else "run.loading_torch")
        self.run_worker(
            self._run(params),
            name=self.ref.name,
            group=TRAINING if self.spec.long else QUICK,
            exclusive=True,
            exit_on_error=False,
        )
        self.screen.refresh_bindings()  # the lesson's cancel key shows while something runs
        return True

    def _announce(self, params) -> None:
        """A training job's length as its size and the learner's kept runs say it (training.rough_estimate),
        said here as `r` is pressed: the job's child says it too once it has started, which took 4-7 s on a
        busy machine (it is niced), and without the kept runs; its workers' timing follows."""
        from tutor.experiments.params import TrainCompareParams

        if isinstance(params, TrainCompareParams):
            from tutor.experiments.course.training import rough_estimate

            self._on_event(rough_estimate(params, self._kept()))

    def cancel(self) -> bool:
        return bool(self.workers.cancel_node(self))

    async def _run(self, params) -> Result:
        served = host.served if (host := host_of(self)) is not None else None
        if served is not None:  # forked by the server, in this learner's bounds
            from tutor.serve.session import run_experiment

            return await run_experiment(
                served,
                self.ref.name,
                params,
                self._on_event,
                home=self.home,
                niceness=TRAINING_NICENESS,
                grace_s=TRAINING_GRACE_S,
            )
        from tutor.experiments.runner import run_async

        return await run_async(
            self.ref.name,
            params,
            self._on_event,
            home=self.home,
            grace_s=TRAINING_GRACE_S,
            niceness=TRAINING_NICENESS,
        )

    def _on_event(self, event: dict[str, Any]) -> None:
        """Progress from the child, or what a quick experiment streams; runs on the event loop."""
        if event.get("event") == "writing":  # the poem so far, as the model writes it
            self._status(str(event.get("text", "")))
            return
        if event.get("event") == "measuring":  # a quick experiment's long measurement: its length, its pace
            from tutor.experiments.jobs import measuring_line

            self._status(measuring_line(event, self.lang))
            return
        kind = event.get("event")
        if kind == "estimate" and event.get("rough") and self._job is not None:
            return  # the child's first word: this panel said it at `r`, knowing the learner's kept runs too
        if kind == "estimate":  # the job's length: at `r` from its size, then as timed before its first step
            runs, stored = int(event.get("runs", 1)), int(event.get("stored", 0))
            self._job = Training(
                self.ref.name,
                runs,
                stored,
                stored,
                eta_s=float(event.get("seconds") or 0),
                rough=bool(event.get("rough")),
            )
        elif kind == "progress":
            job = self._job or Training(self.ref.name, int(event.get("runs", 1)))
            self._job = replace(
                job,
                runs=int(event.get("runs", job.runs)),
                finished=max(job.finished, int(event.get("finished", job.finished))),
                done=max(job.done, int(event.get("done", 0))),
                total=int(event.get("total") or job.total),
                eta_s=float(event.get("eta_s") or 0),
            )
        else:
            return
        self.post_message(TrainingProgress(self._job))
        self._status(job_line(self._job, self.lang))
        if kind != "progress":
            return
        for bar in self.query(".exp-progress").results(ProgressBar):
            bar.update(total=self._job.total, progress=self._job.done)
        run, step, steps = int(event.get("run", 1)), int(event.get("step", 0)), int(event.get("steps", 1))
        loss = event.get("loss")
        if isinstance(loss, float):
            _, xs, ys = self._curves.setdefault(run, (event.get("label"), [], []))
            xs.append(step)
            ys.append(loss)
            now = time.monotonic()
            if not on_top(self.screen):
                return  # plotext is costly (~30 ms a frame): redraw only what the learner can see
            if now - self._plotted_at >= PLOT_EVERY_S or step >= steps:
                self._plotted_at = now
                self._plot_live()

    def _plot_live(self) -> None:
        panel = SeriesPanel(
            title=Msg("exp.train-compare.live"),
            x_label=Msg("exp.train-compare.step"),
            y_label=Msg("exp.train-compare.loss"),
            series=[
                Series(name=words(label, self.lang), x=list(x), y=list(y))
                for label, xs, ys in self._curves.values()
                for x, y in [thin(xs, ys)]
            ],
        )
        plot = self.query_one(".live", SeriesPlot)
        plot.lang = self.lang
        plot.show(panel)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group not in RUN_GROUPS or worker.node is not self:
            return
        event.stop()
        if event.state in (WorkerState.SUCCESS, WorkerState.CANCELLED, WorkerState.ERROR):
            if worker.group == TRAINING:
                self.post_message(TrainingProgress(None))
            self.screen.refresh_bindings()
        if event.state == WorkerState.SUCCESS:
            assert worker.result is not None  # a run returns its Result
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
        # quick runs just say done (their time is mostly the first torch import, not the experiment);
        # said once the results are there to see: "done" above an empty box read as nothing to show
        assert self.spec is not None  # only a known experiment runs
        if self.spec.long:
            said = functools.partial(self._say, "run.done", s=result.duration_s)
        else:
            said = functools.partial(self._say, "run.finished")
        mounted = self._show_panels()

        async def when_shown() -> None:
            await mounted
            if self.result is result and not self.running:  # not a new run started meanwhile
                self.call_after_refresh(said)

        self.call_later(when_shown)

    def _show_panels(self) -> AwaitMount:
        """The result's panels in the current language (again after a language switch)."""
        self._shown_in = self.lang
        assert self.result is not None  # drawn once there is one
        widgets = panel_widgets(self.result, self.lang)
        box = next(iter(self.query_children(".exp-results")), None)
        if box is None:  # the first result: the box comes with it
            return self.mount(Vertical(*widgets, classes="exp-results"))
        box.remove_class("-stale")
        box.remove_children()
        return box.mount_all(widgets)

    def _show_error(self, error: BaseException | None) -> None:
        from tutor.experiments.errors import Cancelled, ExperimentError

        if isinstance(error, Cancelled):
            self._say("run.cancelled")
            return
        if isinstance(error, ExperimentError):
            detail: str | ExperimentError = error
            message = error.in_lang(self.lang)
        else:
            detail = message = f"{type(error).__name__}: {error}"
        self.last_error = message
        self._say("run.failed", error=True, detail=detail)
        self.notify(message, title=say("run.failed", self.lang), severity="error", timeout=8)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run()
