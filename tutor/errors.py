"""Errors the user can act on: the CLI prints them as one clear message and exits 2."""


class TutorError(Exception):
    """Bad input or state that the user can fix; `str(err)` says what, where and what would be right."""
