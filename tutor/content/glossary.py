"""The course's glossary (`glossary.toml` beside the lesson folders) and the term check.

The glossary fixes one word per term and language and lists the words that must not stand in for it:

    [loss]
    means = "what training minimises: the cross-entropy of the next character, in nats"
    en = { use = "loss" }
    de = { use = "Verlust", refuse = ["Loss"] }
    zh = { use = "损失", refuse = ["loss"] }

`Glossary.drift(lang, text)` finds every refused word in a text of that language. Code is not
prose: code blocks, `inline code`, `{placeholders}` and `--options` are left out. A refused word
written in Latin letters is found as a whole word (`Loss` finds "Validierungs-Loss", not "Glossar";
a plural is a word of its own); one in Chinese characters anywhere (`热图` is not in `热力图`). A space
in a refused word matches any run of spaces or a line break. Where a refused word means something
else, `allow` names the longer phrases it may stand in (`键` in `关键`, `字符` in `字符串`), in any
term of the language; such a phrase may hold a `{placeholder}`.

`check_terms(course)` reads every text of the course's files, each in its own language (the prose
`de.md`, the `de` texts of lesson.toml, quiz.toml and each exercise.toml) and reports each refused
word as `FILE:LINE: term[ID]: ...`; `python -m tutor check` runs it. A lessons folder without a
glossary.toml is not checked.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from tutor.content.problems import Problem, error, line_of, validation_problems
from tutor.content.schema import Slug, Strict
from tutor.content.tomlfile import read_text, toml_error_line, toml_error_message
from tutor.i18n import LANGS

GLOSSARY = "glossary.toml"


class Usage(Strict):
    """One language's word for a term."""

    use: str  # the word to write; "…" stands for the text between two marks („…“)
    refuse: list[str] = []  # words that must not stand in for it
    allow: list[str] = []  # longer phrases in which a refused word means something else


class Term(Strict):
    means: str  # what the term names, for authors (the English side of the course)
    en: Usage
    de: Usage
    zh: Usage

    def usage(self, lang: str) -> Usage:
        return getattr(self, lang)


_TERMS = TypeAdapter(dict[Slug, Term])


def read_glossary(lessons_dir: Path, problems: list[Problem]) -> Glossary | None:
    """The glossary of a lessons folder; None when it has none, or when it does not parse (problems added)."""
    file = lessons_dir / GLOSSARY
    if not file.exists():
        return None
    text = read_text(file, problems)
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problems.append(error(file, toml_error_message(err), line=toml_error_line(err)))
        return None
    try:
        return Glossary(_TERMS.validate_python(data))
    except ValidationError as err:
        vocabulary = set(Term.model_fields) | set(Usage.model_fields)
        problems.extend(validation_problems(err, file, text, data, vocabulary))
        return None


# --- finding refused words ------------------------------------------------------------------------

_LATIN = "A-Za-z0-9_À-ɏ"
_NOT_PROSE = re.compile(
    r"```.*?```"  # a fenced block (code, an experiment's parameters)
    r"|`[^`]*`"  # inline code, also across a line break
    r"|\{[^{}\n]*\}"  # a placeholder of the catalogue or of an exercise's messages
    r"|(?<![\w-])--?[A-Za-z][\w-]*",  # a command-line option
    re.S,
)


@dataclass(frozen=True)
class Drift:
    term: str  # the term's id
    word: str  # the refused word, as the glossary writes it
    use: str  # the word to write instead
    offset: int  # where in the text it was found


def prose(text: str) -> str:
    """`text` with its code, placeholders and options blanked out, line breaks and offsets kept."""
    return _NOT_PROSE.sub(lambda m: re.sub(r"[^\n]", "\0", m.group(0)), text)


def _pattern(word: str) -> str:
    """A word as a regular expression: spaces match any white space; Latin letters only as a whole word."""
    body = r"\s+".join(re.escape(part) for part in word.split())
    if re.match(f"[{_LATIN}]", word):
        body = f"(?<![{_LATIN}])" + body
    if re.search(f"[{_LATIN}]$", word):
        body += f"(?![{_LATIN}])"
    return body


@dataclass(frozen=True)
class _Word:
    term: str
    word: str
    use: str
    cue: str  # a plain string every match contains: a cheap test before the pattern
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, term: str, word: str, use: str) -> _Word:
        return cls(term, word, use, word.split()[0], re.compile(_pattern(word)))


