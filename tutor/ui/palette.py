"""The command palette's course entries (ctrl+p): every lesson, quiz, experiment and exercise, and
the places in the lessons' text where what was typed occurs.

Their own provider rather than App.get_system_commands, for the ranking: Textual's fuzzy score is
the same wherever a query sits in a title, so "alibi" tied the lesson, its quiz, the alibi
experiment and the alibi exercise, in the order they were listed (the exercise last). Here an
entry whose id is the query comes first, and the text's hits (tutor.content.search, in the
learner's language) come after every title that matches: a snippet with the match marked, and
choosing one opens the lesson at that section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from tutor.texts import has, say
from tutor.ui.messages import OpenExercise, OpenLesson, OpenQuiz

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp

EXACT_ID_BOOST = 2.0  # an experiment or exercise named exactly what was typed outranks any title
TEXT_SCORE = 0.2  # a hit in the lessons' text: below the titles that match (their scores are higher)


@dataclass(frozen=True)
class Entry:
    title: str
    help: str
    callback: Callable[[], object]
    ident: str | None = None  # the experiment's or exercise's id (shown in the title too)


def course_entries(app: TutorApp) -> list[Entry]:
    """The course's entries in the learner's language, lesson by lesson."""
    from tutor.i18n import pick

    lang, out = app.lang, []
    post = app.post_message
    for lesson in app.tutor.lessons:
        title = pick(lesson.title, lang)
        out.append(
            Entry(
                say("word.labelled", lang, label=say("cmd.lesson", lang), text=title),
                pick(lesson.summary, lang) or lesson.id,
                partial(post, OpenLesson(lesson.id)),
            )
        )
        if lesson.quiz:
            out.append(
                Entry(
                    say("word.labelled", lang, label=say("cmd.quiz", lang), text=title),
                    say("cmd.quiz_help", lang, n=len(lesson.quiz)),
                    partial(post, OpenQuiz(lesson.id)),
                )
            )
        for section in lesson.sections:
            for ref in section.experiments:
                key = f"exp.{ref.name}.title"
                name = say(key, lang) if has(key) else ref.name
                out.append(
                    Entry(
                        say(
                            "word.labelled",
                            lang,
                            label=say("cmd.experiment", lang),
                            text=say("word.named", lang, name=name, id=ref.name),
                        ),
                        f"{title} › {pick(section.title, lang)}",
                        partial(post, OpenLesson(lesson.id, section.id, ref.name)),
                        ref.name,
                    )
                )
        for ex in lesson.exercises:
            out.append(
                Entry(
                    say(
                        "word.labelled",
                        lang,
                        label=say("cmd.exercise", lang),
                        text=say("word.named", lang, name=pick(ex.title, lang), id=ex.id),
                    ),
                    title,
                    partial(post, OpenExercise(ex.id)),
                    ex.id,
                )
            )
    return out


class CourseCommands(Provider):
    """The course's entries, searched once the course is loaded. Home lists the lessons from the
    cards kept by the last start before that, so ctrl+p can be open and typed into first (a served
    session's first keys, a slow start under load); Textual's palette searches again only on the next
    key, so a search of the course not yet there found nothing and said 'No matches found' until then.
    Each search waits for the course instead (a search superseded by the next key is cancelled in its
    wait, which leaves the event as it was)."""

    @property
    def _entries(self) -> list[Entry]:
        return course_entries(cast("TutorApp", self.app))

    async def _loaded(self) -> None:
        await self.app.course_ready.wait()  # type: ignore[attr-defined]

    async def discover(self) -> Hits:
        await self._loaded()
        for entry in self._entries:
            yield DiscoveryHit(entry.title, entry.callback, help=entry.help)

    async def search(self, query: str) -> Hits:
        await self._loaded()
        matcher = self.matcher(query)
        wanted = query.strip().lower()
        for entry in self._entries:
            score = matcher.match(entry.title)
            if score > 0:
                if entry.ident is not None and entry.ident.lower() == wanted:
                    score *= EXACT_ID_BOOST
                yield Hit(score, matcher.highlight(entry.title), entry.callback, help=entry.help)
        for hit in text_hits(cast("TutorApp", self.app), query):
            yield hit


_passages: dict[tuple[int, str], list] = {}  # (id of the course, language) -> its passages


def text_hits(app: TutorApp, query: str) -> list[Hit]:
    """Where `query` occurs in the lessons' text in the learner's language, in course order: the
    section's place and a snippet with the match marked; choosing one opens the lesson there."""
    from tutor.content.search import find, passages, searchable, snippet
    from tutor.i18n import pick

    course, lang = app.tutor.course, app.lang
    if course is None or not searchable(query):
        return []
    key = (id(course), lang)
    if key not in _passages:  # made on the first search in a language, never at start-up
        _passages.clear()
        _passages[key] = passages(course, lang)
    hits = []
    for rank, (passage, start, end) in enumerate(find(_passages[key], query)):
        lesson = app.tutor.lesson(passage.lesson)
        assert lesson is not None  # a passage of this course
        section = next(s for s in lesson.sections if s.id == passage.section)
        shown, at, until = snippet(passage.text, start, end)
        line = Text(shown)
        line.stylize("bold reverse", at, until)
        place = f"{pick(lesson.title, lang)} › {pick(section.title, lang)}"
        where = say("word.labelled", lang, label=say("cmd.in_text", lang), text=place)
        hits.append(
            Hit(
                TEXT_SCORE * (1 - rank / 1000),
                line,
                partial(app.post_message, OpenLesson(lesson.id, section.id)),
                text=shown,
                help=where,
            )
        )
    return hits
