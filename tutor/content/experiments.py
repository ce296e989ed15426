"""Experiment references in the prose, checked against the experiments the caller names.

The content layer does not import the experiments: `load_course` is given a mapping name -> spec
(`tutor.course.open_course` passes the registry's), where a spec has `.params_model` (pydantic) to
validate a reference's parameters. Given none, references are not checked.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ValidationError

from tutor.content.problems import Problem, error, field_path
from tutor.content.prose import ProseSection
from tutor.content.schema import Section
from tutor.texts import Said


class ExperimentSpec(Protocol):
    """What content validation needs to know of an experiment: its parameters' model."""

    @property
    def params_model(self) -> type[BaseModel]: ...


Specs = Mapping[str, ExperimentSpec]


def check_sections(
    sections: list[ProseSection] | list[Section], file: Path, specs: Specs | None
) -> list[Problem]:
    if specs is None:
        return []
    problems = []
    for section in sections:
        for ref in section.experiments:
            where = f"section[{section.id}].experiment[{ref.name}]"
            spec = specs.get(ref.name)
            if spec is None:
                close = difflib.get_close_matches(ref.name, sorted(specs), n=1)
                said = (
                    Said("problem.experiment.unknown_near", name=ref.name, near=close[0])
                    if close
                    else Said("problem.experiment.unknown", name=ref.name, known=sorted(specs))
                )
                problems.append(error(file, said, field=where, line=ref.line))
                continue
            problems += check_params(spec, ref.params, file, where, ref.line)
    return problems


def check_params(
    spec: ExperimentSpec, params: dict, file: Path, where: str, line: int | None
) -> list[Problem]:
    try:
        spec.params_model.model_validate(params)
    except ValidationError as err:
        problems = []
        for e in err.errors(include_url=False):
            key = field_path(tuple(e["loc"]), params)
            if e["type"] == "extra_forbidden":
                said = Said("problem.experiment.param_unknown", key=key)
            else:  # pydantic's reason, or an experiment's own check (worded from the catalogue)
                cause = e.get("ctx", {}).get("error")
                detail = (
                    Said(cause.key, **cause.values)
                    if cause is not None and hasattr(cause, "in_lang")
                    else e["msg"]
                )
                said = Said("problem.experiment.param", key=key, detail=detail)
            problems.append(error(file, said, field=where, line=line))
        return problems
    return []
