"""The tutor's two kinds of failure, each with one root.

`TutorError`: something the tutor could not do, in words the user can act on (a lesson file, an
option, the store, a grader that gave no verdict). The CLI prints it as one message and exits 2.

`CheckFailure`: the learner's work or answer did not pass a check. Not a fault of the tutor or of
its input: its message is the feedback the learner reads, and a command that reports it exits 1.
Grading's CheckFailed (a wrong answer) and LearnerError (the learner's code raised) are under it.
The quiz's AnswerError (an input that is not an answer: asked again, nothing recorded) is a
TutorError.
"""

from typing import Any


class TutorError(Exception):
    """Bad input or state that the user can fix: what, where and what would be right.

    It carries a catalogue key and its values (`TutorError("err.lessons.not_found", path=...)`) and is
    worded where it is shown: `err.in_lang(lang)` at the command line's and the app's edge (and as
    a value of `say`), `str(err)` in English for logs and tests. Values stay as they are (paths,
    names, an OS's or pydantic's own detail); a value with an `in_lang` is worded in the same
    language. A caller that already speaks the learner's language may pass the worded text instead
    of a key (`TutorError(say(key, lang, ...))`)."""

    def __init__(self, key: str, /, **values: Any) -> None:
        super().__init__(key)
        self.key, self.values = key, values

    def in_lang(self, lang: str) -> str:
        from tutor.texts import has, say

        if not self.values and not has(self.key):
            return self.key  # already worded
        return say(self.key, lang, **self.values)

    def __str__(self) -> str:
        return self.in_lang("en")

    def __reduce__(self):  # pickled with its values (the default keeps only the key)
        return _rebuilt, (type(self), self.key, self.values)


def in_lang(err: BaseException, lang: str) -> str:
    """An exception's message in `lang`: one of ours worded from the catalogue, any other as it
    says it (Python's or the system's own words)."""
    return err.in_lang(lang) if isinstance(err, TutorError) else str(err)


def _rebuilt(cls: type[TutorError], key: str, values: dict[str, Any]) -> TutorError:
    err = cls.__new__(cls)
    TutorError.__init__(err, key, **values)
    return err


class CheckFailure(Exception):
    """A check of the learner's work or answer failed; `str(err)` is what the learner is told."""
