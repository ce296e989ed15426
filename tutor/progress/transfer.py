"""Export, import and reset: moving progress between machines, and starting over without losing it.

The export is one JSON document holding every row of every table (minus row ids). Import merges
into what is there, so importing the same file twice changes nothing: append-only logs skip rows
already present; per-item state (section reads, review cards, training runs, kv) keeps the newer.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from models.atomic import atomic_write
from tutor.errors import TutorError
from tutor.progress.db import first_free, to_text
from tutor.progress.migrations import SCHEMA_VERSION, TABLES
from tutor.progress.store import Store

FORMAT = "attention-tutor-progress"
FORMAT_VERSION = 1

# Columns per table (without row ids) and what each must hold; logs are deduplicated on all of them.
# Kinds: text, int, real, bool, json (a JSON document as text), time (ISO timestamp with zone);
# a trailing "?" allows null.
SPEC: dict[str, dict[str, str]] = {
    "section_reads": {"lesson": "text", "section": "text", "first_at": "time", "last_at": "time"},
    "quiz_answers": {
        "lesson": "text",
        "question": "text",
        "exercise": "text?",
        "answer": "text",
        "correct": "bool?",
        "rating": "int?",
        "used_hint": "bool",
        "counted": "bool",
        "session": "text?",
        "at": "time",
    },
    "review_cards": {
        "lesson": "text",
        "question": "text",
        "card": "json",
        "due": "time",
        "last_review": "time?",
        "reviews": "int",
        "lapses": "int",
    },
    "submissions": {
        "exercise": "text",
        "at": "time",
        "sha256": "text",
        "status": "text",
        "score": "real",
        "max_score": "real",
        "checks": "json",
        "hints_revealed": "int",
    },
    "hint_reveals": {"exercise": "text", "hint": "text", "at": "time"},
    "experiment_runs": {"name": "text", "params": "json", "metrics": "json", "note": "text?", "at": "time"},
    "training_runs": {
        "key": "text",
        "config": "json",
        "status": "text",
        "final_val_loss": "real?",
        "params": "int?",
        "seconds": "real?",
        "curve": "json",
        "at": "time",
    },
    "kv": {"key": "text", "value": "json", "at": "time"},
}
COLUMNS: dict[str, tuple[str, ...]] = {table: tuple(spec) for table, spec in SPEC.items()}
LOGS = ("quiz_answers", "submissions", "hint_reveals", "experiment_runs")
# For state tables: the key, and the column whose larger value wins on import.
STATE_KEYS = {
    "section_reads": (("lesson", "section"), "last_at"),
    "review_cards": (("lesson", "question"), "last_review"),
    "training_runs": (("key",), "at"),
    "kv": (("key",), "at"),
}
assert set(COLUMNS) == set(TABLES) == set(LOGS) | set(STATE_KEYS)


def export_data(store: Store) -> dict[str, Any]:
    tables = {}
    for table in TABLES:
        cols = COLUMNS[table]
        order = "id" if table in LOGS else ", ".join(STATE_KEYS[table][0])
        rows = store.db.read(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}")
        tables[table] = [dict(r) for r in rows]
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "exported_at": to_text(store.now()),
        "tables": tables,
    }


def export_file(store: Store, path: Path) -> int:
    """Write the export to `path`; returns the number of rows written."""
    data = export_data(store)
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    try:  # atomic: an interrupted export never leaves a cut-off file (or cuts off an earlier one)
        atomic_write(Path(path), lambda fh: fh.write(text.encode("utf-8")))
    except OSError as err:
        raise TutorError(f"cannot write {path}: {err.strerror}") from None
    return sum(len(rows) for rows in data["tables"].values())


def read_export(path: Path) -> dict[str, Any]:
    """Load and validate an export file; TutorError naming the file and field on anything wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise TutorError(f"cannot read {path}: {err.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TutorError(f"{path} is not JSON: {err}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TutorError(f"{path}: not a tutor progress export (field 'format' should be {FORMAT!r})")
    if data.get("version") != FORMAT_VERSION:
        raise TutorError(
            f"{path}: export format version {data.get('version')!r} is not supported (need {FORMAT_VERSION})"
        )
    tables = data.get("tables")
    if not isinstance(tables, dict):
        raise TutorError(f"{path}: field 'tables' should be an object of table name -> rows")
    for name, rows in tables.items():
        if name not in COLUMNS:
            raise TutorError(f"{path}: unknown table {name!r} in 'tables' (known: {', '.join(TABLES)})")
        if not isinstance(rows, list):
            raise TutorError(f"{path}: tables.{name} should be a list of rows")
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or set(row) != set(COLUMNS[name]):
                raise TutorError(
                    f"{path}: tables.{name}[{i}] should have exactly the fields {', '.join(COLUMNS[name])}"
                )
            for field, kind in SPEC[name].items():
                if not _fits(row[field], kind):
                    raise TutorError(
                        f"{path}: tables.{name}[{i}].{field} should be {_KIND_WORDS[kind.rstrip('?')]}"
                        + (" or null" if kind.endswith("?") else "")
                        + f", not {row[field]!r}"
                    )
    return data


_KIND_WORDS = {
    "text": "a string",
    "int": "an integer",
    "real": "a number",
    "bool": "0 or 1",
    "json": "a JSON document in a string",
    "time": "an ISO timestamp with time zone",
}


def _fits(value: Any, kind: str) -> bool:
    if value is None:
        return kind.endswith("?")
    kind = kind.rstrip("?")
    if kind == "text":
        return isinstance(value, str)
    if kind in ("int", "bool"):
        return isinstance(value, int) and not isinstance(value, bool) and (kind == "int" or value in (0, 1))
    if kind == "real":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "json":
        try:
            json.loads(value)
        except (TypeError, ValueError):
            return False
        return True
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except (TypeError, ValueError):
        return False


def import_data(store: Store, data: dict[str, Any]) -> int:
    """Merge an export into the store in one transaction; returns how many rows were added or updated."""
    changed = 0
    with store.db.write() as c:
        for table, rows in data["tables"].items():
            cols = COLUMNS[table]
            placeholders = ", ".join("?" * len(cols))
            for raw in rows:
                row = {k: _stored(raw[k], SPEC[table][k]) for k in cols}
                values = tuple(row[k] for k in cols)
                if table in LOGS:
                    match = " AND ".join(f"{k} IS ?" for k in cols)
                    if c.execute(f"SELECT 1 FROM {table} WHERE {match}", values).fetchone():
                        continue
                    c.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({placeholders})", values)
                    changed += 1
                    continue
                keys, newer = STATE_KEYS[table]
                where = " AND ".join(f"{k} = ?" for k in keys)
                old = c.execute(
                    f"SELECT {newer} FROM {table} WHERE {where}", tuple(row[k] for k in keys)
                ).fetchone()
                if old is not None and (old[0] or "") >= (row[newer] or ""):
                    continue
                c.execute(
                    f"INSERT OR REPLACE INTO {table} ({', '.join(cols)}) VALUES ({placeholders})", values
                )
                changed += 1
    return changed


def _stored(value: Any, kind: str) -> Any:
    """A timestamp as the store writes it (UTC, fixed width): the store compares and orders them as text."""
    if value is not None and kind.rstrip("?") == "time":
        return to_text(datetime.fromisoformat(value))
    return value


def reset(store: Store, backup_dir: Path | None = None) -> Path:
    """Delete all progress, after writing a full export to `home/backups/` (returned) so it can be undone."""
    backup_dir = backup_dir or store.db.home / "backups"
    backup_dir.mkdir(parents=True, exist_ok=True)
    stamp = store.now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = first_free(lambda n: backup_dir / f"progress-before-reset-{stamp}{n}.json")
    export_file(store, backup)
    with store.db.write() as c:
        for table in TABLES:
            c.execute(f"DELETE FROM {table}")
    return backup
