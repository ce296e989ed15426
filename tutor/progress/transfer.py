"""Export, import and reset: moving progress between machines, and starting over without losing it.

The export is one JSON document holding every row of every table (minus row ids). Import merges
into what is there, so importing the same file twice changes nothing: append-only logs skip rows
already present; per-item state (section reads, review cards, training runs, kv) keeps the newer.

An import is checked whole before anything is written: every row and column, JSON columns included,
through the models the store reads its rows with (tutor.progress.records). A file is read only up to
EXPORT_MAX_BYTES (tutor.settings); a larger one is refused. The import is linear in its rows and the
store's: the check runs before the write lock is taken, and under it each table is read once and
written with one statement (`_merge`). If any row is bad nothing
is imported, and the error names each bad table[row].field. Imported rows are marked `imported`, so
progress can tell them from work done on this machine.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tutor.atomicio import atomic_write_text
from tutor.errors import TutorError
from tutor.progress.db import first_free, to_text
from tutor.progress.migrations import SCHEMA_VERSION
from tutor.progress.records import ROWS, problems, record_field_path, short
from tutor.progress.schema import TABLES
from tutor.progress.store import Store
from tutor.settings import EXPORT_MAX_BYTES
from tutor.texts import Said

FORMAT = "attention-tutor-progress"
FORMAT_VERSION = 1
MAX_LISTED = 20  # problems listed in one error message; the rest are counted

# Columns per table (without row ids and the imported mark): the fields of the table's row model.
# Logs are deduplicated on all of them.
COLUMNS: dict[str, tuple[str, ...]] = {
    table: tuple(name for name in ROWS[table].model_fields if name != "imported") for table in TABLES
}
LOGS = ("quiz_answers", "submissions", "hint_reveals", "experiment_runs")
# For state tables: the key, and the column whose larger value wins on import.
STATE_KEYS = {
    "section_reads": (("lesson", "section"), "last_at"),
    "review_cards": (("lesson", "question"), "last_review"),
    "training_runs": (("key",), "at"),
    "kv": (("key",), "at"),
}
assert set(COLUMNS) == set(ROWS) == set(LOGS) | set(STATE_KEYS)


class ImportRejected(TutorError):
    """Some rows of an import file are not valid; nothing was imported."""


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
        atomic_write_text(Path(path), text)
    except OSError as err:
        raise TutorError("err.export.cannot_write", path=str(path), why=err.strerror) from None
    return sum(len(rows) for rows in data["tables"].values())


def read_export(path: Path) -> dict[str, Any]:
    """Load an export file and check its format and version (import_data checks the rows)."""
    text = _read_text(Path(path))
    try:
        data = json.loads(text)
    except RecursionError:
        raise TutorError("err.export.too_deep", path=str(path)) from None
    except ValueError as err:
        raise TutorError("err.export.not_json", path=str(path), detail=str(err)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TutorError("err.export.not_export", path=str(path), format=repr(FORMAT))
    if data.get("version") != FORMAT_VERSION:
        raise TutorError(
            "err.export.version", path=str(path), got=short(data.get("version")), need=str(FORMAT_VERSION)
        )
    if not isinstance(data.get("tables"), dict):
        raise TutorError("err.export.no_tables", path=str(path))
    return data


def _read_text(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            raw = fh.read(EXPORT_MAX_BYTES + 1)
    except OSError as err:
        raise TutorError("err.export.cannot_read", path=str(path), why=err.strerror) from None
    if len(raw) > EXPORT_MAX_BYTES:
        raise TutorError("err.export.too_large", path=str(path), mb=EXPORT_MAX_BYTES // 2**20)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise TutorError("err.export.not_utf8", path=str(path), byte=str(err.start)) from None


def import_data(store: Store, data: dict[str, Any], *, source: str = "import") -> int:
    """Merge an export into the store: every row checked first, then all written in one transaction.

    Returns how many rows were added or updated. ImportRejected, and nothing written, if any row is bad;
    `source` (the file) starts each line of its message. Linear in the rows of the file and the store:
    the checks run before the write lock is taken; under it, each table's rows are read once and the
    new ones written in one statement per table (`_merge`)."""
    rows = checked_rows(data["tables"], source)
    by_table: dict[str, list[dict[str, Any]]] = {table: [] for table in TABLES}
    for table, row in rows:
        by_table[table].append(row)
    with store.db.write() as c:
        return sum(_merge(c, table, found) for table, found in by_table.items() if found)


def checked_rows(tables: dict[str, Any], source: str) -> list[tuple[str, dict[str, Any]]]:
    """Every (table, row) of an export's tables, as the store will write it; ImportRejected if any is bad."""
    found: list[tuple[str, dict[str, Any]]] = []
    bad: list[Said] = []
    for table, rows in tables.items():
        if table not in COLUMNS:
            where = f"{source}: tables.{record_field_path((table,))}"
            bad.append(Said("err.import.unknown_table", where=where, known=list(TABLES)))
            continue
        if not isinstance(rows, list):
            bad.append(Said("err.import.not_rows", where=f"{source}: {table}", got=short(rows)))
            continue
        for i, row in enumerate(rows):
            stored, wrong = _stored_row(table, row)
            bad += [Said("err.import.row", where=f"{source}: {table}[{i}]", problem=w) for w in wrong]
            if stored is not None:
                found.append((table, stored))
    if bad:
        listed = bad[:MAX_LISTED]
        if len(bad) > MAX_LISTED:
            listed.append(Said("err.import.more", n=len(bad) - MAX_LISTED))
        raise ImportRejected("err.import.rejected", source=source, n=len(bad), problems=listed)
    return found


