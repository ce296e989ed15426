"""The lab's built-in editor: the learner's exercise file in Textual's TextArea, for a browser (which
has no $EDITOR) and for a terminal without one.

It shows above the exercise page, inside the exercise screen (tutor.ui.screens.exercise): the task
and the grade stay in view below it, and what was typed stays while the learner goes elsewhere and
comes back. ctrl+s writes the file atomically (atomicio) and posts `Saved`: the screen grades it,
as it does when $EDITOR returns. Esc posts `Closed`, after asking (tutor.ui.screens.unsaved) when the
text differs from the file as last loaded or saved.

Text typed and not saved is kept as a draft beside the file (`.NAME.draft`, written atomically two
seconds after the typing stops, and when the editor goes with the app: the browser tab closed, the
session ended): the next time the editor opens on that file it shows the draft and says so. Saving or
discarding deletes it.

A Python file is highlighted where tree-sitter and its Python grammar import; where they do not, and
for an answer file that is not Python, the same editor edits plain text. Imported when the editor first opens, never before the app's first screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakSet

from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import LanguageDoesNotExist

from tutor.atomicio import atomic_write_text
from tutor.errors import TutorError
from tutor.texts import say
from tutor.ui.widgets.host import host_of

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

MODIFIED = "●"  # after the file's name in the editor's title while the text is not saved
DRAFT_AFTER_S = 2.0  # the draft is written this long after the typing stops


def draft_path(path: Path) -> Path:
    """Where the text typed into `path` and not saved is kept (beside it, hidden)."""
    return path.with_name(f".{path.name}.draft")


def read_draft(path: Path, on_disk: str) -> str | None:
    """The draft of `path`, when there is one that differs from the file as it is (`on_disk`)."""
    try:
        text = draft_path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if text != on_disk else None


_MOUNTED: WeakSet[CodeEditor] = WeakSet()  # every editor in an app (the app asks before it quits)


def unsaved(app: App) -> CodeEditor | None:
    """An editor of `app` holding text that is not saved, if any."""
    return next((e for e in list(_MOUNTED) if e.is_attached and e.app is app and e.modified), None)


def read_for_editing(path: Path, lang: str) -> str:
    """The learner's file as text, read as a grade reads it (a regular file of bounded size); a
    TutorError in `lang` that names it when it cannot be read or is not UTF-8 (editing it as text
    would change its bytes on save)."""
    from tutor.grading.safe_read import read_submission

    data = read_submission(path, lang=lang)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TutorError(say("grade.file.not_utf8", lang, name=path.name, byte=str(err.start))) from None


OPENS_BLOCK = (":", "(", "[", "{")  # a line ending so: the next one is indented one step further
ENDS_BLOCK = ("return", "pass", "break", "continue", "raise")  # a line starting so: the next one steps back


def next_indent(before: str, width: int = 4) -> str:
    """The indentation Enter gives the new line, from the text before the cursor on its line: the
    line's own, one step more after a line that opens a block (`def f():`, `x = (`), one step less
    after `return`, `pass`, `break`, `continue` or `raise`; spaces, as the file's Python is written."""
    indent = before[: len(before) - len(before.lstrip(" \t"))].replace("\t", " " * width)
    code = before.split("#", 1)[0] if "'" not in before and '"' not in before else before
    code = code.rstrip()
    if code.endswith(OPENS_BLOCK):
        return indent + " " * width
    first = code.strip().split(" ", 1)[0].split("(", 1)[0]
    if first in ENDS_BLOCK:
        return indent[: max(len(indent) - width, 0)]
    return indent


def _mb(size: int) -> str:
    return f"{size / 2**20:.2f} MB"  # two places: a file just past 1 MB does not read as 1.0 of 1.0


class LabTextArea(TextArea):
    """Textual's TextArea as a code editor: Enter keeps the indentation (one step in after a colon),
    Backspace in the indentation goes back one step, ctrl+a selects all (Home goes to the line start),
    and F6 and F7 (its select line, select all) are left to the app's keys of every screen: the
    light/dark theme and stopping a training run."""

    BINDINGS = [
        Binding("f6,f7", "app_key", show=False),
        Binding("ctrl+a", "select_all", "Select all", id="editor_select_all", show=False),
        # priority: before the area's own key handling, which inserts a bare line break
        Binding("enter", "newline", show=False, priority=True),
    ]

    def action_app_key(self) -> None:
        raise SkipAction()  # the key goes on to the app's binding

    def action_newline(self) -> None:
        """Enter: a new line, indented as next_indent says (in place of the selection, if any)."""
        if self.read_only:
            return
        start, end = sorted(self.selection)
        before = self.document[start[0]][: start[1]]
        self.replace(
            "\n" + next_indent(before, self.indent_width), start, end, maintain_selection_offset=False
        )

    def action_delete_left(self) -> None:
        """Backspace; in a line's indentation (spaces only before the cursor) back to the step before."""
        start, end = self.selection
        row, column = end
        before = self.document[row][:column] if start == end else ""
        if before and not before.strip(" ") and not self.read_only:
            step = (column - 1) % self.indent_width + 1
            self.replace("", (row, column - step), end, maintain_selection_offset=False)
            return
        super().action_delete_left()


