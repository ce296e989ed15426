"""The store's names, in one place: its file, the marks that make a SQLite file ours, its tables and each
table's columns as the migrations leave them (tests/test_progress_store.py compares them with a migrated
file and with the records).

Standard library only, and nothing of the store: the fast home reader (glance), which reads the file
directly before the store's modules load, and the class view name tables and columns through these, as
the store, its records and its export do.

    from tutor.progress.schema import QUIZ_ANSWERS as A
    f"SELECT {A.lesson}, {A.at} FROM {A} WHERE {A.exercise} IS NULL"   # a name it lacks is an AttributeError
"""

from __future__ import annotations

FILE_NAME = "progress.sqlite3"  # in the learner's home
APPLICATION_ID = (
    0x41545554  # "ATUT": marks a SQLite file as ours, so a foreign database at our path is recognised
)
LAST_LOCATION = "last_location"  # the kv key of "continue where I left off"
SETTINGS = "settings."  # the kv keys of the learner's settings start so ("settings.new_per_day")


class Table:
    """A table: `str(table)` is its name, and each of its columns is an attribute holding its own name
    (`QUIZ_ANSWERS.lesson == "lesson"`), so SQL written with them names nothing the table lacks."""

    __slots__ = ("table", "columns")

    def __init__(self, table: str, *columns: str) -> None:
        self.table = table
        self.columns = columns

    def __str__(self) -> str:
        return self.table

    def __repr__(self) -> str:
        return f"Table({self.table!r})"

    def __getattr__(self, column: str) -> str:  # only for names that are not slots: the columns
        if column in self.columns:
            return column
        raise AttributeError(f"table {self.table} has no column {column!r}")


SECTION_READS = Table("section_reads", "lesson", "section", "first_at", "last_at", "imported")
QUIZ_ANSWERS = Table(
    "quiz_answers",
    "id",
    "lesson",
    "question",
    "exercise",
    "answer",
    "correct",
    "rating",
    "used_hint",
    "counted",
    "session",
    "at",
    "imported",
)
REVIEW_CARDS = Table(
    "review_cards", "lesson", "question", "card", "due", "last_review", "reviews", "lapses", "imported"
)
SUBMISSIONS = Table(
    "submissions",
    "id",
    "exercise",
    "at",
    "sha256",
    "status",
    "score",
    "max_score",
    "checks",
    "hints_revealed",
    "imported",
)
HINT_REVEALS = Table("hint_reveals", "id", "exercise", "hint", "at", "imported")
EXPERIMENT_RUNS = Table("experiment_runs", "id", "name", "params", "metrics", "note", "at", "imported")
TRAINING_RUNS = Table(
    "training_runs",
    "key",
    "config",
    "status",
    "final_val_loss",
    "params",
    "seconds",
    "curve",
    "at",
    "imported",
)
KV = Table("kv", "key", "value", "at", "imported")

# every table, in export order: each is exported and imported (progress --export, --import)
ALL = (
    SECTION_READS,
    QUIZ_ANSWERS,
    REVIEW_CARDS,
    SUBMISSIONS,
    HINT_REVEALS,
    EXPERIMENT_RUNS,
    TRAINING_RUNS,
    KV,
)
TABLES = tuple(str(t) for t in ALL)
