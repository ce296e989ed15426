"""One language file of a lesson (en.md, de.md, zh.md) -> its sections, with every problem found.

# Lesson title                    (optional first line, ignored: the title is in lesson.toml)
## Section title {#section-id}    starts a section
...prose, code fences, ```experiment NAME``` fences...
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tutor.content.markdown import Block, blocks, convert_math, convert_prose, parse_params
from tutor.content.problems import Problem, error
from tutor.content.schema import ExperimentRef
from tutor.content.tomlfile import toml_error_line, toml_error_message
from tutor.texts import Said


@dataclass
class ProseSection:
    id: str
    title: str
    line: int  # 1-based line of the heading
    body_lines: list[str] = field(default_factory=list)
    body_start: int = 0  # 0-based line index of the first body line
    body: str = ""
    experiments: list[ExperimentRef] = field(default_factory=list)
    broken_fence: bool = False  # an experiment fence here failed to parse


_H2 = re.compile(r"^ {0,3}##(?!#)\s*(.*?)\s*#*\s*$")
_H1 = re.compile(r"^ {0,3}#(?!#)\s")
_TITLE_ID = re.compile(r"^(.*?)\s*\{#([^}]*)\}$")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def parse_language_file(text: str, file: Path) -> tuple[list[ProseSection], list[Problem]]:
    problems: list[Problem] = []
    sections, stray = _split(text, file, problems)
    if stray is not None:
        problems.append(error(file, Said("problem.prose.stray"), line=stray))
    if not sections:
        problems.append(error(file, Said("problem.prose.no_sections")))
    ids: dict[str, int] = {}
    for s in sections:
        if s.id in ids:
            said = Said("problem.prose.duplicate", line=ids[s.id])
            problems.append(error(file, said, field=f"section[{s.id}]", line=s.line))
        ids.setdefault(s.id, s.line)
        problems += _convert_body(s, file)
    return sections, problems


def _split(text: str, file: Path, problems: list[Problem]) -> tuple[list[ProseSection], int | None]:
    """The sections the `##` headings start, each with its body lines and experiment fences; and the
    first line of text before any section (the optional `# Lesson title` line aside), if any."""
    sections: list[ProseSection] = []
    stray: int | None = None
    seen_text = False
    for block in blocks(text):
        if block.kind == "fence":
            fence_problems = _check_fence(block, file, sections)
            problems += fence_problems
            if sections:
                sections[-1].broken_fence |= bool(fence_problems)
                sections[-1].body_lines += block.lines
            elif stray is None:
                stray = block.start + 1
            continue
        for index, line in enumerate(block.lines, block.start):
            if m := _H2.match(line):
                sections.append(_heading(m.group(1), index + 1, file, problems))
            elif sections:
                sections[-1].body_lines.append(line)
            elif line.strip():
                is_title = not seen_text and _H1.match(line)  # the optional `# Lesson title` line
                if stray is None and not is_title:
                    stray = index + 1
                seen_text = True
    return sections, stray


def _convert_body(s: ProseSection, file: Path) -> list[Problem]:
    """Fill in `s.body`, its prose converted (math to Unicode); the problems at their lines in the file."""
    body = "\n".join(s.body_lines).strip("\n")
    lead = len(s.body_lines) - len("\n".join(s.body_lines).lstrip("\n").split("\n"))
    s.body, issues = convert_prose(body)
    where = f"section[{s.id}]"
    return [error(file, i.message, field=where, line=s.body_start + lead + i.line + 1) for i in issues]


def _heading(raw: str, line: int, file: Path, problems: list[Problem]) -> ProseSection:
    m = _TITLE_ID.match(raw)
    title, ident = (m.group(1), m.group(2).strip()) if m else (raw, "")
    if not m:
        problems.append(error(file, Said("problem.prose.no_id"), field="section", line=line))
        ident = f"line-{line}"
    elif not _SLUG.match(ident):
        problems.append(
            error(
                file,
                Said("problem.prose.bad_id", id=ident),
                field="section",
                line=line,
            )
        )
    if not title.strip():
        problems.append(error(file, Said("problem.prose.no_title"), field=f"section[{ident}]", line=line))
    converted, issues = convert_math(title, markdown=False)
    for issue in issues:
        problems.append(error(file, issue.message, field=f"section[{ident}].title", line=line))
    return ProseSection(id=ident, title=converted.strip(), line=line, body_start=line)


def _check_fence(block: Block, file: Path, sections: list[ProseSection]) -> list[Problem]:
    where = f"section[{sections[-1].id}]" if sections else "section"
    line = block.start + 1
    if not block.closed:
        return [
            error(
                file,
                Said("problem.prose.open_fence"),
                field=where,
                line=line,
            )
        ]
    m = block.experiment()
    if not m:
        return []
    if not m.group(1):
        return [error(file, Said("problem.prose.no_name"), field=where, line=line)]
    if m.group(2):
        return [error(file, Said("problem.prose.after_name", text=repr(m.group(2))), field=where, line=line)]
    name = m.group(1)
    try:
        params = parse_params(block.body)
    except tomllib.TOMLDecodeError as err:
        at = toml_error_line(err)
        return [
            error(
                file,
                Said("problem.prose.params", detail=toml_error_message(err)),
                field=f"{where}.experiment[{name}]",
                line=line + at if at else line,
            )
        ]
    if sections:
        sections[-1].experiments.append(ExperimentRef(name=name, params=params, line=line))
    return []
