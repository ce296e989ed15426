"""The help screen (?): every key of the screen underneath and of the app, in the learner's language."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from textual.actions import parse
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tutor.texts import say
from tutor.ui.bindings import label, own_bindings

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp


def _acts(node, binding: Binding) -> bool:
    """Whether the key is listed on `node`: it does something now (its check_action: the stop key
    without a training run and n without a next step do nothing) and is not left out (key_hidden:
    c with nothing to cancel, the lab's i where e opens the same editor)."""
    _namespace, action, parameters = parse(binding.action)
    if getattr(node, "key_hidden", lambda action: False)(action):
        return False
    try:
        return bool(node.check_action(action, parameters))
    except Exception:  # a check that cannot answer here: list the key, as the bar would
        return True


def _rows(bindings, app: App, lang: str) -> list[tuple[str, str]]:
    return [(app.get_key_display(b), label(b, lang)) for b in bindings if label(b, lang)]


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", show=False)]

    def __init__(self, under: Screen, app: TutorApp) -> None:
        super().__init__()
        lang = app.tutor.lang
        here = [b for node in [under, *under.focus_chain] for b in own_bindings(node) if _acts(node, b)]
        # ours (with an id), labelled in the learner's language (Textual's own ctrl+p says "palette")
        everywhere = [b for b in own_bindings(app) if _acts(app, b)]
        everywhere.append(Binding(app.COMMAND_PALETTE_BINDING, "command_palette", say("key.palette", lang)))
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold")
        table.add_column()
        table.add_row(f"[u]{say('help.here', lang)}[/]", "")
        seen = set()
        for key, desc in _rows(here, app, lang):
            if (key, desc) not in seen:
                seen.add((key, desc))
                table.add_row(key, desc)
        table.add_row("", "")
        table.add_row(f"[u]{say('help.global', lang)}[/]", "")
        for key, desc in _rows(everywhere, app, lang):
            table.add_row(key, desc)
        self._table = table
        self._title = say("help.title", lang)
        self._close = say("help.close", lang)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help") as box:
            box.border_title = self._title
            box.border_subtitle = self._close
            yield Static(self._table)
