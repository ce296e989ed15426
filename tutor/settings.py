"""The tutor's settings in one place: the environment variables it reads, where things live, and
its timeouts and limits.

No other module reads a variable from `os.environ` (tests/test_layers.py checks it); the grading
sandbox's own rules (sandbox.py) stay beside the code that enforces them. Nothing here imports more than
the standard library (platformdirs only when the default home or cache is asked for), so every layer may
import it.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path

# --- environment variables ---------------------------------------------------------------------

ENVIRONMENT = {
    "TUTOR_HOME": "the learner's progress and workspace (default: the platform's user-data folder)",
    "TUTOR_CACHE": "parses kept for a fast next start (default: the platform's user-cache folder)",
    "TUTOR_LANG": "en, de or zh when --lang is not given (then the locale, then en)",
    "TUTOR_CHECKPOINTS": "a folder of checkpoints to use instead of the shipped tutor/model/checkpoints",
    "VISUAL": "the editor `e` opens in the app (else EDITOR)",
    "EDITOR": "the editor `e` opens when VISUAL is not set (neither: the app's built-in editor)",
    "LC_ALL": "the locale, for the language when neither --lang nor TUTOR_LANG says",
    "LC_MESSAGES": "the locale, after LC_ALL",
    "LANG": "the locale, after LC_MESSAGES",
    "TUTOR_ALLOW_WEAK_BOX": "1: grade even where the box is weaker than partial (as --allow-weak-box does)",
    "TUTOR_BOX_LANDLOCK_ABI": "use at most this Landlock ABI in the grading box (what an older kernel gives)",
    "TUTOR_SERVED": "set by `python -m tutor serve` for each learner's app (tutor.serve.session); never by hand",
    "JUPYTERHUB_PUBLIC_URL": "set by JupyterHub for a single-user server: the tutor's page has its origin (tutor.serve.hub)",
    "JUPYTERHUB_USER": "set by JupyterHub for a single-user server: the learner's id in the exchange (tutor.serve.hub)",
    "TUTOR_EXCHANGE": "behind JupyterHub: the course folder each learner's standing is published to (tutor.serve.hub)",
}
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def env(name: str) -> str | None:
    """The value of one of the ENVIRONMENT variables; None when it is unset or blank."""
    if name not in ENVIRONMENT:
        raise KeyError(f"{name} is not one of the tutor's settings ({', '.join(ENVIRONMENT)})")
    value = os.environ.get(name)
    return value if value and value.strip() else None


# --- where things live -------------------------------------------------------------------------

APP_NAME = "attention-tutor"
ROOT = Path(__file__).resolve().parents[1]  # the folder holding tutor/ (a checkout or site-packages)
CODE_PACKAGES = ("tutor",)  # the project's code, each a folder in ROOT: one name, everything under it
COURSE_MODEL = "tutor.model"  # the course GPT's package: the only code of ours a grading worker is handed


def is_course_module(name: str) -> bool:
    """Whether `name` is a module of the course GPT (tutor.model.gpt), which an exercise may hand to its
    worker file by file; the package itself and the rest of tutor/ (the grader, the lessons) never."""
    return name.startswith(COURSE_MODEL + ".")


LEARNED_CHECKPOINT = "gpt-learned.pt"  # the course GPT: default config, learned positions
ROPE_SHORT_CHECKPOINT = "gpt-rope-short.pt"  # RoPE at block_size 32, for context scaling


def _package_dir(name: str) -> Path:
    # the package's own folder (importlib.resources.files gives the same for these plain packages,
    # at the cost of importing zipfile and friends before the app's first frame)
    file = import_module(name).__file__
    assert file is not None  # a plain package: it has an __init__.py
    return Path(file).resolve().parent


def shipped_lessons_dir() -> Path:
    """The `tutor/lessons/` folder shipped with the package (works from a checkout and from a wheel)."""
    return _package_dir("tutor.lessons")


def models_dir() -> Path:
    """The course GPT's package, tutor/model/: its code, data and shipped checkpoints."""
    return _package_dir("tutor.model")


def checkpoints_dir() -> Path:
    """The shipped checkpoints; `TUTOR_CHECKPOINTS` points at another folder (tests, development)."""
    folder = env("TUTOR_CHECKPOINTS")
    return Path(folder).expanduser() if folder else models_dir() / "checkpoints"


def default_checkpoint() -> Path:
    """The trained course GPT shipped in the repository (learned positions, default config)."""
    return checkpoints_dir() / LEARNED_CHECKPOINT


def default_home() -> Path:
    """`TUTOR_HOME`, else the platform's user-data directory."""
    folder = env("TUTOR_HOME")
    if folder:
        return Path(folder).expanduser()
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def cache_dir() -> Path:
    """`TUTOR_CACHE`, else the platform's user-cache directory: what can be made again (parse_cache)."""
    folder = env("TUTOR_CACHE")
    if folder:
        return Path(folder).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path(APP_NAME, appauthor=False)


