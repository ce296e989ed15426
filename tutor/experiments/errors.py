"""Errors of the experiment engine (no torch, no Textual)."""

from tutor.errors import TutorError


class ExperimentError(TutorError):
    """Bad name, bad parameter, or input the experiment cannot use; the message says what would be right."""


class InvalidParams(ExperimentError, ValueError):
    """A check across parameters (params.py) failed: pydantic reports it as a ValueError, and
    registry.format_validation_error words it with the other problems."""


class Cancelled(Exception):
    """The run was cancelled by its caller (cancel event set, or the child process was terminated)."""
