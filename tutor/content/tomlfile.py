"""Reading one content file: bytes -> text -> TOML -> math converted -> pydantic model, problems collected."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tutor.content.markdown import convert_math, join_cjk_lines
from tutor.content.problems import (
    Problem,
    all_field_names,
    error,
    field_path,
    line_of,
    validation_problems,
    warning,
)
from tutor.content.schema import CourseFile, Exercise, LessonFile, QuizFile
from tutor.i18n import LANGS as LANGS_ALL
from tutor.texts import Said

M = TypeVar("M", bound=BaseModel)
VOCABULARY = all_field_names(LessonFile, QuizFile, Exercise, CourseFile)
MARKDOWN_KEYS = {"task"}  # LocalText fields that are Markdown (escaped math); the rest are plain text
_TOML_LINE = re.compile(r"at line (\d+)")


def toml_error_line(err: tomllib.TOMLDecodeError) -> int | None:
    m = _TOML_LINE.search(str(err))
    return int(m.group(1)) if m else None


def toml_error_message(err: tomllib.TOMLDecodeError) -> Said:
    """tomllib's reason (its own words), without the line it names (the problem has the line)."""
    return Said(
        "problem.toml", detail=_TOML_LINE.sub("", str(err)).replace("(, column", "(column").replace(" ()", "")
    )


def read_text(file: Path, problems: list[Problem], required: bool = True) -> str | None:
    """The file's text, or None with a problem: missing, unreadable, not UTF-8, or empty."""
    if not file.is_file():
        if required:
            problems.append(error(file, Said("problem.file.missing")))
        return None
    try:
        raw = file.read_bytes()
    except OSError as err:
        problems.append(error(file, Said("problem.file.unreadable", why=str(err.strerror or err))))
        return None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        problems.append(
            error(
                file,
                Said("problem.file.not_utf8", byte=f"0x{raw[err.start]:02x}", column=column),
                line=line,
            )
        )
        return None
    if not text.strip():
        problems.append(error(file, Said("problem.file.empty")))
        return None
    return text


def load_toml(
    file: Path, model: type[M], problems: list[Problem], drop: tuple[str, ...] = ()
) -> tuple[M | None, str, dict]:
    """Parse and validate one TOML file. Returns (model or None, text, raw data after math conversion).

    `drop` are keys the loader sets itself (e.g. `folder`): an author writing them gets "unknown key".
    """
    text = read_text(file, problems)
    if text is None:
        return None, "", {}
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problems.append(error(file, toml_error_message(err), line=toml_error_line(err)))
        return None, text, {}
    _convert_local_texts(data, (), file, text, problems, data)
    for key in drop:
        if key in data:
            problems.append(
                error(file, Said("problem.key.loaders", key=key), field=key, line=line_of(text, (key,)))
            )
    try:
        result = model.model_validate({k: v for k, v in data.items() if k not in drop})
    except ValidationError as err:
        problems.extend(validation_problems(err, file, text, data, VOCABULARY))
        return None, text, data
    return result, text, data


def is_local_text(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "en" in value
        and all(k in LANGS_ALL and isinstance(v, str) for k, v in value.items())
    )


def _convert_local_texts(
    node: Any, loc: tuple, file: Path, text: str, problems: list[Problem], root: Any
) -> None:
    """Math -> Unicode and Chinese soft breaks joined, in place, in every localised text of the raw data."""
    if is_local_text(node):
        markdown = bool(loc) and loc[-1] in MARKDOWN_KEYS
        for lang, value in node.items():
            converted, issues = convert_math(value, markdown=markdown)
            node[lang] = join_cjk_lines(converted)
            for issue in issues:
                problems.append(
                    error(
                        file,
                        issue.message,
                        field=field_path(loc + (lang,), root),
                        line=line_of(text, loc + (lang,)),
                    )
                )
    elif isinstance(node, dict):
        for key, value in node.items():
            _convert_local_texts(value, loc + (key,), file, text, problems, root)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _convert_local_texts(value, loc + (i,), file, text, problems, root)


def missing_translations(data: Any, file: Path, text: str, item_field: str, loc: tuple = ()) -> list[Problem]:
    """One warning per language per item (a question, an exercise, the lesson) listing its untranslated texts."""
    missing: dict[str, list[str]] = {}

    def walk(node: Any, path: tuple) -> None:
        if is_local_text(node):
            for lang in LANGS_ALL:
                if lang not in node:
                    missing.setdefault(lang, []).append(field_path(path, data) or "text")
        elif isinstance(node, dict):
            for key, value in node.items():
                if key != "params":
                    walk(value, path + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, path + (i,))

    walk(data, ())
    return [
        warning(
            file,
            Said("problem.untranslated", lang=lang, fields=fields),
            field=item_field,
            line=line_of(text, loc) if loc else None,
        )
        for lang, fields in missing.items()
    ]
