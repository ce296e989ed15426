"""Asked when the learner leaves the built-in editor (tutor.ui.widgets.code_editor) with text not saved:
keep editing (the default: Esc, or Enter on the first button), save (and grade), or discard the changes."""

from __future__ import annotations

from tutor.texts import say
from tutor.ui.screens.keep_or_lose import KeepOrLose


class UnsavedChanges(KeepOrLose):
    """Dismissed with "discard", "save" or "keep" (keep editing)."""

    def __init__(self, file_name: str, lang: str) -> None:
        super().__init__(
            say("ex.editor.unsaved_title", lang),
            say("ex.editor.unsaved_body", lang, file=file_name),
            say("ex.editor.keep", lang),
            say("ex.editor.discard", lang),
            lose_id="discard",
            other=(say("ex.editor.save", lang), "save"),
        )
