"""The app's promises beyond the learner's path: language, palette, help, and every error shown
in the app while it keeps working; quitting mid-training leaves no child process."""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest
from textual.widgets import Button, Input, Static

from tests.ui_helpers import (
    child_pids,
    lesson_built,
    make_app,
    open_experiment,
    opened_at,
    plain,
    settle,
    status_of,
    unlock_exercise,
    until,
)
from tutor.settings import shipped_lessons_dir
from tutor.texts import say
from tutor.ui.palette import course_entries
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.home import HomeScreen
from tutor.ui.screens.lesson import LessonScreen
from tutor.ui.widgets.quiz_panel import QuizPanel


def _notes(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_language_switch_relabels_the_screen_and_the_footer_keys(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        assert app.lang == "de"
        assert str(app.screen.query_one("#home-title", Static).content) == "Attention-Tutor"
        keys = plain(app.screen.query_one("KeyBar").content)
        assert " c Weiter " in keys and " q Quiz " in keys
        await pilot.press("f5")
        await pilot.pause()
        assert app.lang == "zh"
        assert " c 继续 " in plain(app.screen.query_one("KeyBar").content)
        titles = [c.title for c in course_entries(app)]
        assert f"课程：{app.tutor.lessons[0].title['zh']}" in titles  # full-width colon in Chinese
        await app.open_lesson("positions")
        await pilot.pause()
        lesson = app.tutor.lesson("positions")
        shown = [str(w.content) for w in app.screen.query(".section-title").results(Static)]
        assert shown == [x.title["zh"] for x in lesson.sections]
        await pilot.press("f5")  # back to English, in place: the lesson's widgets are kept
        await pilot.pause()
        shown = [str(w.content) for w in app.screen.query(".section-title").results(Static)]
        assert shown == [x.title["en"] for x in lesson.sections]


def test_keys_are_the_classes_bindings_labelled_by_id_in_the_learners_language(home):
    from tutor.texts import say
    from tutor.ui.bindings import label, own_bindings

    app = make_app(home)
    keys = {b.id: b for b in own_bindings(app)}
    assert keys["help"].key == "question_mark" and keys["stop_training"].key == "f7"
    assert "quit" in keys and all(b.id for b in keys.values())  # Textual's own ctrl+q (no id) left out
    assert label(keys["lang"], "de") == say("key.lang", "de") != label(keys["lang"], "en")
    assert keys["lang"].description == "Language"  # declared words kept: nothing is relabelled in place


async def test_palette_has_every_lesson_experiment_exercise_and_review_due(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        commands = {c.title: c for c in [*course_entries(app), *app.get_system_commands(app.screen)]}
        text = "\n".join(commands)
        for lesson in app.tutor.lessons:
            assert f"Lesson: {lesson.title['en']}" in commands
            for section in lesson.sections:
                for ref in section.experiments:
                    assert f"({ref.name})" in text
        for _lesson, ex in app.tutor.exercises():
            assert f"({ex.id})" in text
        assert "Review due" in commands
        open_alibi = next(c for title, c in commands.items() if title.endswith("(alibi)"))
        open_alibi.callback()
        await until(pilot, lambda: opened_at(app, "alibi"))
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson_id == "rope-alibi"
        assert app.screen.panel_in_view().ref.name == "alibi"


async def test_help_lists_the_keys_of_the_screen_underneath(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = plain(app.screen.query_one(Static).content)
        for words in ("Run", "Next §", "Language", "Commands"):
            assert words in shown
        assert "Cancel run" not in shown  # a key is listed only where it acts: nothing runs
        assert "palette" not in shown  # Textual's own English label for ctrl+p; ours says Commands
        await pilot.press("escape")
        assert isinstance(app.screen, LessonScreen)
        await pilot.press("c")  # nothing to cancel: the learner is told so, not met with silence
        await until(pilot, lambda: say("lesson.nothing_to_cancel", "en") in _notes(app))


async def test_bad_parameters_are_named_and_nothing_runs(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "rope-alibi", "alibi")
        await panel.show_params()
        panel.query_one("#p-n_head", Input).value = "0"
        assert panel.run() is False
        assert not panel.running and "Fix the parameters" in status_of(panel)
        error = str(panel.query_one(".param-error", Static).content)
        assert "n_head: not allowed (got 0); allowed: integer 1..64, default 8" in error
        assert panel.query_one("#p-n_head", Input).has_class("-invalid")


async def test_an_experiment_that_raises_shows_its_message_and_the_next_run_works(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "positions", "permutation")
        await panel.show_params()
        panel.query_one("#p-text", Input).value = "ab☃"
        panel.query_one("#p-other", Input).value = "☃ba"
        assert panel.run()
        await settle(app)
        assert panel.result is None and panel.last_error  # unknown characters (or no checkpoint)
        assert panel.last_error in status_of(panel) and any(panel.last_error in n for n in _notes(app))
        alibi = await open_experiment(app, pilot, "rope-alibi", "alibi")
        await pilot.press("r")
        await settle(app)
        assert alibi.result is not None and alibi.result.metrics["slope_first"] == 0.5


async def test_a_lesson_that_fails_to_load_is_named_and_the_others_open(home, tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(shipped_lessons_dir(), lessons, ignore=shutil.ignore_patterns("__pycache__"))
    broken = lessons / "03-rope-alibi" / "lesson.toml"
    broken.write_text(
        broken.read_text(encoding="utf-8").replace("order = ", "ordre = 1\norder = 'two' #"), encoding="utf-8"
    )
    app = make_app(home, lang="de", lessons=lessons)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert [x.id for x in app.tutor.lessons] == ["multi-head", "positions"]
        errors = str(app.screen.query_one("#home-errors", Static).content)
        assert "lesson.toml" in errors and "order" in errors
        # the problems in the learner's words (the values, and pydantic's reason, as they are)
        assert "ordre: unbekannter Schlüssel „ordre“ (meintest du „order“?)" in errors
        assert "(eingegeben: 'two')" in errors
        await pilot.press("f5", "f5")  # de -> zh -> en
        await pilot.pause()
        errors = str(app.screen.query_one("#home-errors", Static).content)
        assert "ordre: unknown key 'ordre' (did you mean 'order'?)" in errors
        await pilot.press("enter")
        await settle(app)
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson_id == "multi-head"


async def test_a_missing_lessons_folder_is_said_in_the_learners_language(home, tmp_path):
    app = make_app(home, lang="zh", lessons=tmp_path / "nowhere")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await pilot.pause()
        errors = str(app.screen.query_one("#home-errors", Static).content)
        assert f"找不到课程文件夹：{tmp_path / 'nowhere'}" in errors
        await pilot.press("f5", "f5")  # zh -> en -> de: the same error, worded again
        await pilot.pause()
        errors = str(app.screen.query_one("#home-errors", Static).content)
        assert f"Lektionsordner nicht gefunden: {tmp_path / 'nowhere'}" in errors


async def test_no_editor_set_opens_the_built_in_one(home, monkeypatch):
    """As in a browser (serve removes $VISUAL and $EDITOR): `e` edits in the app (tests/test_ui_editor.py)."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        keys = str(screen.query_one("KeyBar", Static).content)
        assert " e Edit " in keys and "^p Commands" in keys
        assert "Edit here" not in keys  # i is shown only beside $EDITOR
        await pilot.press("e")
        await pilot.pause()
        area = screen.query_one("#editor-area")
        assert app.focused is area and area.text == screen.file.read_text(encoding="utf-8")
        assert not _notes(app)


async def test_an_editor_variable_that_cannot_be_read_is_named_not_a_crash(home, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", 'vim "unclosed')
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await unlock_exercise(app, pilot, "split-heads")
        await pilot.press("e")
        assert any("could not be started" in n and "quotation" in n for n in _notes(app))
        assert app.is_running


@pytest.mark.slow  # 5 s of a grade running out its time
async def test_a_grade_that_times_out_says_so_and_the_app_keeps_working(home, tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(shipped_lessons_dir(), lessons, ignore=shutil.ignore_patterns("__pycache__"))
    toml = lessons / "01-multi-head" / "exercises" / "split-heads" / "exercise.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("timeout_s = 20", "timeout_s = 2"), encoding="utf-8"
    )
    app = make_app(home, lessons=lessons)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        screen.file.write_text("while True:\n    pass\n", encoding="utf-8")
        await pilot.press("g")
        await settle(app)
        assert screen.result.status == "timeout"
        assert "timeout" in str(screen.query_one("#ex-status", Static).content)
        await pilot.press("escape")
        await settle(app)
        assert isinstance(app.screen, LessonScreen)


async def _stop_while_training(home, wait_for_steps: bool, how: str = "quit") -> float:
    before = child_pids()
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "rope-alibi", "train-compare")
        small = {"steps": "20000", "batch": "4", "n_layer": "1", "n_embd": "32", "pos": "none"}
        await panel.show_params()
        for key, value in small.items():
            panel.query_one(f"#p-{key}", Input).value = value
        assert panel.run()
        # until the child exists (and, if asked, reports training steps); the training is niced below
        # every other process (tutor.proc.spawn.lower_priority), so beside other tests it can wait long
        await until(
            pilot, lambda: child_pids() - before and (not wait_for_steps or "step" in status_of(panel)), 120
        )
        started = time.monotonic()
        if how == "quit":
            await app.action_quit()  # a training run goes: the tutor asks first
            await pilot.pause()
            started = time.monotonic()
            app.screen.query_one("#lose", Button).press()  # quit and lose the run
            while app.is_running and time.monotonic() - started < 10:
                await asyncio.sleep(0.02)
        else:
            app.screen.set_focus(None)  # out of the inputs: c is a key of the lesson screen
            await pilot.press("c")
            await settle(app)
            assert "cancelled" in status_of(panel) and panel.result is None
            assert app.is_running
        took = time.monotonic() - started
    assert child_pids() - before == set()
    return took


async def test_quitting_while_a_training_child_starts_returns_promptly_and_leaves_no_child(home):
    assert await _stop_while_training(home, wait_for_steps=False) < 4.0


async def test_c_cancels_a_training_run_and_its_child(home):
    assert await _stop_while_training(home, wait_for_steps=False, how="cancel") < 4.0


@pytest.mark.slow
async def test_quitting_mid_training_returns_promptly_and_leaves_no_child(home):
    assert await _stop_while_training(home, wait_for_steps=True) < 4.0


async def test_review_due_asks_unseen_questions_of_started_lessons_and_the_theme_toggles(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await pilot.press("r")  # nothing started yet: nothing to review
        await settle(app)
        quiz = app.screen.query_one(QuizPanel)
        assert quiz.state == "done" and quiz.session.mode == "review" and not quiz.session.items
        app.tutor.store.mark_read("positions", app.tutor.lesson("positions").sections[0].id)
        await app.open_quiz(None)
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        assert quiz.session.mode == "review" and quiz.session.items
        assert {item.lesson.id for item in quiz.session.items} == {"positions"}
        assert quiz.state == "asking"
        dark = app.theme
        await pilot.press("f6")
        assert app.theme != dark and not app.current_theme.dark


async def test_saving_the_file_regrades_it_while_the_exercise_is_open(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        assert screen.result is None
        shutil.copyfile(app.tutor.exercise("split-heads")[1].folder / "solution.py", screen.file)
        await until(pilot, lambda: screen.result is not None, 12)  # the mtime is polled once a second
        await settle(app)
        assert screen.result.status == "pass"
        assert [s.status for s in app.tutor.store.submissions("split-heads")] == ["pass"]


async def test_at_80_columns_the_hidden_contents_never_takes_the_keys(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_built(app) and app.screen.query_one("#prose").max_scroll_y > 0)
        prose = app.screen.query_one("#prose")
        assert not app.screen.query_one("#toc").display and app.screen.focused is prose
        await pilot.press("pagedown")  # went to the hidden contents list, which raised KeyError
        await pilot.pause()
        assert prose.scroll_y > 0
        await pilot.press("t")  # shown: it can take the focus; hidden again while it holds it
        await pilot.pause()
        app.screen.query_one("#toc").focus()
        await pilot.press("t")
        await pilot.pause()
        assert app.screen.focused is prose
        await pilot.press("pagedown")
        await pilot.pause()
    assert app.return_code in (None, 0)


@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
async def test_with_the_contents_shown_the_page_keys_still_scroll_the_lesson(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_built(app) and app.screen.query_one("#prose").max_scroll_y > 0)
        assert app.screen.query_one("#toc").display
        await pilot.press("pagedown")
        await pilot.pause()
        assert app.screen.query_one("#prose").scroll_y > 0


async def test_an_experiments_status_follows_a_language_switch(home):
    app = make_app(home)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "rope-alibi", "alibi")
        assert panel.run()
        await settle(app)
        # "done" is said once the results are laid out, a refresh or two after the run's worker ends
        await until(pilot, lambda: status_of(panel) == "done · r runs again")
        assert panel.result is not None
        assert "ALiBi slopes for 8 heads" in plain(panel.query_one(".result-table", Static).content)
        await pilot.press("f5")
        await until(pilot, lambda: status_of(panel) == "fertig · r führt erneut aus")
        # the results are drawn again in the new words, without running again
        assert "ALiBi-Steigungen für 8 Köpfe" in plain(panel.query_one(".result-table", Static).content)
        assert "Kennzahlen" in plain(panel.query_one(".metrics", Static).content)


async def test_a_self_rating_is_named_in_the_learners_words(home):
    app = make_app(home, "zh")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("positions")  # its first question is an open one
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        await quiz.submit("顺序")
        await quiz.submit("3")
        await pilot.pause()
        assert "已自评：良好" in plain(quiz.query_one(".q-feedback", Static).content)


async def test_a_narrow_key_bar_shows_whole_entries_only(home):
    app = make_app(home)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await until(pilot, lambda: lesson_built(app))
        bar = app.screen.query_one("KeyBar")
        shown = str(bar.content).rstrip()
        # was "… ? Help  f5", cut mid-entry; e and t are there at 80 columns
        assert shown.endswith("x Exercise") and "?" not in shown
        assert "e Next experiment" in shown and "t Contents" in shown
        await pilot.resize_terminal(130, 24)
        await until(pilot, lambda: bar.size.width == 130)
        assert str(bar.content).rstrip().endswith("f5 Language  ^p Commands")
