"""An experiment's parameters as inputs, validated by the experiment's own pydantic model.

Lists are typed comma-separated (`1, 2, 3`), optional values may be left empty; the model's
message (range, allowed values, divisibility) is shown under the form and the bad inputs are marked.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Static

from tutor.experiments.registry import ExperimentSpec, format_validation_error


def _is_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list


def _optional(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


def show_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


class ParamsForm(Vertical):
    """One row per parameter; `values()` returns the validated model or None (with the error shown).

    The inputs are mounted on first `open()` (when the learner expands the form): a lesson has a
    few dozen parameters, and every widget costs time each time the screen is shown again.
    """

    def __init__(self, spec: ExperimentSpec, start: dict[str, Any], **kw) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.start = {**spec.defaults(), **start}
        self.opened = False

    def compose(self) -> ComposeResult:
        yield Static("", classes="param-error")

    async def open(self) -> None:
        if self.opened:
            return
        self.opened = True
        rows = []
        for name, field in self.spec.params_model.model_fields.items():
            rows.append(
                Horizontal(
                    Label(name, classes="param-name"),
                    Input(
                        show_value(self.start.get(name)),
                        id=f"p-{name}",
                        classes="param",
                        tooltip=field.description or None,
                        compact=True,
                    ),
                    classes="param-row",
                )
            )
        await self.mount_all(rows, before=0)

    def raw(self) -> dict[str, Any]:
        if not self.opened:
            return dict(self.start)
        out: dict[str, Any] = {}
        for name, field in self.spec.params_model.model_fields.items():
            text = self.query_one(f"#p-{name}", Input).value.strip()
            if _is_list(field.annotation):
                out[name] = [part.strip() for part in text.split(",") if part.strip()]
            elif text == "" and _optional(field.annotation):
                out[name] = None
            else:
                out[name] = text
        return out

    def values(self) -> BaseModel | None:
        for box in self.query(Input):
            box.remove_class("-invalid")
        error = self.query_one(".param-error", Static)
        try:
            params = self.spec.params_model(**self.raw())
        except ValidationError as err:
            for e in err.errors(include_url=False):
                if e["loc"] and isinstance(e["loc"][0], str):
                    for box in self.query(f"#p-{e['loc'][0]}"):
                        box.add_class("-invalid")
            error.update(format_validation_error(self.spec, err))
            error.display = True
            return None
        error.update("")
        error.display = False
        return params

    def summary(self) -> str:
        """Short 'name=value' list of what differs from the defaults, for the collapsed title."""
        defaults = self.spec.defaults()
        raw = {k: v for k, v in self.start.items() if defaults.get(k) != v}
        return " ".join(f"{k}={show_value(v)}" for k, v in raw.items())
