"""The Textual app: four modes (home, lesson, quiz, lab), each with its own screen stack.

The first screen appears before the course is loaded: loading (pydantic, SQLite) runs in a worker
and sets `course_loaded`. The language is the reactive `lang`; screens watch it, `theme` and
`course_loaded` and redraw themselves (screens/base.py). Screens ask for navigation and language
changes with Messages (messages.py), handled here. Only the home screen is imported up front; the other
screens (Markdown, plotext, pydantic models) are imported when first opened. Torch is never
imported here; experiments import it in their worker the first time one runs.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast
from weakref import WeakKeyDictionary

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.reactive import var
from textual.screen import Screen

from tutor.i18n import LANG_NAMES
from tutor.settings import LOAD_DELAY_S, MODE_SWITCH_HOLD_S, QUIT_GRACE_S
from tutor.texts import say
from tutor.ui.first_frame import ScreensAhead, restyle_home
from tutor.ui.messages import (
    ContinueLast,
    OpenExercise,
    OpenLesson,
    OpenQuiz,
    SetLanguage,
    Training,
    TrainingProgress,
)
from tutor.ui.palette import CourseCommands
from tutor.ui.screens.home import HomeScreen
from tutor.ui.state import Tutor, load, saved_index
from tutor.ui.widgets.key_bar import training_line

if TYPE_CHECKING:
    from textual.driver import Driver

    from tutor.grading.judges import WarmJudge
    from tutor.progress.glance import Step
    from tutor.progress.store import Store
    from tutor.serve.session import Served
    from tutor.texts import Said
    from tutor.ui.screens.lesson import LessonScreen
    from tutor.ui.widgets.code_editor import CodeEditor
    from tutor.ui.widgets.host import Host

DARK, LIGHT = "textual-dark", "textual-light"
SCREEN_MODULES = (
    "tutor.ui.screens.lesson",
    "tutor.quiz.session",
    "tutor.ui.screens.quiz",
    "tutor.ui.screens.exercise",
    "tutor.ui.grading_client",
    "tutor.ui.screens.help",
    "tutor.ui.screens.exercises",
)


def _import_screens() -> None:
    from importlib import import_module

    for name in SCREEN_MODULES:
        import_module(name)


class TutorApp(App[int]):
    CSS_PATH = Path(__file__).with_name("tutor.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = "Attention Tutor"
    # The first screen is home itself, the default screen: tutor.ui.first_frame, behaviour 1
    DEFAULT_MODE = "home"
    COMMANDS = App.COMMANDS | {CourseCommands}
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="help"),
        Binding("f1", "go('home')", "Home", id="home", show=False),
        Binding("f2", "go('lesson')", "Lesson", id="lesson", show=False),
        Binding("f3", "go('quiz')", "Quiz", id="quiz", show=False),
        Binding("f4", "go('lab')", "Exercise", id="lab", show=False),
        Binding("f5", "cycle_lang", "Language", id="lang"),
        Binding("f6", "toggle_theme", "Light/dark", id="theme", show=False),
        Binding("f7", "stop_training", "Stop training", id="stop_training"),  # shown while one runs
        Binding("f8", "exercises", "Exercises", id="exercises", show=False),  # the exercise list
        Binding("n", "next_step", "Next step", id="next_step", show=False),  # where a next step shows
        Binding("ctrl+q", "quit", "Quit", id="quit", show=False, priority=True),
    ]

    # keys that act at once even while a screen opens (navigate holds the others for it): quitting
    PASS_KEYS = frozenset(b.key for b in BINDINGS if isinstance(b, Binding) and b.priority)

    lang: var[str] = var("en")  # the learner's language; screens redraw when it changes
    course_loaded: var[bool] = var(False)  # set once the course and the store are open
    training: var[Training | None] = var(None)  # the one training run, wherever it was started

    def __init__(self, lang: str, lessons_dir: Path, home: Path, served: Served | None = None) -> None:
        super().__init__()
        self.tutor = Tutor(lessons_dir=Path(lessons_dir), home=Path(home), lang=lang)
        # a served session (tutor.serve.session.Served): its grades' judges and its experiments are forked
        # by the server, in the learner's bounds; no screenshot (nothing to save it to); paths are the home's
        self.served = served
        if served is not None:
            from tutor.serve.session import RelayJudge

            # a stand-in: judge(), close() and server.alive, as a WarmJudge has them
            self.tutor._warm = cast("WarmJudge", RelayJudge(served.relay))
        self.tutor.index = saved_index(self.tutor.lessons_dir)  # home lists these at once
        self.set_reactive(TutorApp.lang, lang)  # the starting language: nothing to redraw yet
        self.current_lesson: str | None = None
        self.current_exercise: str | None = None
        self.course_ready = asyncio.Event()
        # what n does, by screen: the step its next-step line shows (tutor.ui.widgets.next_step)
        self._next_steps: WeakKeyDictionary[Screen, Step] = WeakKeyDictionary()
        self._quit_confirmed = False  # the learner said to quit although a training run goes
        self._discard_confirmed = False  # ... although the lab's editor holds text not saved
        self.ahead = ScreensAhead(self)  # the quiz's and the lab's first screens, made behind home
        self._held: list[events.Key] | None = None  # keys typed while a screen opens (navigate), for it
        self.add_mode("lesson", self._lesson_base)  # type: ignore[arg-type]  # a screen's name: Textual's _init_mode takes it; add_mode's type does not say so
        self.add_mode("quiz", self._quiz_base)
        self.add_mode("lab", self._lab_base)  # type: ignore[arg-type]  # the same: a Screen or a screen's name

    # --- start-up ------------------------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        """Textual's own driver, but on Linux one whose input thread ends at once on exit
        (tutor.ui.driver: Textual's waited 200 ms for it)."""
        from textual.drivers.linux_driver import LinuxDriver

        driver = super().get_driver_class()
        if driver is LinuxDriver:
            from tutor.ui.driver import QuickExitDriver

            return QuickExitDriver
        return driver

    def shown_path(self, path: Path) -> str:
        """A learner's file as the screen names it: in a served session by its path inside the home
        (`workspace/rope/rope.py`: the server's folders are none of the learner's business)."""
        if self.served is not None and Path(path).is_relative_to(self.tutor.home):
            return str(Path(path).relative_to(self.tutor.home))
        return str(path)

    def get_default_screen(self) -> Screen:
        return HomeScreen()

    def delay_update(self, delay: float = 0.05) -> None:
        """Held for MODE_SWITCH_HOLD_S, not Textual's 50 ms: tutor.ui.first_frame, behaviour 2."""
        super().delay_update(min(delay, MODE_SWITCH_HOLD_S))

    def on_mount(self) -> None:
        self.add_mode("home", HomeScreen)  # its stack exists already: see DEFAULT_MODE
        self.ahead.watch_modes()
        self.theme = DARK

    def on_ready(self) -> None:
        # Load once the first frame is out, so the loader thread (pydantic, SQLite, holding the GIL
        # most of the time) cannot delay it.
        self.set_timer(LOAD_DELAY_S, self.load_course)

    @work(exclusive=True, group="load")
    async def load_course(self) -> None:
        loaded = await asyncio.to_thread(load, self.tutor.lessons_dir, self.tutor.home, self.tutor.held)
        self.tutor.course, self.tutor.store, self.tutor.error = loaded.course, loaded.store, loaded.error
        self.tutor.on_notice = self._store_notice  # e.g. its file deleted and written back
        if loaded.course is not None:
            from tutor.content.index import index_of

            self.tutor.index = index_of(loaded.course)
        else:
            self.tutor.index = None
        if self.tutor.lessons:
            self.current_lesson = self.tutor.lessons[0].id
            last = self._last_location()
            if last.get("lesson") and self.tutor.lesson(last["lesson"]):
                self.current_lesson = last["lesson"]
                self.tutor.where = dict(last)
        for notice in loaded.notices:
            self.notify(notice.in_lang(self.lang), severity="warning", timeout=10)
        # The other screens' code (Markdown, plotext, the quiz's scheduler, grading): imported now, in
        # a thread, not at the learner's first F2/F3/F4 (a few hundred ms there, while a run trains).
        await asyncio.to_thread(_import_screens)
        # The quiz's and the lab's first screens, made behind home before anyone is told the course is
        # there (in the app's message loop: ScreensAhead.prepare says why)
        prepared = asyncio.Event()
        self.call_later(self.ahead.prepare_then, prepared)
        await prepared.wait()
        self.course_ready.set()
        self.course_loaded = True
        for (
            screen
        ) in self.ahead.made:  # drawn again for the loaded course, behind home: a first show only shows
            screen.draw()
        restyle_home(self)
        # The course, pydantic and Textual make a large, long-lived heap: freezing it keeps the
        # garbage collector's full passes (tens of ms, at random key presses) short from here on.
        gc.freeze()

    def on_unmount(self) -> None:
        self.tutor.close()

    def _store_notice(self, notice: Said) -> None:
        """What the store says after a write (called in its writer thread), as a toast that stays a while."""
        self.call_from_thread(self.notify, notice.in_lang(self.lang), severity="warning", timeout=20)

    def _last_location(self) -> dict[str, str]:
        """Where the learner was: this session's last place (its write may still be queued), else
        the store's from an earlier one."""
        if self.tutor.where:
            return dict(self.tutor.where)
        try:
            return (self.tutor.store.last_location() if self.tutor.store else None) or {}
        except Exception:  # an unreadable store only loses "continue"
            return {}

    # --- screens -------------------------------------------------------------------------

    def _lesson_screen_name(self, lesson_id: str | None) -> str:
        name = f"lesson:{lesson_id or '-'}"
        if not self.is_screen_installed(name):
            from tutor.ui.screens.lesson import LessonScreen

            self.install_screen(LessonScreen(lesson_id), name)
        return name

    def _lesson_base(self) -> str:
        return self._lesson_screen_name(self.current_lesson)

    def _exercise_screen_name(self, exercise_id: str) -> str:
        name = f"lab:{exercise_id}"
        if not self.is_screen_installed(name):
            from tutor.ui.screens.exercise import ExerciseScreen

            self.install_screen(ExerciseScreen(exercise_id), name)
        return name

    def _quiz_base(self) -> Screen:
        from tutor.ui.screens.quiz import QuizScreen

        return self.ahead.mark(QuizScreen.for_review(self.tutor))

    def _lab_base(self) -> Screen | str:
        from tutor.ui.screens.exercise import NoExerciseScreen

        if self.current_exercise is None:
            pair = next(iter(self.tutor.exercises()), None)
            if pair is None:
                return self.ahead.mark(NoExerciseScreen())
            self.current_exercise = pair[1].id
        name = self._exercise_screen_name(self.current_exercise)
        from tutor.ui.screens.base import TutorScreen

        screen = self.get_screen(name)
        assert isinstance(
            screen, TutorScreen
        )  # the lab's screens are ours (_exercise_screen_name installs them)
        self.ahead.mark(screen)
        return name

    async def _show_in_mode(self, mode: str, screen: Screen | str) -> None:
        """Show `screen` in `mode`: it is the mode's base screen, or it goes on top of the base.

        Screens above the base are popped first (installed lesson and exercise screens survive a
        pop, with their running workers); switch_screen is avoided because a mode's base screen
        cannot be switched out.
        """
        self.switch_mode(mode)
        target = self.get_screen(screen) if isinstance(screen, str) else screen
        while len(self.screen_stack) > 1 and self.screen is not target:
            await self.pop_screen()
        if self.screen is not target:
            await self.push_screen(target)

    # --- navigation (used by screens, the palette and tests) -----------------------------

    async def open_lesson(
        self, lesson_id: str, section: str | None = None, experiment: str | None = None, offset: int = 0
    ) -> None:
        """Show a lesson: at a section (`offset` lines into it) or an experiment if given, else
        where the learner left it."""
        await self.course_ready.wait()  # home lists the lessons before they are loaded
        if self.tutor.lesson(lesson_id) is None:
            known = [lesson.id for lesson in self.tutor.lessons] or "—"
            self.notify(say("err.content.no_lesson", self.lang, id=lesson_id, known=known), severity="error")
            return
        self.current_lesson = lesson_id
        await self._show_in_mode("lesson", self._lesson_screen_name(lesson_id))
        screen = cast("LessonScreen", self.screen)  # the lesson mode's screen
        # where the learner is now (the screen says more precisely once it has laid out)
        self.tutor.remember(screen="lesson", lesson=lesson_id, section=section or screen.current_section)
        screen.go_to(section=section, experiment=experiment, offset=offset)

    async def open_quiz(self, lesson_id: str | None) -> None:
        """The lesson's quiz, or (lesson_id None) the review of everything due."""
        from tutor.ui.screens.quiz import QuizScreen

        await self.course_ready.wait()
        if lesson_id is None:
            screen = QuizScreen.for_review(self.tutor)
        else:
            lesson = self.tutor.lesson(lesson_id)
            if lesson is None:
                return
            if not lesson.quiz:
                self.notify(say("lesson.no_quiz", self.lang))
                return
            screen = QuizScreen.for_lesson(self.tutor, lesson)
        self.tutor.remember(screen="quiz", lesson=lesson_id)
        await self._show_in_mode("quiz", screen)

    async def open_exercise(self, exercise_id: str) -> None:
        await self.course_ready.wait()
        if (pair := self.tutor.exercise(exercise_id)) is None:
            known = [ex.id for _lesson, ex in self.tutor.exercises()] or "—"
            self.notify(
                say("err.content.no_exercise", self.lang, id=exercise_id, known=known), severity="error"
            )
            return
        self.current_exercise = exercise_id
        self.tutor.remember(screen="lab", lesson=pair[0].id, exercise=exercise_id)
        await self._show_in_mode("lab", self._exercise_screen_name(exercise_id))

    def navigate(self, opener: Callable[..., Awaitable[None]], *args: object) -> None:
        """Run one of the open_* coroutines from a message or the palette (sync callers). Until the screen it
        opens is shown and laid out, the learner's keys wait, then go to it: never to the screen being left,
        nor to a mode's old screen shown on the way (a lesson opening under load took seconds)."""
        if self._held is None:
            self._held = []
        self.run_worker(self._navigating(opener(*args)), exclusive=True, group="nav")

    async def _navigating(self, opening) -> None:
        from textual.worker import get_current_worker

        try:
            await opening
        finally:
            this = get_current_worker()
            if not any(w.group == "nav" and w is not this and not w.is_finished for w in self.workers):
                self.call_after_refresh(self._release_keys)  # (else the opening that replaced this one does)

    def _release_keys(self) -> None:
        """The keys held while a screen opened, to the screen now shown, in the order they were typed."""
        if any(w.group == "nav" and not w.is_finished for w in self.workers):
            return  # another opening began meanwhile: they wait for it
        held, self._held = self._held, None
        for key in held or []:
            self.post_message(events.Key(key.key, key.character))

    async def on_event(self, event: events.Event) -> None:
        if (
            isinstance(event, events.Key)
            and self._held is not None
            and not event.is_forwarded
            and event.key not in self.PASS_KEYS
        ):
            self._held.append(event)  # a screen is opening: the key is for it (navigate)
            return
        await super().on_event(event)

    # --- what screens ask (tutor/ui/messages.py) -----------------------------------------

    def on_open_lesson(self, message: OpenLesson) -> None:
        self.navigate(self.open_lesson, message.lesson_id, message.section, message.experiment)

    def on_open_quiz(self, message: OpenQuiz) -> None:
        self.navigate(self.open_quiz, message.lesson_id)

    def on_open_exercise(self, message: OpenExercise) -> None:
        self.navigate(self.open_exercise, message.exercise_id)

    def on_continue_last(self, _message: ContinueLast) -> None:
        self.navigate(self.continue_last)

    def on_set_language(self, message: SetLanguage) -> None:
        self.lang = message.lang

    def on_training_progress(self, message: TrainingProgress) -> None:
        self.training = message.training

    def watch_training(self, old: Training | None, new: Training | None) -> None:
        if (old is None) != (new is None):
            self.refresh_bindings()  # the stop key shows only while a run is going

    async def continue_last(self) -> None:
        await self.course_ready.wait()
        last = self._last_location()
        if last.get("screen") == "lab" and last.get("exercise") and self.tutor.exercise(last["exercise"]):
            await self.open_exercise(last["exercise"])
        elif last.get("screen") == "quiz":
            await self.open_quiz(last.get("lesson"))
        elif last.get("lesson") and self.tutor.lesson(last["lesson"]):
            if self.is_screen_installed(f"lesson:{last['lesson']}"):
                await self.open_lesson(last["lesson"])  # open this session: it is where it was left
            else:
                offset = str(last.get("offset", ""))
                await self.open_lesson(
                    last["lesson"],
                    last.get("section"),
                    experiment=last.get("experiment"),  # the panel `e` moved to, if the place was there
                    offset=int(offset) if offset.isdigit() else 0,
                )
        elif self.tutor.lessons:
            self.notify(say("home.continue_none", self.lang))
            await self.open_lesson(self.tutor.lessons[0].id)

    def training_place(self) -> tuple[str, str] | None:
        """(lesson, experiment) of the training run going now, for the next step: the lesson whose panel
        started it (two lessons show train-compare), else the first lesson that has the experiment."""
        training = self.training
        if training is None:
            return None
        from tutor.ui.widgets.experiment_panel import training_workers

        for worker in training_workers(list(self.workers)):  # the panel running it, on its lesson's screen
            lesson_id = getattr(getattr(worker.node, "screen", None), "lesson_id", None)
            if lesson_id is not None and self.tutor.lesson(lesson_id) is not None:
                return lesson_id, training.experiment
        lesson = next(
            (
                x
                for x in self.tutor.lessons
                for s in x.sections
                for r in s.experiments
                if r.name == training.experiment
            ),
            None,
        )
        return (lesson.id, training.experiment) if lesson is not None else None

    async def follow(self, step: Step) -> None:
        """Do the next step (tutor.progress.glance.Step) the screen shows: each kind names what it opens
        (next_step makes every exercise step with its exercise, every training and read step with its lesson)."""
        if step.kind in ("review", "new"):
            await self.open_quiz(None)
        elif step.kind == "quiz":
            await self.open_quiz(step.lesson)
        elif step.kind == "exercise" and step.exercise is not None:
            await self.open_exercise(step.exercise)
        elif step.kind == "training" and step.lesson is not None:
            await self.open_lesson(step.lesson, experiment=step.experiment)
        elif step.kind == "read" and step.lesson is not None:
            await self.open_lesson(step.lesson, step.section)

    def step_shown(self, screen: Screen, step: Step | None) -> None:
        """`screen`'s next-step line shows `step` now (None: it shows none); n follows it there
        (tutor.ui.widgets.host.Host)."""
        if step is None:
            self._next_steps.pop(screen, None)
        else:
            self._next_steps[screen] = step
        self.refresh_bindings()

    def _shown_step(self) -> Step | None:
        """The next step the screen shows (None: none shown, or nothing left to do). Asked at every
        key (check_action): a lookup, not a walk through the screen's widgets."""
        step = self._next_steps.get(self.screen)
        return step if step is not None and step.kind != "done" else None

    def action_next_step(self) -> None:
        if (step := self._shown_step()) is not None:
            self.navigate(self.follow, step)

    # --- actions -------------------------------------------------------------------------

    async def action_go(self, mode: str) -> None:
        if mode == "lab" and (exercise_id := self._exercise_here()) is not None:
            await self.open_exercise(exercise_id)
            return
        self.switch_mode(mode)

    def _exercise_here(self) -> str | None:
        """The exercise of the lesson the learner is in (or was in last): the one open in the lab if it
        belongs to that lesson, else the one for the current section, else the lesson's first."""
        lesson = self.tutor.lesson(str(self.tutor.where.get("lesson") or self.current_lesson or ""))
        if lesson is None or not lesson.exercises:
            return None
        ids = [ex.id for ex in lesson.exercises]
        if self.current_exercise in ids:
            return self.current_exercise
        section = self.tutor.where.get("section")
        return next((ex.id for ex in lesson.exercises if section and ex.section == section), ids[0])

    async def action_exercises(self) -> None:
        """The exercise list (tutor.ui.screens.exercises), over the screen in view; F8 again closes it."""
        from tutor.ui.screens.exercises import ExercisesScreen

        await self.course_ready.wait()
        if isinstance(self.screen, ExercisesScreen):
            self.screen.dismiss()
            return
        await self.push_screen(ExercisesScreen())

    def action_help(self) -> None:
        from tutor.ui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.screen, self))

    def action_cycle_lang(self) -> None:
        order = list(LANG_NAMES)
        self.lang = order[(order.index(self.lang) + 1) % len(order)]

    def watch_lang(self, lang: str) -> None:
        """Runs before the screens' watchers: the model first; the key bars relabel on refresh_bindings."""
        self.tutor.lang = lang
        self.refresh_bindings()
        self.notify(say("lang.switched", lang), timeout=2)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_training":
            return self.training is not None
        if action == "next_step":  # only where a next step is shown, and one with something to do
            return self._shown_step() is not None
        return True

    def action_stop_training(self) -> None:
        """Stop the training run, from any screen (the panel that started it says it was cancelled)."""
        from tutor.ui.widgets.experiment_panel import training_workers

        for worker in training_workers(self.workers):
            worker.cancel()

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK  # screens redraw (code colours follow it)

    async def action_quit(self) -> None:
        """Stop every worker (children get SIGTERM, then SIGKILL) and wait for that, then exit. While the
        lab's editor holds text not saved, or a training run goes, ask first: quitting loses it."""
        if not self._discard_confirmed and (editor := self._unsaved_editor()) is not None:
            self._ask_discard(editor)
            return
        if self.training is not None and not self._quit_confirmed:
            self._ask_quit(self.training)
            return
        workers = [w for w in self.workers if not w.is_finished]
        for worker in workers:
            worker.cancel()
        if workers:
            waiting = asyncio.gather(*(w.wait() for w in workers), return_exceptions=True)
            try:
                await asyncio.wait_for(waiting, QUIT_GRACE_S + 1)
            except TimeoutError:
                pass
        self.exit(0)

    def _unsaved_editor(self) -> CodeEditor | None:
        """The lab's built-in editor holding text not saved, if any (none if it never opened)."""
        editors = sys.modules.get("tutor.ui.widgets.code_editor")
        return editors.unsaved(self) if editors is not None else None

    def _ask_discard(self, editor: CodeEditor) -> None:
        """Quit and lose the text not saved, or go back to the editor that holds it."""
        from tutor.ui.screens.unsaved import UnsavedChanges

        if isinstance(self.screen, UnsavedChanges):
            return  # asked already: ctrl+q again is no answer

        async def answered(choice: str | None) -> None:
            if choice == "save":
                editor.action_save()
            if choice == "discard" or (choice == "save" and not editor.modified):
                self._discard_confirmed = choice == "discard"
                await self.action_quit()
                return
            from tutor.ui.screens.exercise import ExerciseScreen

            if isinstance(lab := editor.screen, ExerciseScreen):  # the lab's editor is on its screen
                await self.open_exercise(lab.exercise_id)  # kept, or a save that failed (it says why)
            editor.area.focus()

        self.push_screen(UnsavedChanges(editor.path.name, self.lang), answered)

    def _ask_quit(self, training: Training) -> None:
        from tutor.ui.screens.quit_training import QuitTraining

        if isinstance(self.screen, QuitTraining):
            return  # asked already: ctrl+q again is no answer

        async def answered(choice: str | None) -> None:
            if choice == "lose":
                self._quit_confirmed = True
                await self.action_quit()

        self.push_screen(QuitTraining(training, self.lang), answered)

    # --- command palette -----------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The app's own commands; the course's (lessons, quizzes, experiments, exercises) come from
        tutor.ui.palette.CourseCommands, which ranks an exact id first."""
        lang = self.lang
        if self.training is not None:
            yield SystemCommand(
                say("cmd.stop_training", lang), training_line(self.training, lang), self.action_stop_training
            )
        yield SystemCommand(
            say("cmd.review", lang),
            say("cmd.review_help", lang),
            partial(self.navigate, self.open_quiz, None),
        )
        yield SystemCommand(
            say("cmd.exercises", lang), say("cmd.exercises_help", lang), self.action_exercises
        )
        yield from self._new_per_day_commands(lang)
        for code, name in LANG_NAMES.items():
            if code != lang:
                yield SystemCommand(
                    say("cmd.lang", lang, name=name), code, partial(self.post_message, SetLanguage(code))
                )
        # Textual's own (theme picker, keys panel, screenshot, quit) speak English: the tutor's instead
        yield SystemCommand(say("cmd.help", lang), say("cmd.help_help", lang), self.action_help)
        yield SystemCommand(say("cmd.theme", lang), say("cmd.theme_help", lang), self.action_toggle_theme)
        if self.served is None:  # a served session's page has nowhere to save it to
            yield SystemCommand(
                say("cmd.screenshot", lang),
                say("cmd.screenshot_help", lang),
                lambda: self.set_timer(0.1, self.deliver_screenshot),
            )
        yield SystemCommand(say("cmd.quit", lang), say("cmd.quit_help", lang), self.action_quit)

    def _new_per_day_commands(self, lang: str) -> Iterable[SystemCommand]:
        """The daily cap on new questions, as Anki's new cards a day: a few values to choose from."""
        if self.tutor.store is None:
            return
        from tutor.progress.quiz_status import NEW_PER_DAY_KEY, new_per_day

        try:
            now = new_per_day(self.tutor.store)
        except Exception:  # an unreadable store: no setting to offer
            return
        for n in (5, 10, 20, 30):
            if n != now:

                def set_cap(store: Store, n: int = n) -> None:  # a def: mypy types no lambda with one
                    store.set_value(NEW_PER_DAY_KEY, n)

                yield SystemCommand(
                    say("cmd.new_per_day", lang, n=n),
                    say("cmd.new_per_day_help", lang, now=now),
                    partial(self.tutor.write, set_cap),
                )

    def action_command_palette(self) -> None:
        """The command palette, its search line in the learner's language."""
        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]  # Textual types it App[object]; App is invariant
            self.push_screen(CommandPalette(placeholder=say("cmd.search", self.lang), id="--command-palette"))


if TYPE_CHECKING:

    def _a_host(app: TutorApp) -> Host:
        return app  # mypy checks here that the app is what its widgets ask for (tutor.ui.widgets.host)
