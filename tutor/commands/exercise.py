"""`python -m tutor exercise` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "exercise (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'exercise' is not built yet")