class Glossary:
    """The terms, with each language's allowed phrases and refused words ready to look for."""

    def __init__(self, terms: dict[str, Term]):
        self.terms = terms
        self._allow: dict[str, list[_Word]] = {}
        self._refuse: dict[str, list[_Word]] = {}
        for lang in LANGS:
            usages = [(term_id, t.usage(lang)) for term_id, t in terms.items()]
            self._allow[lang] = [_Word.of(i, a, u.use) for i, u in usages for a in u.allow]
            self._refuse[lang] = [_Word.of(i, w, u.use) for i, u in usages for w in u.refuse]

    def drift(self, lang: str, text: str) -> list[Drift]:
        """Every refused word of `lang` in `text` (a text in that language), in the order they appear;
        where two overlap (前半句 and 半句), the longer one."""
        for a in self._allow.get(lang, []):
            if a.cue in text:
                text = a.pattern.sub(lambda m: "\0" * len(m.group(0)), text)
        text = prose(text)
        hits = [
            (m.start(), -m.end(), w)
            for w in self._refuse.get(lang, [])
            if w.cue in text
            for m in w.pattern.finditer(text)
        ]
        found: list[Drift] = []
        end = -1
        for start, neg_end, w in sorted(hits, key=lambda h: h[:2]):
            if -neg_end > end:
                found.append(Drift(w.term, w.word, w.use, start))
                end = -neg_end
        return found


# --- the course's texts, each with where it stands ------------------------------------------------


@dataclass(frozen=True)
class CourseText:
    lang: str
    file: Path
    text: str
    place: Callable[[], int | None]  # the line the text starts on, looked up only when needed


def toml_texts(file: Path) -> Iterator[CourseText]:
    """Every `{ en = …, de = …, zh = … }` text of a lesson data file, one per language."""
    raw = file.read_text(encoding="utf-8")
    lines = [line.replace('\\"', '"').replace("\\\\", "\\") for line in raw.splitlines()]

    def place(loc: tuple, value: str) -> int | None:
        """The line holding the value's first line: of those, the first at or below its key's line
        (`line_of`), one that names the language's key (`de =`) first."""
        near = line_of(raw, loc) or 1
        first = value.strip().split("\n")[0][:16]
        found = [n for n, line in enumerate(lines) if first and first in line]
        keyed = [n for n in found if re.search(rf"(^|[\s{{,.]){loc[-1]}\s*=", lines[n])]
        pool = keyed or found
        below = [n for n in pool if n + 1 >= near]
        return (below or pool)[0] + 1 if pool else near

    def walk(node, loc: tuple) -> Iterator[CourseText]:
        if isinstance(node, dict):
            for lang in LANGS:
                if isinstance(value := node.get(lang), str):
                    yield CourseText(lang, file, value, partial(place, loc + (lang,), value))
            for key, value in node.items():
                if isinstance(value, dict | list):
                    yield from walk(value, loc + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, loc + (i,))

    yield from walk(tomllib.loads(raw), ())


def lesson_texts(lessons_dir: Path) -> Iterator[CourseText]:
    """Every text of every lesson folder, each in its language: the prose, then the data files."""
    for folder in sorted(p for p in lessons_dir.iterdir() if p.is_dir() and p.name[0] not in "._"):
        for lang in LANGS:
            md = folder / f"{lang}.md"
            try:
                yield CourseText(lang, md, md.read_text(encoding="utf-8"), lambda: 1)
            except (OSError, UnicodeDecodeError):  # missing or unreadable: the loader reports it
                continue
        data = [
            folder / "lesson.toml",
            folder / "quiz.toml",
            *sorted(folder.glob("exercises/*/exercise.toml")),
        ]
        for file in data:
            try:
                yield from toml_texts(file)
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):  # the loader reports it
                continue


def problems_in(glossary: Glossary, texts: Iterator[CourseText]) -> list[Problem]:
    """One error per refused word, at its file and line."""
    problems = []
    for item in texts:
        for d in glossary.drift(item.lang, item.text):
            start = item.place()
            line = None if start is None else start + item.text.count("\n", 0, d.offset)
            problems.append(
                error(
                    item.file,
                    f"{item.lang}: {d.word!r} is not the course's word here; write {d.use!r} (glossary.toml)",
                    field=f"term[{d.term}]",
                    line=line,
                )
            )
    return problems


def check_terms(course) -> list[Problem]:
    """The course's texts against its glossary (none checked when the folder has no glossary.toml)."""
    problems: list[Problem] = []
    glossary = read_glossary(course.lessons_dir, problems)
    if glossary is None:
        return problems
    return problems + problems_in(glossary, lesson_texts(course.lessons_dir))
