"""The registry of experiments: name -> spec (titles, parameter model, where the function lives).

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


@dataclass(frozen=True)
class ExperimentSpec:
    name: str
    title: dict[str, str]
    summary: dict[str, str]
    params_model: type[P.Params]
    target: str  # "module:function"; the function is (params, ctx) -> Result
    metrics: tuple[str, ...]  # headline metric names (always present; some experiments add more)
    long: bool = False  # True: runs in a child process (training)

    @property
    def function(self) -> Callable:
        module, attr = self.target.split(":")
        return getattr(importlib.import_module(module), attr)

    def defaults(self) -> dict[str, Any]:
        return self.params_model().model_dump(mode="json")

    def validate(self, raw: Mapping[str, Any] | None = None) -> P.Params:
        return validate_params(self, raw or {})


def _spec(name, title, summary, model, target, metrics, long=False) -> ExperimentSpec:
    return ExperimentSpec(name, title, summary, model, f"tutor.experiments.{target}", tuple(metrics), long)


@cache
def _registry() -> dict[str, ExperimentSpec]:
    specs = [
        _spec(
            "heads",
            {"en": "Splitting into heads", "de": "Aufteilen in Köpfe", "zh": "拆成多个头"},
            {
                "en": "Shapes at every step of multi-head attention, parameter counts, and every head's attention on the trained model.",
                "de": "Formen in jedem Schritt der mehrköpfigen Attention, Parameterzahlen und die Attention jedes Kopfes im trainierten Modell.",
                "zh": "多头注意力每一步的形状、参数量，以及训练好的模型里每个头的注意力。",
            },
            P.HeadsParams,
            "structure:run_heads",
            ["qkv_params", "proj_params", "head_dim"],
        ),
        _spec(
            "params",
            {"en": "Parameter counts", "de": "Parameterzahlen", "zh": "参数量"},
            {
                "en": "One Linear(d, d) against the four attention matrices, and multi-head against single-head.",
                "de": "Ein Linear(d, d) gegen die vier Attention-Matrizen, mehrköpfig gegen einköpfig.",
                "zh": "一个 Linear(d, d) 与注意力的四个矩阵相比，多头与单头相比。",
            },
            P.ParamCountParams,
            "structure:run_params",
            ["single_linear", "four_linears", "attention_params"],
        ),
        _spec(
            "dk-scaling",
            {"en": "Why divide by √d_k", "de": "Warum durch √d_k teilen", "zh": "为什么除以 √d_k"},
            {
                "en": "The variance of q·k grows with d_k; scaling restores it and keeps softmax from saturating.",
                "de": "Die Varianz von q·k wächst mit d_k; die Skalierung stellt sie wieder her und verhindert eine gesättigte Softmax.",
                "zh": "q·k 的方差随 d_k 增大；缩放把它拉回来，让 softmax 不至于饱和。",
            },
            P.DkScalingParams,
            "scaling:run_dk_scaling",
            ["var_unscaled_d64", "var_scaled_d64"],
        ),
        _spec(
            "shuffle",
            {
                "en": "Attention ignores order",
                "de": "Attention ignoriert die Reihenfolge",
                "zh": "注意力不看顺序",
            },
            {
                "en": "Shuffle the inputs of plain attention, un-shuffle its outputs: they match.",
                "de": "Eingaben einer reinen Attention mischen, Ausgaben zurücksortieren: sie stimmen überein.",
                "zh": "打乱纯注意力的输入，再把输出按原顺序排回：结果完全一样。",
            },
            P.ShuffleParams,
            "structure:run_shuffle",
            ["max_diff_aligned", "max_diff_unaligned"],
        ),
        _spec(
            "permutation",
            {
                "en": "白日依山尽 or 山依日白尽?",
                "de": "白日依山尽 oder 山依日白尽?",
                "zh": "白日依山尽还是山依日白尽？",
            },
            {
                "en": "Last-position logits of a line and its reordering, for 1–3 layers, with and without positions.",
                "de": "Ausgaben an der letzten Position für eine Zeile und ihre Umordnung, 1–3 Schichten, mit und ohne Positionen.",
                "zh": "一句诗和打乱后的版本在最后一个位置的输出，1–3 层，有无位置信息。",
            },
            P.PermutationParams,
            "structure:run_permutation",
            [
                "gap_L1_nopos",
                "gap_L1_learned",
                "gap_L2_nopos",
                "gap_L2_learned",
                "gap_L3_nopos",
                "gap_L3_learned",
            ],
        ),
        _spec(
            "rope-relative",
            {
                "en": "RoPE sees only the offset",
                "de": "RoPE sieht nur den Abstand",
                "zh": "RoPE 只看相对距离",
            },
            {
                "en": "The same q and k placed at every position: the score depends only on n − m.",
                "de": "Dasselbe q und k an jeder Position: der Punktwert hängt nur von n − m ab.",
                "zh": "同一对 q、k 放在每个位置：内积只取决于 n − m。",
            },
            P.RopeRelativeParams,
            "rope:run_rope_relative",
            ["max_spread"],
        ),
        _spec(
            "rope-frequencies",
            {"en": "RoPE frequencies", "de": "RoPE-Frequenzen", "zh": "RoPE 的频率"},
            {
                "en": "θ_i, the angle per position and the period of every rotation pair.",
                "de": "θ_i, der Winkel pro Position und die Periode jedes Drehpaars.",
                "zh": "每一对维度的 θ_i、每个位置转过的角度和周期。",
            },
            P.RopeFrequenciesParams,
            "rope:run_rope_frequencies",
            ["period_pair0", "period_longest"],
        ),
        _spec(
            "alibi",
            {"en": "ALiBi slopes and bias", "de": "ALiBi-Steigungen und Bias", "zh": "ALiBi 的斜率和偏置"},
            {
                "en": "Per-head slopes by the paper's rule and the bias added to the scores.",
                "de": "Steigungen pro Kopf nach der Regel des Papers und der Bias auf den Punktwerten.",
                "zh": "按论文规则算出的每个头的斜率，以及加在分数上的偏置。",
            },
            P.AlibiParams,
            "rope:run_alibi",
            ["slope_first", "slope_last"],
        ),
        _spec(
            "context-scaling",
            {
                "en": "Reading past the trained length",
                "de": "Über die Trainingslänge hinaus lesen",
                "zh": "读超过训练长度的文本",
            },
            {
                "en": "inv_freq under none/PI/NTK/YaRN, and the loss of a short-context RoPE model at 1×, 2×, 4× its length.",
                "de": "inv_freq unter none/PI/NTK/YaRN und der Verlust eines RoPE-Modells mit kurzem Kontext bei 1×, 2×, 4× Länge.",
                "zh": "none/PI/NTK/YaRN 下的 inv_freq，以及短上下文 RoPE 模型在 1×、2×、4× 长度上的损失。",
            },
            P.ContextScalingParams,
            "extension:run_context_scaling",
            ["loss_1x", "loss_4x_none", "loss_4x_pi", "loss_4x_ntk", "loss_4x_yarn"],
        ),
        _spec(
            "train-compare",
            {"en": "Train and compare", "de": "Trainieren und vergleichen", "zh": "训练并比较"},
            {
                "en": "Train the course model with several head counts or position modes and compare validation loss.",
                "de": "Das Kursmodell mit mehreren Kopfzahlen oder Positionsarten trainieren und den Validierungsverlust vergleichen.",
                "zh": "用不同的头数或位置编码训练课程模型，比较验证损失。",
            },
            P.TrainCompareParams,
            "training:run_train_compare",
            [],
            long=True,
        ),
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
