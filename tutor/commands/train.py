"""`python -m tutor train` (placeholder until its issue lands)."""

from tutor.errors import TutorError

HELP = "train (not built yet)"


def add_arguments(parser) -> None:
    pass


def run(args, ctx) -> int:
    raise TutorError("'train' is not built yet")
