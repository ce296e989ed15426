"""`python -m tutor quiz` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "quiz (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'quiz' is not built yet")
