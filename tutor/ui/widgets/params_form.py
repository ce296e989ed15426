"""An experiment's parameters as inputs, validated by the experiment's own pydantic model.

Compact: one line per row of parameters, as many `name [value]` cells side by side as the width
allows, so the form never pushes the results out of sight. A parameter with a fixed set of values
(`dtype`, `vary`, `base_pos`) is a drop-down of those values; lists are typed comma-separated
(`1, 2, 3`), and a list of fixed values (`pos`) has its allowed values said under the form. Optional
values may be left empty; the model's message (range, allowed values, divisibility) is shown under the
form and the bad inputs are marked. Enter in any text field runs the experiment (the panel handles
Input.Submitted; in a drop-down Enter opens it); Esc leaves the field for the lesson's text, so the
lesson's keys work again (and Esc there leaves the lesson).
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, VerticalGroup
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static

from tutor.experiments.registry import ExperimentSpec, format_validation_error
from tutor.texts import say
from tutor.ui.widgets.host import host_of

CELL_WIDTH = 30  # columns per `name [value]` cell: two side by side in an 80-column terminal


def _is_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list


def _optional(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


def choices(annotation: Any) -> tuple[str, ...] | None:
    """The values a Literal parameter (or the items of a list of one) may take; None for others."""
    if _is_list(annotation):
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(v) for v in typing.get_args(annotation))
    return None


def show_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


class ParamsForm(VerticalGroup):
    """The parameter cells in a grid; `values()` returns the validated model or None (error shown).

    The form is mounted, and its inputs created, on first `open()` (when the learner expands it):
    a lesson has a few dozen parameters, and every widget costs time each time the screen is shown
    again. Until then it answers with the lesson's values.
    """

    BINDINGS = [Binding("escape", "leave", show=False)]

    def __init__(self, spec: ExperimentSpec, start: dict[str, Any], lang: str, **kw) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.start = {**spec.defaults(), **start}
        self.lang = lang
        self.opened = False

    def compose(self) -> ComposeResult:
        yield Widget(classes="param-grid")
        yield Static(self._hint(), classes="param-hint")
        yield Static("", classes="param-error")

    def _hint(self) -> str:
        """How to run; in a served session also what a run may use there (the learner's caps)."""
        hint = say("run.params_hint", self.lang)
        for name, field in self.spec.params_model.model_fields.items():  # lists of fixed values
            allowed = choices(field.annotation)
            if allowed and _is_list(field.annotation):
                hint += "\n" + say("run.params_choices", self.lang, name=name, choices=list(allowed))
        host = host_of(self)
        if host is not None and (served := host.served) is not None:
            hint += "\n" + say(
                "run.served_hint", self.lang, mib=served.memory_bytes >> 20, cores=served.cpu_cores
            )
        return hint

    def action_leave(self) -> None:
        """Out of the field, to the screen's own first widget (the lesson's text)."""
        screen = self.screen
        target = next((w for w in screen.query(screen.AUTO_FOCUS or "*") if w.focusable), None)
        screen.set_focus(target, scroll_visible=False)

    def set_lang(self, lang: str) -> None:
        self.lang = lang
        if self.is_attached:
            for hint in self.query(".param-hint").results(Static):
                hint.update(self._hint())

    async def open(self) -> None:
        if self.opened:
            return
        self.opened = True
        fields = self.spec.params_model.model_fields
        name_width = max(len(name) for name in fields) + 1
        cells = []
        for name, field in fields.items():
            label = Label(name, classes="param-name")
            label.styles.width = name_width
            cells.append(HorizontalGroup(label, self._field(name, field), classes="param-cell"))
        await self.query_one(".param-grid").mount_all(cells)
        self._fit(self.size.width)

    def _field(self, name: str, field) -> Widget:
        """A drop-down for one of a fixed set of values, else a text field."""
        allowed, value = choices(field.annotation), self.start.get(name)
        if allowed and not _is_list(field.annotation) and str(value) in allowed:
            # no typing to search its few values: a letter typed as the list closes (Esc hands the focus
            # back a message later) is the lesson's key, `r` runs, never a search swallowing it
            return Select(
                [(v, v) for v in allowed],
                value=str(value),
                allow_blank=False,
                compact=True,
                id=f"p-{name}",
                classes="param",
                tooltip=field.description or None,
                type_to_search=False,
            )
        return Input(
            show_value(value),
            id=f"p-{name}",
            classes="param",
            tooltip=field.description or None,
            compact=True,
        )

    def first_field(self) -> Widget | None:
        return next(iter(self.query(".param")), None)

    def on_resize(self, event: Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        grid = self.query_one(".param-grid")
        count = len(self.spec.params_model.model_fields)
        grid.styles.grid_size_columns = max(1, min(count, width // CELL_WIDTH)) if width else 1

    def raw(self) -> dict[str, Any]:
        if not self.opened:
            return dict(self.start)
        out: dict[str, Any] = {}
        for name, field in self.spec.params_model.model_fields.items():
            box = self.query_one(f"#p-{name}")
            if isinstance(box, Select):
                out[name] = box.value
                continue
            assert isinstance(box, Input)  # a field is a Select or an Input
            text = box.value.strip()
            if _is_list(field.annotation):
                out[name] = [part.strip() for part in text.split(",") if part.strip()]
            elif text == "" and _optional(field.annotation):
                out[name] = None
            else:
                out[name] = text
        return out

    def values(self) -> BaseModel | None:
        if not self.opened:
            try:
                return self.spec.params_model(**self.start)
            except ValidationError:  # the lesson's own values (checked by `check`): not the learner's
                return None
        for box in self.query(".param"):
            box.remove_class("-invalid")
        error = self.query_one(".param-error", Static)
        try:
            params = self.spec.params_model(**self.raw())
        except ValidationError as err:
            for e in err.errors(include_url=False):
                if e["loc"] and isinstance(e["loc"][0], str):
                    for box in self.query(f"#p-{e['loc'][0]}"):
                        box.add_class("-invalid")
            error.update(format_validation_error(self.spec, err).in_lang(self.lang))
            error.display = True
            return None
        error.update("")
        error.display = False
        return params

    def summary(self) -> str:
        """Short 'name=value' list of what differs from the defaults, for the collapsed title."""
        defaults = self.spec.defaults()
        current = self.start
        if self.opened:
            try:
                current = self.spec.params_model(**self.raw()).model_dump(mode="json")
            except ValidationError:
                current = self.start
        changed = {k: v for k, v in current.items() if defaults.get(k) != v}
        return " ".join(f"{k}={show_value(v)}" for k, v in changed.items())