def _stored_row(table: str, row: Any) -> tuple[dict[str, Any] | None, list[Said]]:
    """(the row as the store writes it: times in UTC, marked imported; None if bad), [".field: what is wrong"]."""
    if not isinstance(row, dict):
        return None, [Said("err.import.not_object", got=short(row))]
    model, columns = ROWS[table], COLUMNS[table]
    wrong = [
        Said("err.import.not_column", field=record_field_path((k,)), table=table, columns=list(columns))
        for k in row
        if k not in columns
    ]
    wrong += [
        Said("err.import.missing", field=k)
        for k in columns
        if k not in row and not model.model_fields[k].is_required()
    ]
    try:
        record = model.model_validate({k: row[k] for k in columns if k in row})
    except ValidationError as err:
        return None, wrong + [Said("err.import.field", problem=p) for p in problems(err)]
    if wrong:
        return None, wrong
    stored = {k: _stored(getattr(record, k), row[k]) for k in columns}
    return {**stored, "imported": 1}, []


def _stored(value: Any, raw: Any) -> Any:
    """A timestamp as the store writes it (UTC, fixed width: it compares and orders them as text)."""
    return to_text(value) if isinstance(value, datetime) else raw


def _merge(c: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> int:
    """Write the checked rows of one table the store lacks (a log: the same values in every column) or
    has older (state: the same key, an older `newer` column), in file order, as if written one by one;
    the number written. What the store holds is read once into a set (logs) or a dict (state), so the
    cost is linear (a log has no index over all its columns: a query per row scanned the whole table)."""
    columns = COLUMNS[table]
    if table in LOGS:
        held = {tuple(r) for r in c.execute(f"SELECT {', '.join(columns)} FROM {table}")}
        new = []
        for row in rows:
            values = tuple(row[k] for k in columns)
            if values not in held:
                held.add(values)
                new.append(row)
        written = len(new)
    else:
        keys, newer = STATE_KEYS[table]
        held_rows = c.execute(f"SELECT {', '.join(keys)}, {newer} FROM {table}")
        latest = {tuple(r)[:-1]: r[-1] for r in held_rows}
        winners: dict[tuple, dict[str, Any]] = {}
        written = 0
        for row in rows:
            key = tuple(row[k] for k in keys)
            if key in latest and (latest[key] or "") >= (row[newer] or ""):
                continue
            latest[key], winners[key] = row[newer], row
            written += 1
        new = list(winners.values())
    if new:
        names = [*columns, "imported"]
        c.executemany(
            f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [tuple(row[k] for k in names) for row in new],
        )
    return written


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
