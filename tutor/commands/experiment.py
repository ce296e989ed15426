"""`python -m tutor experiment` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "experiment (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'experiment' is not built yet")
