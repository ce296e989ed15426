"""Errors of the experiment engine (no torch, no Textual)."""

from tutor.errors import TutorError


class ExperimentError(TutorError):
    """Bad name, bad parameter, or input the experiment cannot use; the message says what would be right."""


class Cancelled(Exception):
    """The run was cancelled by its caller (cancel event set, or the child process was terminated)."""
