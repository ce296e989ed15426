"""`python -m tutor grade` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "grade (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'grade' is not built yet")
