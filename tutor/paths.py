"""Where things live: moved to tutor.settings, the one settings module.

Kept as a name for tutor/grading (being rewritten), which still imports its path helpers from here;
everything else imports them from tutor.settings.
"""

from tutor.settings import (
    APP_NAME,
    LEARNED_CHECKPOINT,
    ROPE_SHORT_CHECKPOINT,
    checkpoints_dir,
    default_checkpoint,
    default_home,
    models_dir,
    shipped_lessons_dir,
    tutor_child_env,
)

__all__ = [
    "APP_NAME",
    "LEARNED_CHECKPOINT",
    "ROPE_SHORT_CHECKPOINT",
    "checkpoints_dir",
    "default_checkpoint",
    "default_home",
    "models_dir",
    "shipped_lessons_dir",
    "tutor_child_env",
]
