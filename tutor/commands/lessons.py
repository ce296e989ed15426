"""`python -m tutor lessons` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "lessons (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'lessons' is not built yet")
