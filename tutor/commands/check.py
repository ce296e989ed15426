"""`python -m tutor check` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "check (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'check' is not built yet")
