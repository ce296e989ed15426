"""The lab's built-in editor (tutor.ui.widgets.code_editor) at 80×24: `e` opens it where no $EDITOR is
set (a browser), `i` anyway; ctrl+s writes the file atomically and grades it through the warm judge;
Esc with unsaved text asks (keep editing / discard); the lab's letters are typed, not keys, meanwhile."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Static, TextArea

from tests.english import english_left
from tests.ui_helpers import make_app, plain, settle, unlock_exercise, until
from tutor.texts import say

SIZE = (80, 24)


def _key_bar(app) -> str:
    from tutor.ui.widgets.key_bar import KeyBar

    return str(app.screen.query_one(KeyBar).content)


async def test_i_opens_the_built_in_editor_leaving_unsaved_asks_and_ctrl_s_saves(home, monkeypatch):
    """With $EDITOR set, `i` still opens the built-in editor (and `e`, where the terminal cannot be
    handed over, as in a test's headless app); Esc with unsaved text asks; Keep editing keeps it,
    Discard drops it and leaves the file as it was; ctrl+s writes the file and starts a grade; ctrl+q
    from elsewhere with text not saved asks too."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "nano")
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        on_disk = screen.file.read_text(encoding="utf-8")
        assert "i: edit here" in str(screen.query_one("#ex-file", Static).content)
        await pilot.press("question_mark")
        await pilot.pause()
        helped = [
            line.split() for line in plain(app.screen.query_one("#help Static", Static).content).splitlines()
        ]
        assert ["i", "Edit", "here"] in helped
        await pilot.press("escape")
        await pilot.press("i")
        await pilot.pause()
        area = screen.query_one("#editor-area", TextArea)
        assert app.focused is area and area.text == on_disk
        assert "Save and grade" in _key_bar(app) and "Hint" not in _key_bar(app)
        await pilot.press("f6", "f7")  # the app's theme and stop keys, not the area's select line/all
        await pilot.pause()
        assert app.current_theme.dark is False and area.theme == "github_light" and area.selected_text == ""
        await pilot.press("f6")
        await pilot.press("g", "h")  # typed into the file, not a grade or a hint of the lab
        assert area.text == "gh" + on_disk and screen.hints_shown == 0 and screen.result is None
        assert screen.query_one("#ex-editor").border_title == f"{screen.file.name} ●"

        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "UnsavedChanges"
        await pilot.press("enter")  # the default: keep editing
        await pilot.pause()
        assert app.screen is screen and app.focused is area and area.text.startswith("gh")
        for lang in ("de", "zh"):  # F5 works in the editor; its keys and question in no English
            await pilot.press("f5")
            await pilot.pause()
            assert app.lang == lang and app.focused is area
            keys = _key_bar(app)
            await pilot.press("escape")
            await pilot.pause()
            asked = " ".join(str(w.render()) for w in app.screen.query("Static, Button"))
            assert english_left(f"{keys} {asked}", lang) == [], (lang, keys, asked)
            assert say("ex.editor.keep", lang) in asked and say("key.editor_save", lang) in keys
            await pilot.press("enter")
            await pilot.pause()
        await pilot.press("f5")  # English again

        await pilot.press("escape")
        await pilot.pause()
        await pilot.click("#discard")
        await pilot.pause()
        assert app.screen is screen and not screen.query_one("#ex-editor").display
        assert app.focused is screen.query_one("#ex-box", VerticalScroll)
        assert screen.file.read_text(encoding="utf-8") == on_disk
        await pilot.press("e")  # $EDITOR cannot take the terminal here: the built-in one opens
        await pilot.pause()
        assert screen.query_one("#ex-editor").display and area.text == on_disk

        inode = screen.file.stat().st_ino
        await pilot.press("#", "ctrl+s")
        assert screen.file.read_text(encoding="utf-8") == "#" + on_disk
        assert screen.file.stat().st_ino != inode  # written beside and moved over (atomicio)
        assert screen.query_one("#ex-editor").border_title == screen.file.name  # saved: no mark
        await until(pilot, lambda: screen.result is not None)  # graded (the first grade of this test)
        await pilot.press("escape")  # nothing unsaved: leaves at once
        await pilot.pause()
        assert app.screen is screen and not screen.query_one("#ex-editor").display

        await pilot.press("i", "z", "f1")  # home, with text not saved in the lab
        await until(pilot, lambda: type(app.screen).__name__ == "HomeScreen")
        await pilot.press("ctrl+q")  # asks first; keeping goes back to the editor
        await until(pilot, lambda: type(app.screen).__name__ == "UnsavedChanges")
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is area)
        assert app.screen is screen and area.text == "#z" + on_disk and app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: type(app.screen).__name__ == "UnsavedChanges")
        await pilot.click("#discard")  # quit, losing it
        await until(pilot, lambda: not app.is_running)
    assert screen.file.read_text(encoding="utf-8") == "#" + on_disk


