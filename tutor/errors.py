"""The tutor's two kinds of failure, each with one root.

`TutorError`: something the tutor could not do, in words the user can act on (a lesson file, an
option, the store, a grader that gave no verdict). The CLI prints it as one message and exits 2.

`CheckFailure`: the learner's work or answer did not pass a check. Not a fault of the tutor or of
its input: its message is the feedback the learner reads, and a command that reports it exits 1.
Grading's CheckFailed (a wrong answer) and LearnerError (the learner's code raised) are under it.
The quiz's AnswerError (an input that is not an answer: asked again, nothing recorded) is a
TutorError.
"""


class TutorError(Exception):
    """Bad input or state that the user can fix; `str(err)` says what, where and what would be right."""


class CheckFailure(Exception):
    """A check of the learner's work or answer failed; `str(err)` is what the learner is told."""
