"""The progress store on real SQLite files: every record type, migrations, corrupt files, export/import, reset."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import add_experiment_run

from tutor.errors import TutorError
from tutor.progress.db import StoreTooNew, to_text
from tutor.progress.migrations import MIGRATIONS, SCHEMA_VERSION
from tutor.progress.schema import APPLICATION_ID, FILE_NAME
from tutor.progress.store import Store
from tutor.progress.transfer import export_data, export_file, import_data, read_export, reset
from tutor.quiz.schedule import review

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> datetime:
        self.t += timedelta(seconds=1)  # every record gets its own, increasing time
        return self.t


def fill(store: Store) -> None:
    """One or more of every record type."""
    store.mark_read("multi-head", "split-heads")
    store.mark_read("multi-head", "split-heads")
    store.mark_read("positions", "permutation")
    card = review(None, 3, T0)
    store.record_answer("multi-head", "param-count", "262,656", True, rating=3, card=card, session="s1")
    store.record_answer("multi-head", "param-count", "262656", True, rating=3, session="s1")
    store.record_answer(
        "multi-head", "view-shape", "(1, 5, 4, 8)", False, rating=1, exercise="split", session="p"
    )
    store.record_submission(
        "rope",
        sha256="ab" * 32,
        status="fail",
        score=1,
        max_score=3,
        checks=[{"name": "shape", "status": "pass", "message": "", "hint": None, "points": 1}],
        hints_revealed=1,
    )
    store.record_hint("rope", "0")
    add_experiment_run(store, "heads", {"n_head": 4}, {"params": 66048}, note="for the exercise")
    store.record_training_run(
        "h4-rope",
        config={"n_head": 4, "pos": "rope"},
        status="done",
        final_val_loss=2.25,
        params=812544,
        seconds=41.5,
        curve=[(0, 5.1, 5.2), (100, 3.0, None), (200, 2.4, 2.25)],
    )
    store.set_last_location({"screen": "lesson", "lesson": "positions", "section": "permutation"})


def test_every_record_type_round_trips(home: Path) -> None:
    with Store(home, now=Clock()) as store:
        fill(store)
    with Store(home, now=Clock()) as store:  # reopened from disk
        reads = store.sections_read()
        assert [(r.lesson, r.section) for r in reads] == [
            ("multi-head", "split-heads"),
            ("positions", "permutation"),
        ]
        assert reads[0].first_at == T0 + timedelta(seconds=1) and reads[0].last_at == T0 + timedelta(
            seconds=2
        )

        quiz = store.answers("multi-head")
        assert [(a.question, a.answer, a.correct, a.rating, a.counted) for a in quiz] == [
            ("param-count", "262,656", True, 3, True),
            ("param-count", "262656", True, 3, False),
        ]
        (prediction,) = store.answers(exercise="split", predictions=True)
        assert (prediction.question, prediction.correct, prediction.exercise) == (
            "view-shape",
            False,
            "split",
        )

        state = store.review_state("multi-head", "param-count")
        assert (state.reviews, state.lapses, state.due) == (1, 0, T0 + timedelta(days=2))
        assert state.card["state"] == 2 and state.last_review == quiz[0].at

        (sub,) = store.submissions("rope")
        assert (sub.status, sub.score, sub.max_score, sub.hints_revealed) == ("fail", 1, 3, 1)
        assert sub.checks[0]["name"] == "shape" and sub.sha256 == "ab" * 32
        assert store.passed_exercises() == set()
        assert [(h.exercise, h.hint) for h in store.hint_reveals("rope")] == [("rope", "0")]

        (exp,) = store.experiment_runs("heads")
        assert (exp.params, exp.metrics, exp.note) == ({"n_head": 4}, {"params": 66048}, "for the exercise")

        run = store.training_run("h4-rope")
        assert (run.status, run.final_val_loss, run.params, run.seconds) == ("done", 2.25, 812544, 41.5)
        assert run.curve == [(0, 5.1, 5.2), (100, 3.0, None), (200, 2.4, 2.25)]
        assert store.last_location() == {"screen": "lesson", "lesson": "positions", "section": "permutation"}


def test_training_run_is_updated_in_place_by_key(home: Path) -> None:
    with Store(home) as store:
        store.record_training_run("k", config={}, status="running", curve=[(0, 5.0, None)])
        store.record_training_run(
            "k", config={}, status="done", final_val_loss=2.0, curve=[(0, 5.0, None), (9, 2, 2)]
        )
        assert [(r.key, r.status, len(r.curve)) for r in store.training_runs()] == [("k", "done", 2)]


def test_new_store_is_wal_and_versioned(home: Path) -> None:
    Store(home).close()
    conn = sqlite3.connect(home / FILE_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_the_schema_names_are_the_migrated_files_and_the_records(home: Path) -> None:
    """tutor/progress/schema.py, which glance and the class view read the file with, names every table and
    column the migrations make, in order, and each table's record has those fields (a log's without its id)."""
    from tutor.progress import schema
    from tutor.progress.records import ROWS

    Store(home).close()
    with sqlite3.connect(home / FILE_NAME) as conn:
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables - {"sqlite_sequence"} == set(schema.TABLES) == set(ROWS)
        for table in schema.ALL:
            assert tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})")) == table.columns
            assert set(ROWS[str(table)].model_fields) == set(table.columns) - {"id"}
    assert schema.SUBMISSIONS.status == "status"
    with pytest.raises(AttributeError, match="no column 'grade'"):
        _ = schema.SUBMISSIONS.grade


def test_garbage_file_is_moved_aside_not_wiped(home: Path) -> None:
    garbage = b"these are somebody's notes, not a database\n" * 50
    (home / FILE_NAME).write_bytes(garbage)
    with Store(home, now=lambda: T0) as store:
        (notice,) = store.notices
        aside = home / f"{FILE_NAME}.corrupt-20260302T093000Z"
        assert aside.read_bytes() == garbage
        assert aside.name in str(notice) and "fresh progress store" in str(notice)
        store.mark_read("l", "s")
        assert len(store.sections_read()) == 1


def test_damaged_sqlite_file_is_moved_aside(home: Path) -> None:
    with Store(home) as store:
        fill(store)
    path = home / FILE_NAME
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # keep the magic header, destroy the schema page
    path.write_bytes(bytes(data))
    with Store(home, now=lambda: T0) as store:
        assert len(store.notices) == 1
        assert store.sections_read() == []
        aside = home / f"{FILE_NAME}.corrupt-20260302T093000Z"
        if Path("/proc/self/fd").is_dir():  # the connection that found the damage was closed, not dropped
            assert str(aside) not in open_files()
    assert aside.read_bytes() == bytes(data)


def open_files() -> set[str]:
    found = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            found.add(str(fd.readlink()))
        except OSError:
            pass  # the fd of the listing itself is gone by now
    return found


def test_foreign_sqlite_database_is_moved_aside(home: Path) -> None:
    with sqlite3.connect(home / FILE_NAME) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
        conn.execute("INSERT INTO recipes VALUES ('soup')")
    with Store(home) as store:
        assert "some other program" in str(store.notices[0])
    (aside,) = home.glob(f"{FILE_NAME}.corrupt-*")
    assert sqlite3.connect(aside).execute("SELECT name FROM recipes").fetchall() == [("soup",)]


def test_store_from_a_newer_tutor_is_left_alone(home: Path) -> None:
    Store(home).close()
    with sqlite3.connect(home / FILE_NAME) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreTooNew, match="newer version"):
        Store(home)
    assert list(home.glob("*.corrupt-*")) == []


def test_empty_file_becomes_a_store_without_notice(home: Path) -> None:
    (home / FILE_NAME).touch()
    with Store(home) as store:
        assert store.notices == []
        store.mark_read("l", "s")


def test_export_then_import_gives_equal_progress(home: Path, tmp_path: Path) -> None:
    with Store(home, now=Clock()) as store:
        fill(store)
        file = tmp_path / "progress.json"
        rows = export_file(store, file)
        original = export_data(store)
    assert rows == sum(len(v) for v in original["tables"].values()) == 11
    with Store(tmp_path / "other-machine", now=Clock()) as other:
        assert import_data(other, read_export(file)) == 11
        assert import_data(other, read_export(file)) == 0  # importing twice changes nothing
        copied = export_data(other)
        assert copied["tables"] == original["tables"]
        assert other.review_state("multi-head", "param-count").due == T0 + timedelta(days=2)


def test_import_keeps_the_newer_state_and_adds_new_log_rows(home: Path, tmp_path: Path) -> None:
    with Store(home, now=Clock()) as a:
        a.mark_read("l", "s", at=T0)
        a.set_value("last_location", {"at": "old"}, at=T0)
        data = export_data(a)
    with Store(tmp_path / "b") as b:
        b.set_value("last_location", {"at": "new"}, at=T0 + timedelta(days=1))
        b.record_hint("rope", "1", at=T0)
        import_data(b, data)
        assert b.last_location() == {"at": "new"}
        assert len(b.sections_read()) == 1 and len(b.hint_reveals()) == 1


def test_import_stores_timestamps_written_in_another_zone_as_utc(home: Path, tmp_path: Path) -> None:
    with Store(home, now=Clock()) as a:
        fill(a)
        data = export_data(a)
    plus_two = timezone(timedelta(hours=2))
    for table in data["tables"].values():  # the same instants, as another tool might write them
        for row in table:
            for key in ("due", "at", "last_review"):
                if row.get(key):
                    row[key] = datetime.fromisoformat(row[key]).astimezone(plus_two).isoformat()
    with Store(tmp_path / "b") as b:
        import_data(b, data)
        state = b.review_state("multi-head", "param-count")
        assert state.due == T0 + timedelta(days=2)
        stored = b.db.read("SELECT due FROM review_cards WHERE question = 'param-count'")
        assert [row["due"] for row in stored] == [to_text(state.due)]  # UTC text, as every row is kept
        assert import_data(b, export_data(b)) == 0  # the same rows, now in UTC: nothing new


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "is not JSON"),
        ('{"format": "something-else"}', "field 'format'"),
        (
            '{"format": "attention-tutor-progress", "version": 1, "tables": {"pets": []}}',
            r"in.json: tables.pets: unknown table \(known: section_reads, ",
        ),
        (
            '{"format": "attention-tutor-progress", "version": 1, "tables": {"kv": [{"key": "a"}]}}',
            r"in.json: kv\[0\].value: is missing\n.*in.json: kv\[0\].at: is missing",
        ),
        (
            '{"format": "attention-tutor-progress", "version": 1, "tables": {"kv": '
            '[{"key": "a", "value": "{}", "at": "2026-03-02T09:00:00"}]}}',
            r"in.json: kv\[0\].at: has no time zone \(add one, e.g. \+00:00\): 2026-03-02T09:00:00",
        ),
        (
            '{"format": "attention-tutor-progress", "version": 1, "tables": {"hint_reveals": '
            '[{"exercise": "rope", "hint": 0, "at": "2026-03-02T09:00:00+00:00"}]}}',
            r"in.json: hint_reveals\[0\].hint: should be a valid string, not 0",
        ),
    ],
)
def test_bad_import_file_says_what_and_where(home: Path, tmp_path: Path, content: str, message: str) -> None:
    file = tmp_path / "in.json"
    file.write_text(content)
    with Store(home) as store, pytest.raises(TutorError, match=message):
        import_data(store, read_export(file), source=str(file))
    with Store(home) as store:
        assert all(rows == [] for rows in export_data(store)["tables"].values())


def test_importing_what_the_store_holds_changes_nothing_and_marks_nothing(home: Path) -> None:
    with Store(home, now=Clock()) as store:
        fill(store)
        assert import_data(store, export_data(store)) == 0
        assert not any(r.imported for r in [*store.sections_read(), *store.answers(), *store.submissions()])
        assert store.passed_exercises(imported=False) == store.passed_exercises()


def test_a_local_write_over_imported_state_clears_its_mark(home: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "a", now=Clock()) as a:
        a.mark_read("l", "s")
        data = export_data(a)
    with Store(home, now=lambda: T0 + timedelta(days=1)) as store:
        import_data(store, data)
        assert [r.imported for r in store.sections_read()] == [True]
        store.mark_read("l", "s")
        assert [r.imported for r in store.sections_read()] == [False]


def test_the_store_refuses_to_write_what_it_could_not_read(home: Path) -> None:
    with Store(home, now=Clock()) as store:
        with pytest.raises(ValueError, match="score: should be a finite number, not nan"):
            store.record_submission("rope", sha256="ab" * 32, status="pass", score=float("nan"), max_score=1)
        with pytest.raises(ValueError, match="answer: contains a lone surrogate"):
            store.record_answer("l", "q", "\ud800", True, rating=3)
        with pytest.raises(ValueError, match="value: should be an object of text values"):
            store.set_last_location([1])  # type: ignore[arg-type]
        assert store.submissions() == [] and store.answers() == [] and store.last_location() is None
        run = store.record_training_run(
            "diverged", config={}, status="done", final_val_loss=float("nan"), curve=[(0, float("inf"), None)]
        )
        assert (run.final_val_loss, run.curve) == (None, [(0, None, None)])


def test_a_schema_1_store_is_migrated_and_reads(home: Path) -> None:
    with sqlite3.connect(home / FILE_NAME) as conn:
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 1")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("INSERT INTO section_reads VALUES ('l', 's', ?, ?)", (T0.isoformat(),) * 2)
        conn.execute(  # a diverged run as schema 1 stored it: NaN in the curve, infinity as the loss
            "INSERT INTO training_runs VALUES ('k', '{}', 'done', ?, 10, 1.5, ?, ?)",
            (float("inf"), "[[0, NaN, Infinity], [1, -Infinity, 2.5]]", T0.isoformat()),
        )
    conn.close()
    with Store(home) as store:
        assert [(r.section, r.imported) for r in store.sections_read()] == [("s", False)]
        run = store.training_run("k")
        assert (run.final_val_loss, run.imported) == (None, False)
        assert run.curve == [(0, None, None), (1, None, 2.5)]


def test_reset_keeps_a_backup_then_empties_the_store(home: Path) -> None:
    with Store(home, now=Clock()) as store:
        fill(store)
        before = export_data(store)["tables"]
        backup = reset(store)
        assert all(rows == [] for rows in export_data(store)["tables"].values())
        assert json.loads(backup.read_text())["tables"] == before
        assert backup.parent == home / "backups"


def test_a_second_reset_in_the_same_second_keeps_the_first_backup(home: Path) -> None:
    with Store(home, now=lambda: T0) as store:
        store.mark_read("multi-head", "split-heads")
        first = reset(store)
        second = reset(store)
    assert first != second and second.name == "progress-before-reset-20260302T093000Z-2.json"
    assert len(json.loads(first.read_text())["tables"]["section_reads"]) == 1
    assert json.loads(second.read_text())["tables"]["section_reads"] == []
