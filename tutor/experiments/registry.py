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
from tutor.experiments.result import Msg
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
_SPECS: list[tuple[str, type[P.Params], str, list[str], *tuple[bool, ...]]] = [
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
        ExperimentSpec(name, model, f"tutor.experiments.course.{target}", tuple(metrics), *long)
        for name, model, target, metrics, *long in _SPECS
    ]
    return {s.name: s for s in specs}


def get_registry() -> dict[str, ExperimentSpec]:
    return dict(_registry())


def get_spec(name: str) -> ExperimentSpec:
    reg = _registry()
    if name not in reg:
        raise ExperimentError("err.experiment.unknown", name=name, names=list(reg))
    return reg[name]


def describe_field(model: type[P.Params], name: str) -> Msg:
    """'integer 1..64, default 4' from the model's schema, in any language."""
    prop = model.model_json_schema()["properties"][name]
    return Msg("err.type.default", kind=_describe_type(prop), default=_json(prop.get("default")))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _describe_type(prop: dict) -> Msg:
    if "anyOf" in prop:
        kinds = [_describe_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        return Msg("err.type.optional", kinds=kinds)
    if "enum" in prop:
        return Msg("err.type.one_of", values=[_json(v) for v in prop["enum"]])
    kind = prop.get("type", "value")
    if kind == "array":
        items = _describe_type(prop.get("items", {}))
        if "minItems" in prop or "maxItems" in prop:
            return Msg(
                "err.type.list_of_size",
                items=items,
                size=f"{prop.get('minItems', 0)}..{prop.get('maxItems', '')}",
            )
        return Msg("err.type.list_of", items=items)
    text = Msg(f"err.type.{kind}" if kind in ("integer", "number", "string", "boolean") else "err.type.value")
    lo = prop.get("minimum", prop.get("exclusiveMinimum"))
    hi = prop.get("maximum", prop.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        lo_s = "" if lo is None else (f">{lo}" if "exclusiveMinimum" in prop else f"{lo}")
        hi_s = "" if hi is None else (f"<{hi}" if "exclusiveMaximum" in prop else f"{hi}")
        text = Msg("err.type.range", kind=text, range=f"{lo_s}..{hi_s}")
    if "multipleOf" in prop:
        text = Msg("err.type.multiple", kind=text, n=str(prop["multipleOf"]))
    if kind == "string" and ("minLength" in prop or "maxLength" in prop):
        text = Msg(
            "err.type.length", kind=text, size=f"{prop.get('minLength', 0)}..{prop.get('maxLength', '')}"
        )
    return text


def validate_params(spec: ExperimentSpec | str, raw: Mapping[str, Any]) -> P.Params:
    """Validate raw parameters (from a lesson, `--set` or the UI); ExperimentError says what and why."""
    spec = get_spec(spec) if isinstance(spec, str) else spec
    try:
        return spec.params_model(**dict(raw))
    except ValidationError as err:
        said = format_validation_error(spec, err)
        raise ExperimentError(said.key, **said.args) from None
    except TypeError as err:  # e.g. non-string keys
        raise ExperimentError("err.experiment.bad_params_type", name=spec.name, detail=str(err)) from None


# pydantic's reasons that the allowed values (describe_field) say in the learner's words
_SAID_BY_ALLOWED = {
    "greater_than",
    "greater_than_equal",
    "less_than",
    "less_than_equal",
    "multiple_of",
    "too_short",
    "too_long",
    "string_too_short",
    "string_too_long",
    "literal_error",
    "enum",
}


def format_validation_error(spec: ExperimentSpec, err: ValidationError) -> Msg:
    """What is wrong with each parameter, in any language: the field, the value given, what is
    allowed. pydantic's own reason stays as it says it; the experiments' own checks (params.py)
    raise catalogue texts, worded here."""
    model = spec.params_model
    fields = model.model_fields
    problems: list[Msg | str] = []
    for e in err.errors(include_url=False):
        loc = [str(x) for x in e["loc"]]
        field = loc[0] if loc else ""
        where = field + "".join(f"[{x}]" for x in loc[1:])
        cause = e.get("ctx", {}).get("error")
        if cause is not None and hasattr(cause, "in_lang"):
            detail: Msg | str = Msg(cause.key, **cause.values)
        elif e["type"] in _SAID_BY_ALLOWED:
            detail = Msg("err.experiment.not_allowed")
        else:
            detail = e["msg"]
        if e["type"] == "extra_forbidden":
            problems.append(Msg("err.experiment.param_unknown", name=field, names=list(fields)))
            continue
        got = e.get("input")
        if field in fields:
            allowed = describe_field(model, field)
            if isinstance(got, dict):
                problems.append(Msg("err.experiment.param_bad", where=where, detail=detail, allowed=allowed))
            else:
                problems.append(
                    Msg(
                        "err.experiment.param_bad_got",
                        where=where,
                        detail=detail,
                        got=_show(got),
                        allowed=allowed,
                    )
                )
        else:
            problems.append(detail)
    return Msg("err.experiment.bad_params", name=spec.name, problems=problems)


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
