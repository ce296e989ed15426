"""`python -m tutor` with no subcommand: the full-screen app (placeholder until its issue lands)."""

from tutor.errors import TutorError


def run_app(ctx) -> int:
    raise TutorError("the full-screen app is not built yet; see `python -m tutor --help`")
