"""What an experiment returns: headline metrics plus panels, serialised to the experiment JSON of docs/formats.md.

    {"experiment", "params", "metrics": {name: number}, "panels": [...], "duration_s"}

A panel is one of four kinds; the UI and the CLI render them, tests read `metrics`.
Masked cells of a heatmap (e.g. the −inf above a causal diagonal) are `null`, because JSON has no
infinity.

An experiment speaks no language of its own: what a learner reads in a panel is a `Msg` (a key of
the tutor.texts catalogue and its values) and a number to show is a `Num` (value and significant
digits), so one Result can be shown in any language, again after the learner switches.
`result.shown(lang)` is the Result with every Msg and Num written out: `--json` prints that, so the
JSON keeps the shape above (text is text); the app's child process sends the Result as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tutor.texts import number, say


class Num(BaseModel):
    """A number shown to `digits` significant digits (or `decimals` places), grouped and marked as the
    language writes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    value: float
    digits: int = 4
    decimals: int | None = None

    def __init__(self, value: float | None = None, digits: int = 4, /, **fields: Any) -> None:
        # Num(0.5, 3) in code; validation (JSON) passes the fields by name
        if value is None:
            super().__init__(**fields)
        else:
            super().__init__(value=value, digits=digits, **fields)

    def in_lang(self, lang: str) -> str:
        return number(self.value, lang, self.digits, self.decimals)


class Msg(BaseModel):
    """A text from the catalogue: `Msg("exp.heads.map", layer=1, head=2)`; values may be Msgs and Nums."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str
    args: dict[str, Arg] = {}

    def __init__(self, key: str | None = None, /, **args: Any) -> None:
        # Msg("key", n=1) in code; validation (JSON) passes the fields by name
        super().__init__(**args) if key is None else super().__init__(key=key, args=args)

    def in_lang(self, lang: str) -> str:
        return say(self.key, lang, **self.args)


Arg = str | int | float | Num | Msg | list[Msg | str]
Words = str | Msg  # plain text (a name, code, the learner's characters) or a catalogue text
Cell = str | int | float | Num | Msg | None


def about(seconds: float) -> Msg:
    """A job's expected length, rounded as an estimate is: seconds under two minutes, else minutes."""
    if seconds < 120:
        return Msg("run.about_s", s=max(1, round(seconds)))
    return Msg("run.about_min", m=round(seconds / 60))


def words(value: Words | Num | dict | bool | None, lang: str) -> str:
    """Anything a panel or a progress event holds, as text in `lang` (a Msg may arrive as its JSON)."""
    if isinstance(value, dict):
        value = Msg.model_validate(value)
    if value is None:
        return ""
    return value.in_lang(lang) if isinstance(value, Msg | Num) else str(value)


class _Panel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: Words


class TablePanel(_Panel):
    kind: Literal["table"] = "table"
    columns: list[Words]
    rows: list[list[Cell]]


class HeatmapPanel(_Panel):
    """A grid of numbers: rows are e.g. query characters, columns key characters."""

    kind: Literal["heatmap"] = "heatmap"
    row_labels: list[str]
    col_labels: list[str]
    values: list[list[float | None]]
    vmin: float | None = None  # colour scale; None = the data's own min/max
    vmax: float | None = None

    @model_validator(mode="after")
    def _grid(self) -> HeatmapPanel:
        widths = {len(row) for row in self.values}
        if len(self.values) != len(self.row_labels) or widths - {len(self.col_labels)}:
            raise ValueError(
                f"a heatmap of {len(self.row_labels)} row and {len(self.col_labels)} column labels needs as "
                f"many rows and columns of values, got {len(self.values)} rows of {sorted(widths)}"
            )
        return self


class Series(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Words
    x: list[float]
    y: list[float | None]

    @model_validator(mode="after")
    def _pairs(self) -> Series:
        if len(self.x) != len(self.y):
            raise ValueError(f"a series needs as many y as x values, got {len(self.y)} and {len(self.x)}")
        return self


class SeriesPanel(_Panel):
    kind: Literal["series"] = "series"
    x_label: Words = ""
    y_label: Words = ""
    log_y: bool = False
    series: list[Series]


class TextPanel(_Panel):
    kind: Literal["text"] = "text"
    text: Words


Panel = Annotated[TablePanel | HeatmapPanel | SeriesPanel | TextPanel, Field(discriminator="kind")]


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")
    experiment: str
    params: dict[str, Any]
    metrics: dict[str, int | float]
    panels: list[Panel] = []
    duration_s: float = 0.0

    @field_validator("metrics")
    @classmethod
    def _finite(cls, value: dict[str, int | float]) -> dict[str, int | float]:
        bad = [k for k, v in value.items() if not math.isfinite(v)]
        if bad:
            raise ValueError(f"metrics must be finite numbers; not finite: {', '.join(bad)}")
        return value

    def to_json(self) -> str:
        return self.model_dump_json()

    def shown(self, lang: str = "en") -> Result:
        """This Result with every text and number of its panels written out in `lang`."""
        return self.model_copy(update={"panels": [_written(panel, lang) for panel in self.panels]})


def _written(value: Any, lang: str) -> Any:
    if isinstance(value, Msg | Num):
        return value.in_lang(lang)
    if isinstance(value, list):
        return [_written(v, lang) for v in value]
    if isinstance(value, BaseModel):
        return value.model_copy(
            update={name: _written(getattr(value, name), lang) for name in type(value).model_fields}
        )
    return value


def finite_or_none(x: float) -> float | None:
    """A float for JSON: None for ±inf/NaN (masked cells)."""
    return float(x) if math.isfinite(x) else None


def result(experiment: str, params: BaseModel, metrics: Mapping[str, int | float], panels: list) -> Result:
    """An experiment's Result for its validated parameters (duration filled in by the runner)."""
    return Result(
        experiment=experiment, params=params.model_dump(mode="json"), metrics=metrics, panels=panels
    )


def reading(text: Msg, tables: bool = False) -> TextPanel:
    """The note under an experiment's table(s) that says how to read them."""
    return TextPanel(title=Msg("exp.reading_tables" if tables else "exp.reading"), text=text)


def columns(prefix: str, *names: str) -> list[Words]:
    """Column headers from the catalogue (`prefix` + name); a name starting with '=' is shown as is."""
    return [name[1:] if name.startswith("=") else Msg(prefix + name) for name in names]
