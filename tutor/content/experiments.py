"""Experiment references in the prose, checked against the experiment registry.

`tutor.experiments.registry.get_registry()` maps name -> spec with `.name` and `.params_model`
(pydantic). It imports without torch. If it fails to import, the names cannot be checked: that is
one course-level error (so `check` fails), and the lessons still load.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tutor.content.problems import Problem, error, field_path
from tutor.content.prose import ProseSection
from tutor.content.schema import Section

REGISTRY_MODULE = "tutor.experiments.registry"


def registry(problems: list[Problem], where: Path) -> dict[str, Any] | None:
    """The registry, or None with an error (course-level: `check` fails, the lessons still load)."""
    try:
        from tutor.experiments.registry import get_registry

        return dict(get_registry())
    except Exception as err:  # a broken registry is reported; it does not stop the lessons loading
        problems.append(
            error(
                where,
                f"{REGISTRY_MODULE} failed to load ({type(err).__name__}: {err}): experiments not checked",
            )
        )
    return None


def check_sections(
    sections: list[ProseSection] | list[Section], file: Path, specs: dict[str, Any] | None
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
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(specs))})"
                problems.append(
                    error(file, f"unknown experiment {ref.name!r}{hint}", field=where, line=ref.line)
                )
                continue
            problems += check_params(spec, ref.params, file, where, ref.line)
    return problems


def check_params(spec: Any, params: dict, file: Path, where: str, line: int | None) -> list[Problem]:
    try:
        spec.params_model.model_validate(params)
    except ValidationError as err:
        problems = []
        for e in err.errors(include_url=False):
            key = field_path(tuple(e["loc"]), params)
            msg = "unknown parameter" if e["type"] == "extra_forbidden" else e["msg"]
            problems.append(error(file, f"parameter {key}: {msg}", field=where, line=line))
        return problems
    return []
