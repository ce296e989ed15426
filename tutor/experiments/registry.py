"""The registry of experiments: name -> spec (parameter model, where the function lives, headline
metrics); each one's title and summary are texts of the catalogue (tutor.texts).

Importing this module, listing specs and validating parameters never imports torch: the content
checker validates every lesson's experiment references with it. The function is imported on first run.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ValidationError

from tutor.experiments import params as P
from tutor.experiments.errors import ExperimentError
from tutor.i18n import LANGS
from tutor.texts import say


@dataclass(frozen=True)
class ExperimentSpec:
    name: str
    params_model: type[P.Params]
    target: str  # "module:function"; the function is (params, ctx) -> Result
    metrics: tuple[str, ...]  # headline metric names (always present; some experiments add more)
    long: bool = False  # True: runs in a child process (training)

    @property
    def title(self) -> dict[str, str]:
        """The title in every language (tutor.texts: exp.NAME.title)."""
        return {lang: say(f"exp.{self.name}.title", lang) for lang in LANGS}

    @property
    def summary(self) -> dict[str, str]:
        return {lang: say(f"exp.{self.name}.summary", lang) for lang in LANGS}

    @property
    def function(self) -> Callable:
        module, attr = self.target.split(":")
        return getattr(importlib.import_module(module), attr)

    def defaults(self) -> dict[str, Any]:
        return self.params_model().model_dump(mode="json")

    def validate(self, raw: Mapping[str, Any] | None = None) -> P.Params:
        return validate_params(self, raw or {})


_GAPS = [f"gap_L{n}_{pos}" for n in (1, 2, 3) for pos in ("nopos", "learned")]
# name, parameters, module:function, headline metrics, trains; titles and summaries are in tutor.texts
_SPECS = [
    ("heads", P.HeadsParams, "structure:run_heads", ["qkv_params", "proj_params", "head_dim"]),
    (
        "params",
        P.ParamCountParams,
        "structure:run_params",
        ["single_linear", "four_linears", "attention_params"],
    ),
    ("dk-scaling", P.DkScalingParams, "scaling:run_dk_scaling", ["var_unscaled_d64", "var_scaled_d64"]),
    ("shuffle", P.ShuffleParams, "structure:run_shuffle", ["max_diff_aligned", "max_diff_unaligned"]),
    ("permutation", P.PermutationParams, "structure:run_permutation", _GAPS),
    ("rope-relative", P.RopeRelativeParams, "rope:run_rope_relative", ["max_spread"]),
    (
        "rope-frequencies",
        P.RopeFrequenciesParams,
        "rope:run_rope_frequencies",
        ["period_pair0", "period_longest"],
    ),
    ("alibi", P.AlibiParams, "rope:run_alibi", ["slope_first", "slope_last"]),
    ("write", P.WriteParams, "writing:run_write", ["characters", "lines", "regular_lines", "mean_prob"]),
    (
        "context-scaling",
        P.ContextScalingParams,
        "extension:run_context_scaling",
        ["loss_1x", "loss_4x_none", "loss_4x_pi", "loss_4x_ntk", "loss_4x_yarn"],
    ),
    ("train-compare", P.TrainCompareParams, "training:run_train_compare", [], True),
    (
        "context-finetune",
        P.ContextFinetuneParams,
        "finetune:run_context_finetune",
        ["trained_length", "length"],
        True,
    ),
]


@cache
def _registry() -> dict[str, ExperimentSpec]:
    specs = [
        ExperimentSpec(name, model, f"tutor.experiments.{target}", tuple(metrics), *long)
        for name, model, target, metrics, *long in _SPECS
    ]
    return {s.name: s for s in specs}


def get_registry() -> dict[str, ExperimentSpec]:
    return dict(_registry())


def get_spec(name: str) -> ExperimentSpec:
    reg = _registry()
    if name not in reg:
        raise ExperimentError(f"unknown experiment {name!r}; valid names: {', '.join(reg)}")
    return reg[name]


def describe_field(model: type[P.Params], name: str) -> str:
    """'integer 1..64, default 4 — number of heads' from the model's schema."""
    prop = model.model_json_schema()["properties"][name]
    return f"{_describe_type(prop)}, default {json.dumps(prop.get('default'), ensure_ascii=False)} — {prop.get('description', '')}"


def _describe_type(prop: dict) -> str:
    if "anyOf" in prop:
        kinds = [_describe_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds) + " (or unset)"
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    kind = prop.get("type", "value")
    names = {"integer": "integer", "number": "number", "string": "text", "boolean": "true/false"}
    if kind == "array":
        items = _describe_type(prop.get("items", {}))
        size = ""
        if "minItems" in prop or "maxItems" in prop:
            size = f" ({prop.get('minItems', 0)}..{prop.get('maxItems', '')} items)"
        return f"list of {items}{size}"
    text = names.get(kind, kind)
    lo = prop.get("minimum", prop.get("exclusiveMinimum"))
    hi = prop.get("maximum", prop.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        lo_s = "" if lo is None else (f">{lo}" if "exclusiveMinimum" in prop else f"{lo}")
        hi_s = "" if hi is None else (f"<{hi}" if "exclusiveMaximum" in prop else f"{hi}")
        text += f" {lo_s}..{hi_s}"
    if "multipleOf" in prop:
        text += f", a multiple of {prop['multipleOf']}"
    if kind == "string" and ("minLength" in prop or "maxLength" in prop):
        text += f" of {prop.get('minLength', 0)}..{prop.get('maxLength', '')} characters"
    return text


def validate_params(spec: ExperimentSpec | str, raw: Mapping[str, Any]) -> P.Params:
    """Validate raw parameters (from a lesson, `--set` or the UI); ExperimentError says what and why."""
    spec = get_spec(spec) if isinstance(spec, str) else spec
    try:
        return spec.params_model(**dict(raw))
    except ValidationError as err:
        raise ExperimentError(format_validation_error(spec, err)) from None
    except TypeError as err:  # e.g. non-string keys
        raise ExperimentError(f"{spec.name}: bad parameters: {err}") from None


def format_validation_error(spec: ExperimentSpec, err: ValidationError) -> str:
    model = spec.params_model
    fields = model.model_fields
    lines = [f"bad parameter(s) for experiment {spec.name!r}:"]
    for e in err.errors(include_url=False):
        loc = [str(x) for x in e["loc"]]
        field = loc[0] if loc else ""
        where = field + "".join(f"[{x}]" for x in loc[1:])
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            lines.append(f"  unknown parameter {field!r}; valid parameters: {', '.join(fields)}")
            continue
        got = e.get("input")
        got_s = "" if isinstance(got, dict) else f" (got {_show(got)})"
        if field in fields:
            lines.append(f"  {where}: {msg}{got_s}; allowed: {describe_field(model, field)}")
        else:
            lines.append(f"  {msg}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    """A rejected input as the user typed it: 0 for "0" from the command line, "many" quoted."""
    if isinstance(value, str):
        try:
            float(value)
            return value
        except ValueError:
            pass
    return json.dumps(value, ensure_ascii=False, default=str)


def canonical_params(params: P.Params) -> str:
    """A stable text key for caching: the full parameter set, defaults included, sorted."""
    return json.dumps(params.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
