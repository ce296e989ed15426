"""`--set KEY=VALUE` (and form fields) to raw parameter values, guided by the parameter model.

Lists: `1,2,4`, `[1, 2, 4]` (JSON) or `['rope', 'none']` (TOML). Numbers and text are passed as
text and converted by pydantic, so its messages (with the allowed range) apply. `none`/`null`
unsets an optional parameter.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from typing import Any

from tutor.experiments.errors import ExperimentError
from tutor.experiments.registry import ExperimentSpec


def _kinds(prop: dict) -> set[str]:
    if "anyOf" in prop:
        return {k for sub in prop["anyOf"] for k in _kinds(sub)}
    return {prop.get("type", "string")}


def parse_value(spec: ExperimentSpec, key: str, text: str) -> Any:
    props = spec.params_model.model_json_schema()["properties"]
    if key not in props:
        raise ExperimentError("err.experiment.set_unknown", key=key, name=spec.name, names=list(props))
    kinds = _kinds(props[key])
    stripped = text.strip()
    if "null" in kinds and stripped.lower() in ("none", "null", ""):
        return None
    if "array" in kinds:
        if stripped.startswith("["):
            try:
                return json.loads(stripped)
            except json.JSONDecodeError:
                try:
                    return tomllib.loads(f"v = {stripped}")["v"]
                except tomllib.TOMLDecodeError:
                    raise ExperimentError("err.experiment.set_list", key=key, text=repr(text)) from None
        return [part.strip().strip("'\"") for part in stripped.split(",") if part.strip()]
    if "string" in kinds and len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
        return stripped[1:-1]
    return stripped if "string" not in kinds else text


def parse_assignments(spec: ExperimentSpec, items: Iterable[str]) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ExperimentError("err.experiment.set_form", got=repr(item))
        raw[key] = parse_value(spec, key, value)
    return raw
