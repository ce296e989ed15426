"""What the lesson scanner makes of every shipped lesson, to compare one implementation with another.

`render(folder)` is every output of tutor.content.markdown for one lesson folder: each language
file's blocks, its prose converted (`convert_prose`), its sections as the loader reads them, each
section body split for the UI (`split_body`), and the loaded lesson (the TOML texts converted too),
with every problem found. tests/lesson_render.json holds, per lesson, a hash of its source files
and a hash of that output as the scanner made it before it moved to markdown-it-py;
tests/test_content_render.py compares.

    python tests/lesson_render.py --dump out.json      # the full output, to diff two versions
    python tests/lesson_render.py --write              # rewrite the fixture (after checking a diff)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).with_name("lesson_render.json")
sys.path.insert(0, str(ROOT))

from tutor.content.loader import load_course  # noqa: E402
from tutor.content.markdown import blocks, convert_prose, split_body  # noqa: E402
from tutor.content.prose import parse_language_file  # noqa: E402
from tutor.settings import shipped_lessons_dir  # noqa: E402


def sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in {".md", ".toml"} and p.is_file())


def source_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sources(folder):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _problems(problems, base: Path) -> list[str]:
    return [p.format(base) for p in problems]


def _part(part) -> object:
    return part if isinstance(part, str) else {"experiment": part.name, "params": part.params}


def render(folder: Path) -> dict:
    out: dict = {}
    for md in sorted(folder.glob("*.md")):
        text = md.read_text(encoding="utf-8")
        converted, issues = convert_prose(text)
        sections, problems = parse_language_file(text, md)
        out[md.name] = {
            "blocks": [[b.kind, b.start, b.lines, b.info, b.closed] for b in blocks(text)],
            "convert_prose": [converted, [[i.line, str(i.message)] for i in issues]],
            "sections": [
                {
                    "id": s.id,
                    "title": s.title,
                    "line": s.line,
                    "body": s.body,
                    "experiments": [[e.name, e.params, e.line] for e in s.experiments],
                    "split_body": [_part(p) for p in split_body(s.body)],
                }
                for s in sections
            ],
            "problems": _problems(problems, folder),
        }
    course = load_course(folder.parent)
    lesson = next((x for x in course.lessons if x.id == folder.name or x.folder == folder), None)
    out["lesson"] = lesson.model_dump(mode="json") if lesson is not None else None
    out["course_problems"] = _problems([p for p in course.problems if folder in p.file.parents], folder)
    return out


def as_json(rendered: dict, indent: int | None = None) -> str:
    """The output as JSON, this checkout's path written as <root> (the loaded lesson names its folder)."""
    text = json.dumps(rendered, indent=indent, sort_keys=True, ensure_ascii=False)
    return text.replace(json.dumps(str(ROOT))[1:-1], "<root>")


def output_hash(rendered: dict) -> str:
    return hashlib.sha256(as_json(rendered).encode()).hexdigest()


def shipped() -> list[Path]:
    return sorted(p for p in shipped_lessons_dir().iterdir() if (p / "lesson.toml").is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", type=Path, help="write the full output of every shipped lesson here")
    parser.add_argument("--write", action="store_true", help=f"rewrite {FIXTURE.name}")
    args = parser.parse_args()
    rendered = {folder.name: render(folder) for folder in shipped()}
    if args.dump:
        args.dump.write_text(as_json(rendered, indent=1) + "\n", encoding="utf-8")
    if args.write:
        fixture = {
            folder.name: {"source": source_hash(folder), "output": output_hash(rendered[folder.name])}
            for folder in shipped()
        }
        FIXTURE.write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
