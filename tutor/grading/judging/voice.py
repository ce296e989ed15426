"""The language checks write in, and the failure they raise: set per job by the judge (`speaking`), read by
the check API (tutor.grading.kit, which re-exports all of it) and by the learner's module handles
(tutor.grading.judging.remote) alike."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tutor.errors import CheckFailure, TutorError
from tutor.texts import say

# (language, the exercise's messages in it): set by the judge for its job, by runs.py for its grade
_VOICE: ContextVar[tuple[str, dict[str, str]]] = ContextVar("tutor_grading_voice", default=("en", {}))


class CheckFailed(CheckFailure, AssertionError):
    """The learner's code ran but gave a wrong answer; the message says expected vs got."""


class MessageMissing(TutorError, LookupError):
    """A check asked for a message its exercise.toml does not have: the exercise's fault, not the
    learner's (`python -m tutor check` finds these before a learner does)."""


@contextmanager
def speaking(lang: str, messages: dict[str, str]) -> Iterator[None]:
    """Checks run inside this write their messages in `lang`; `messages` is the exercise's
    `[messages]` table in that language ({key: text}, English where a translation is missing)."""
    token = _VOICE.set((lang, dict(messages)))
    try:
        yield
    finally:
        _VOICE.reset(token)


def lang() -> str:
    """The language the checks are writing in."""
    return _VOICE.get()[0]


def msg(key: str, /, **values: Any) -> str:
    """The exercise's message `key` in the learner's language, with `values` filled in as given."""
    messages = _VOICE.get()[1]
    if key not in messages:
        raise MessageMissing(f"the exercise's exercise.toml has no [messages] entry {key!r}")
    return messages[key].format(**values)


def tell(key: str, **values: Any) -> str:
    """A text of the tutor's own catalogue in the learner's language; values are used as given."""
    return say(key, lang(), **{k: v if isinstance(v, str) else str(v) for k, v in values.items()})
