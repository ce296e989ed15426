"""`python -m tutor progress` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "progress (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'progress' is not built yet")