async def test_the_unsaved_question_offers_save_in_the_lab_and_when_quitting(home, monkeypatch):
    """Leaving the editor with text not saved asks keep / save / discard; Save writes the file and
    closes the editor (and grades, as ctrl+s does); on ctrl+q, Save writes it and quits."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        on_disk = screen.file.read_text(encoding="utf-8")
        await pilot.press("e", "x", "escape")
        await until(pilot, lambda: type(app.screen).__name__ == "UnsavedChanges")
        buttons = [str(b.label) for b in app.screen.query("Button")]
        assert buttons == [
            say("ex.editor.keep", "en"),
            say("ex.editor.save", "en"),
            say("ex.editor.discard", "en"),
        ]
        await pilot.click("#save")
        await until(pilot, lambda: app.screen is screen and not screen.query_one("#ex-editor").display)
        assert screen.file.read_text(encoding="utf-8") == "x" + on_disk
        await pilot.press("e", "y", "f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HomeScreen")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: type(app.screen).__name__ == "UnsavedChanges")
        await pilot.click("#save")
        await until(pilot, lambda: not app.is_running)
    assert screen.file.read_text(encoding="utf-8") == "xy" + on_disk  # typed where the cursor was


@pytest.mark.slow  # about 2 s here alone, 8 s on a busy machine: a real grade through the warm judge
async def test_without_an_editor_e_edits_here_and_ctrl_s_saves_and_grades_the_fix(home, monkeypatch):
    """The browser's case: no $VISUAL or $EDITOR. The learner types the missing line of merge_heads,
    ctrl+s writes the file (a new file moved into place) and the grade passes."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        assert "e: edit here" in str(screen.query_one("#ex-file", Static).content)
        assert "Edit here" not in _key_bar(app)  # e says it already: i would only crowd the bar
        await pilot.press("i")  # ... and still does what the guide says: the built-in editor
        await until(
            pilot, lambda: bool(screen.query("#editor-area")) and screen.query_one("#ex-editor").display
        )
        await pilot.press("escape")
        await until(pilot, lambda: not screen.query_one("#ex-editor").display)
        folder = app.tutor.exercise("split-heads")[1].folder
        fix = "return x.transpose(1, 2).reshape(B, T, n_head * d)"
        solution = (folder / "solution.py").read_text(encoding="utf-8")
        gap = 'raise NotImplementedError("merge_heads: your code here")'
        left = solution.replace("return x.transpose(1, 2).contiguous().view(B, T, n_head * d)", gap)
        left = left.replace("import torch\n", "import time\n\nimport torch\n\ntime.sleep(0.5)\n", 1)
        assert left != solution
        screen.file.write_text(left, encoding="utf-8")

        await pilot.press("e")
        await pilot.pause()
        area = screen.query_one("#editor-area", TextArea)
        assert app.focused is area
        row = area.text.splitlines().index(f"    {gap}")
        area.cursor_location = (row, 4)
        await pilot.press("shift+end", *fix)
        assert area.text == left.replace(gap, fix)
        await pilot.press("ctrl+s")
        assert screen.file.read_text(encoding="utf-8") == area.text
        started = time.monotonic()
        await pilot.press("home")  # the editor takes keys while the grade runs (the file sleeps first)
        assert area.cursor_location == (row, 4) and time.monotonic() - started < 1  # at its code
        assert [w for w in app.workers if w.group == "grade" and not w.is_finished]
        await settle(app, 0.1)
        assert screen.result.status == "pass", screen.result
        assert "All checks pass" in str(screen.query_one("#ex-status", Static).content)
        assert screen.query_one("#ex-editor").display and app.focused is area  # still editing
        assert screen.query_one("#ex-editor").border_title == screen.file.name  # saved: no mark

        await pilot.press("escape")  # nothing unsaved: leaves at once
        await pilot.pause()
        assert app.screen is screen and not screen.query_one("#ex-editor").display