def editor_area(path: Path, text: str, theme: str, **kw) -> TextArea:
    """A code editor for the file at `path`, lines wrapped at the edge: Python highlighted when
    tree-sitter-python imports, plain text when not (Textual falls back by itself when tree-sitter is
    missing, but raises when only its Python grammar is), and for an answer that is not Python (a TOML
    file of figures)."""
    language = "python" if path.suffix == ".py" else None
    try:
        return LabTextArea.code_editor(text, language=language, theme=theme, soft_wrap=True, **kw)
    except LanguageDoesNotExist:
        return LabTextArea.code_editor(text, theme=theme, soft_wrap=True, **kw)


def area_theme(dark: bool) -> str:
    """The editor's colours for the app's light or dark theme (the page's code uses monokai too)."""
    return "monokai" if dark else "github_light"


class CodeEditor(Vertical):
    # priority: the TextArea takes Esc itself (it moves the focus on), and no key of the area's own
    # may take these
    BINDINGS = [
        Binding("ctrl+s", "save", "Save and grade", id="editor_save", priority=True),
        Binding("escape", "close", "Close editor", id="editor_close", priority=True),
    ]

    class Saved(Message):
        """The file was written: grade it."""

    class Closed(Message):
        """The learner left the editor (what was typed is saved or discarded)."""

    def __init__(self, path: Path, text: str, *, dark: bool, **kw) -> None:
        super().__init__(**kw)
        self.path = Path(path)
        self._text = text
        self._dark = dark
        self._on_disk = text  # the file as last loaded or saved
        self._draft_timer: Timer | None = None  # set while a draft waits to be written
        self._typed = text  # the text in the area, as last changed

    def compose(self) -> ComposeResult:
        yield editor_area(self.path, self._text, area_theme(self._dark), id="editor-area")

    def on_mount(self) -> None:
        _MOUNTED.add(self)
        self._title()

    def on_unmount(self) -> None:
        _MOUNTED.discard(self)
        if self._draft_timer is not None:  # the editor goes (the app ends): keep what was typed
            self._keep_draft()

    @property
    def lang(self) -> str:
        host = host_of(self)
        return host.lang if host is not None else "en"  # the app's, as it is now (F5 changes it)

    @property
    def area(self) -> TextArea:
        return self.query_one("#editor-area", TextArea)

    @property
    def modified(self) -> bool:
        return self.area.text != self._on_disk

    def load(self, text: str) -> None:
        """Show `text`, the file as it is now (the undo history starts again)."""
        self._on_disk = self._typed = text
        self.area.load_text(text)
        self._title()

    def set_theme(self, dark: bool) -> None:
        self._dark = dark
        self.area.theme = area_theme(dark)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self._title()
        self._typed = event.text_area.text
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_timer = self.set_timer(DRAFT_AFTER_S, self._keep_draft)

    def show_draft(self, text: str) -> None:
        """Show the draft typed last time (the file on disk stays what it was: the text is not saved)."""
        self.area.load_text(text)
        self._typed = text
        self._title()

    def _keep_draft(self) -> None:
        """Write the text as the file's draft, or delete the draft when the text is the file's (also
        when the editor is already gone: what was typed is kept in `_typed`)."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        try:
            if self._typed != self._on_disk:
                if self._too_big(self._typed) is None:  # a draft is held to the file's cap too
                    atomic_write_text(draft_path(self.path), self._typed)
            else:
                draft_path(self.path).unlink(missing_ok=True)
        except OSError:
            pass  # a draft is a courtesy: the file itself is untouched either way

    def _drop_draft(self) -> None:
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        try:
            draft_path(self.path).unlink(missing_ok=True)
        except OSError:
            pass

    def _title(self) -> None:
        self.border_title = f"{self.path.name} {MODIFIED}" if self.modified else self.path.name

    def _too_big(self, text: str) -> str | None:
        """Why `text` may not be written (too large a file, or a served home at its cap), or None."""
        from tutor.settings import GRADE_MAX_SOURCE_BYTES

        size = len(text.encode("utf-8", "surrogatepass"))
        if size > GRADE_MAX_SOURCE_BYTES:
            return say("ex.editor.too_big", self.lang, size=_mb(size), most=_mb(GRADE_MAX_SOURCE_BYTES))
        host = host_of(self)
        if host is not None and (served := host.served) is not None:
            from tutor.serve.session import home_size

            held = home_size(host.tutor.home) + size
            if held > served.home_bytes:
                return say("ex.editor.home_full", self.lang, size=_mb(held), most=_mb(served.home_bytes))
        return None

    def action_save(self) -> None:
        text = self.area.text
        if (why := self._too_big(text)) is not None:
            self.notify(why, severity="error", timeout=10)
            return
        try:
            atomic_write_text(self.path, text)
        except OSError as err:
            self.notify(say("ex.editor.not_saved", self.lang, err=err), severity="error", timeout=10)
            return
        self._on_disk = text
        self._title()
        self._drop_draft()
        self.post_message(self.Saved())

    def action_close(self) -> None:
        """Leave the editor; when the text is not saved, ask first (keep editing, save, or discard)."""
        if not self.modified:
            self.post_message(self.Closed())
            return
        from tutor.ui.screens.unsaved import UnsavedChanges

        self.app.push_screen(UnsavedChanges(self.path.name, self.lang), self._answered)

    def _answered(self, choice: str | None) -> None:
        if choice == "save":
            self.action_save()  # grades too; a save refused (too large, a full home) says why and stays
        if choice == "discard":
            self.load(self._on_disk)
            self._drop_draft()
        if choice == "discard" or (choice == "save" and not self.modified):
            self.post_message(self.Closed())
        else:
            self.area.focus()
