"""The store's schema as an append-only list of migrations; `PRAGMA user_version` = how many ran.

Never edit a migration that has shipped: add a new one. Each is a list of single statements
(not a script), because `executescript` would commit in the middle of the migration's transaction.
"""

from __future__ import annotations

MIGRATIONS: list[list[str]] = [
    # 1: the first schema
    [
        """CREATE TABLE section_reads (
            lesson TEXT NOT NULL, section TEXT NOT NULL,
            first_at TEXT NOT NULL, last_at TEXT NOT NULL,
            PRIMARY KEY (lesson, section))""",
        """CREATE TABLE quiz_answers (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            lesson TEXT NOT NULL, question TEXT NOT NULL, exercise TEXT,
            answer TEXT NOT NULL, correct INTEGER, rating INTEGER,
            used_hint INTEGER NOT NULL DEFAULT 0, counted INTEGER NOT NULL DEFAULT 0,
            session TEXT, at TEXT NOT NULL)""",
        "CREATE INDEX quiz_answers_item ON quiz_answers (lesson, exercise, question, at)",
        """CREATE TABLE review_cards (
            lesson TEXT NOT NULL, question TEXT NOT NULL,
            card TEXT NOT NULL, due TEXT NOT NULL, last_review TEXT,
            reviews INTEGER NOT NULL DEFAULT 0, lapses INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (lesson, question))""",
        "CREATE INDEX review_cards_due ON review_cards (due)",
        """CREATE TABLE submissions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            exercise TEXT NOT NULL, at TEXT NOT NULL, sha256 TEXT NOT NULL,
            status TEXT NOT NULL, score REAL NOT NULL, max_score REAL NOT NULL,
            checks TEXT NOT NULL, hints_revealed INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX submissions_exercise ON submissions (exercise, at)",
        """CREATE TABLE hint_reveals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            exercise TEXT NOT NULL, hint TEXT NOT NULL, at TEXT NOT NULL)""",
        """CREATE TABLE experiment_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL, params TEXT NOT NULL, metrics TEXT NOT NULL,
            note TEXT, at TEXT NOT NULL)""",
        """CREATE TABLE training_runs (
            key TEXT PRIMARY KEY, config TEXT NOT NULL, status TEXT NOT NULL,
            final_val_loss REAL, params INTEGER, seconds REAL,
            curve TEXT NOT NULL, at TEXT NOT NULL)""",
        """CREATE TABLE kv (
            key TEXT PRIMARY KEY, value TEXT NOT NULL, at TEXT NOT NULL)""",
    ],
]

# the tables schema 1 made (a migration names what it changes as it was then, never the current list)
_SCHEMA_1_TABLES = (
    "section_reads",
    "quiz_answers",
    "review_cards",
    "submissions",
    "hint_reveals",
    "experiment_runs",
    "training_runs",
    "kv",
)

MIGRATIONS += [
    # 2: every row says whether it came from `progress --import` (1) or was recorded here (0); and the
    # non-finite losses schema 1 could store (a diverged run) become "no value", as the store now writes them
    [f"ALTER TABLE {table} ADD COLUMN imported INTEGER NOT NULL DEFAULT 0" for table in _SCHEMA_1_TABLES]
    + [
        "UPDATE training_runs SET curve ="
        " replace(replace(replace(curve, '-Infinity', 'null'), 'Infinity', 'null'), 'NaN', 'null')",
        "UPDATE training_runs SET final_val_loss = NULL WHERE abs(final_val_loss) > 1.7976931348623157e308",
        "UPDATE training_runs SET seconds = NULL WHERE abs(seconds) > 1.7976931348623157e308",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)  # the names the migrations leave: tutor/progress/schema.py