def test_the_editor_edits_plain_text_where_the_python_grammar_is_missing_or_the_file_is_not_python(
    monkeypatch,
):
    import textual.widgets._text_area as text_area

    from tutor.ui.widgets.code_editor import editor_area

    assert editor_area(Path("rope.py"), "x = 1\n", "monokai").language == "python"
    assert editor_area(Path("head_count.toml"), "x = 1\n", "monokai").language is None
    monkeypatch.setattr(text_area, "get_language", lambda name: None)  # tree-sitter without its grammar
    area = editor_area(Path("rope.py"), "x = 1\n", "monokai")
    assert area.language is None and area.text == "x = 1\n"


def test_a_file_the_editor_would_change_on_save_is_not_opened(tmp_path):
    """Not UTF-8 (saved as text it would change bytes the learner did not touch), or not a regular
    file: said in the learner's language, naming the file."""
    from tutor.errors import TutorError
    from tutor.ui.widgets.code_editor import read_for_editing

    latin = tmp_path / "rope.py"
    latin.write_bytes("x = 'é'\n".encode("latin-1"))
    with pytest.raises(TutorError, match=r"rope\.py ist nicht in UTF-8 gespeichert \(Byte 5\)"):
        read_for_editing(latin, "de")
    with pytest.raises(TutorError, match="rope"):
        read_for_editing(tmp_path / "rope", "en")  # missing
    fine = tmp_path / "fine.py"
    fine.write_text("x = 'é'\n", encoding="utf-8")
    assert read_for_editing(fine, "en") == "x = 'é'\n"


# --- a snapshot of the editor open at 80×24 ---


@pytest.fixture
def _snapshots_in_tests_snapshots(monkeypatch):
    from pytest_textual_snapshot import SVGImageExtension

    def dirname(cls, *, test_location) -> str:
        return str(Path(test_location.filepath).parent / "snapshots" / test_location.basename)

    monkeypatch.setattr(SVGImageExtension, "dirname", classmethod(dirname))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_built_in_editor_snapshot(snap_compare, lang, monkeypatch, _snapshots_in_tests_snapshots):
    import tempfile

    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    home = Path(tempfile.gettempdir()) / "attention-tutor-snapshots" / f"editor-{lang}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)

    async def run_before(pilot):
        app = pilot.app
        await app.course_ready.wait()
        await unlock_exercise(app, pilot, "split-heads")
        await pilot.press("e", "down", "down", "#")
        area = app.screen.query_one("#editor-area", TextArea)
        area.cursor_blink = False
        await until(pilot, lambda: isinstance(app.focused, TextArea))
        await settle(app, 0.3)

    assert snap_compare(make_app(home, lang), terminal_size=SIZE, run_before=run_before)


async def test_text_typed_and_not_saved_comes_back_after_the_app_ends(home, monkeypatch):
    """A browser tab closed or a session ended mid-edit: the text typed is kept as a draft beside the
    file and shown (with a note) when the editor opens on it again; discarding it deletes the draft and
    leaves the file as it was."""
    from tutor.ui.widgets.code_editor import draft_path

    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "split-heads")
        file = screen.file
        on_disk = file.read_text(encoding="utf-8")
        await pilot.press("e")  # no $EDITOR: the built-in editor
        await until(pilot, lambda: isinstance(app.focused, TextArea))
        await pilot.press("x", "y")
        assert not draft_path(file).exists()  # written once the typing stops, or when the app ends
    assert draft_path(file).read_text(encoding="utf-8") == "xy" + on_disk
    assert file.read_text(encoding="utf-8") == on_disk

    app = make_app(home)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await app.course_ready.wait()
        await app.open_exercise("split-heads")
        await pilot.pause()
        await pilot.press("e")  # no $EDITOR: the built-in editor
        await until(pilot, lambda: isinstance(app.focused, TextArea))
        area = app.screen.query_one("#editor-area", TextArea)
        assert area.text == "xy" + on_disk and app.screen.query_one("#ex-editor").border_title.endswith("●")
        await until(pilot, lambda: any("did not save is back" in str(t.message) for t in app._notifications))
        await pilot.press("escape")
        await until(pilot, lambda: type(app.screen).__name__ == "UnsavedChanges")
        await pilot.click("#discard")
        await until(pilot, lambda: not draft_path(file).exists())
        assert file.read_text(encoding="utf-8") == on_disk and area.text == on_disk