def allow_weak_box(allow: bool | None = None) -> bool:
    """Whether a grade may run in a box weaker than "partial" (TUTOR_ALLOW_WEAK_BOX=1); `allow=True`
    (the command line's --allow-weak-box) sets it for this process and every child it starts."""
    if allow:
        os.environ["TUTOR_ALLOW_WEAK_BOX"] = "1"
    return env("TUTOR_ALLOW_WEAK_BOX") in ("1", "true", "yes")


def box_landlock_abi() -> int | None:
    """The highest Landlock ABI the grading box may use (TUTOR_BOX_LANDLOCK_ABI); None: the kernel's."""
    value = env("TUTOR_BOX_LANDLOCK_ABI")
    return int(value) if value is not None and value.strip().isdigit() else None


def tutor_child_env() -> dict[str, str]:
    """Environment for a `python -m tutor ...` child process: this checkout's code (CODE_PACKAGES) first
    on the path (also when not installed), UTF-8 output, unbuffered so progress lines arrive at once."""
    child = dict(os.environ)
    child["PYTHONPATH"] = str(ROOT) + (os.pathsep + child["PYTHONPATH"] if child.get("PYTHONPATH") else "")
    child["PYTHONIOENCODING"] = "utf-8"
    child["PYTHONUNBUFFERED"] = "1"
    return child


# --- timeouts and limits -----------------------------------------------------------------------

# the app
LOAD_DELAY_S = 0.05  # the course loads this long after the first frame is out
MODE_SWITCH_HOLD_S = 0.01  # frames held back while a screen switch settles (Textual: 0.05)
PREPARE_RETRY_S = (
    0.25  # the quiz and lab made ahead (tutor.ui.first_frame.ScreensAhead): how soon to try again
)
QUIT_GRACE_S = 3.0  # quitting: children get SIGTERM, then SIGKILL after this; quitting never hangs longer
FILE_POLL_S = 1.0  # the exercise screen looks for a save of the learner's file this often
PLOT_EVERY_S = 1.0  # the live loss curve is redrawn at most this often (a redraw costs ~30 ms)
READ_AFTER_S = 4.0  # a lesson section counts as read once it has been on screen this long in all
TRAINING_GRACE_S = 1.0  # a training child started by the app: SIGTERM, then SIGKILL after this
TRAINING_NICENESS = 10  # training takes every core; niced, its sessions too (tutor.proc.spawn.lower_priority)

# experiments and child processes
CHILD_GRACE_S = 5.0  # an experiment child: SIGTERM, then SIGKILL after this
RESULT_CACHE_SIZE = 64  # experiment results kept per process
TRAINING_PROGRESS_EVERY_S = 0.25  # training progress events at most this often (plus every evaluation)
CHILD_LINE_LIMIT = 64 * 2**20  # bytes of one JSON line from a child: it may hold a whole result
CHILD_STDERR_TAIL = 4000  # characters of a child's stderr kept to explain a failure

# the progress store
STORE_BUSY_TIMEOUT_S = 5.0  # wait this long for another process's write before saying the store is busy
# far above any real export (a year of daily work is a few MB); refuses a wrong file before reading it
# whole. At the bound, 270,000 rows import in about 11 s with 0.4 GB peak (docs/figures.md)
EXPORT_MAX_BYTES = 64 * 2**20

# grading
GRADE_MEM_BYTES = 3 * 2**30  # the worker's address space: torch and a small GPT stay under 1 GB
GRADE_OUTPUT_CHARS = 8000  # characters of a submission's output kept in the grade
GRADE_TOTAL_BYTES = 16 * 2**20  # bytes a submission may write in all: output and files together
GRADE_JUDGE_SLACK_S = 30.0  # the judge's own start and torch import, beyond the submissions' limits
GRADE_MAX_SOURCE_BYTES = 1 * 2**20  # a learner's file; the references are 2-5 KB
# an instructor's batch (tutor.grading.instructor.collect; `grade --batch` changes each with a flag)
INTAKE_MAX_FILES = 5000  # *.py files one batch takes (--max-files)
INTAKE_MAX_MEMBERS = 10_000  # entries in one zip's directory, folders and all (--max-members)
INTAKE_MAX_ZIP_BYTES = 256 * 2**20  # bytes inflated from one zip, its zips in it included (--max-zip-mb)
INTAKE_MAX_RATIO = 100  # bytes inflated for each byte stored, of a member and of a zip (--max-ratio)
INTAKE_RATIO_FREE_BYTES = 64 * 2**10  # a member's or a zip's first bytes are never too compressed
INTAKE_MAX_DEPTH = 6  # folders and zips a file may be inside, below the batch (--max-depth)
GRADE_MAX_TASKS = 64  # processes and threads in one box: the box's parent, process 1 and the worker are 3
TRAIN_OWN_TIMEOUT_S = 900.0  # training the learner's own model in the box (exercise train): the whole run
GRADE_SAVE_TRIES = 2  # recording a grade: each try waits STORE_BUSY_TIMEOUT_S before the next
