"""The one error type of the models package: bad input or state that the user can fix.

tutor/model/ imports nothing from tutor/, so the tutor's CLI and app catch ModelError beside their own TutorError.
"""


class ModelError(Exception):
    """`str(err)` says what is wrong and where (file, entry, line), and what would be right."""
