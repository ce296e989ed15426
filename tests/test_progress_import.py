"""`python -m tutor progress --import` as a real subprocess on real SQLite: hostile files are refused
whole (exit 2, each bad table[row].field named, the store untouched), good ones round-trip, and
imported progress is marked in `progress` and `exercise list`. What the store holds before and after
is read with `progress` and `exercise list` run in this process (tests/test_quiz_cli.py runs them as
real subprocesses)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import PYTHON, ROOT, add_experiment_run, run_tutor_env, tutor_here

from tutor.content.loader import load_course
from tutor.progress.schema import FILE_NAME
from tutor.progress.store import Store
from tutor.quiz.schedule import review

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
COURSE = load_course(ROOT / "tutor" / "lessons")
FIRST, SECOND = COURSE.lessons[0], COURSE.lessons[1]
PASSED, FAILED = FIRST.exercises[0].id, FIRST.exercises[1].id


def tutor(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args, "--home", str(home), "--lang", "en"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(),
        cwd=ROOT,
        timeout=60,
    )


def read(home: Path, *args: str) -> subprocess.CompletedProcess:
    """A command that only reads the store (`progress`, `exercise list`), run in this process."""
    return tutor_here(*args, "--home", str(home), "--lang", "en")


def progress_json(home: Path) -> dict[str, Any]:
    result = read(home, "progress", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def record_progress(home: Path) -> None:
    """Progress in every area, on shipped lesson ids, as the tutor records it."""
    with Store(home, now=lambda: T0) as store:
        store.mark_read(FIRST.id, FIRST.sections[0].id)
        store.mark_read(SECOND.id, SECOND.sections[1].id)
        q = FIRST.quiz[0].id
        store.record_answer(FIRST.id, q, "2", True, rating=3, card=review(None, 3, T0), session="s1")
        store.record_answer(SECOND.id, SECOND.quiz[0].id, "x", False, rating=1, session="s1")
        checks = [{"name": "shape", "status": "pass", "message": "", "hint": "", "points": 2.0}]
        store.record_submission(PASSED, sha256="ab" * 32, status="pass", score=2, max_score=2, checks=checks)
        store.record_submission(FAILED, sha256="cd" * 32, status="fail", score=0, max_score=6)
        store.record_hint(FAILED, "0")
        add_experiment_run(store, "heads", {"n_head": 4}, {"params": 66048}, note="kept")
        store.record_training_run(
            "h4-rope", config={"n_head": 4}, status="done", final_val_loss=2.25, curve=[(0, 5.1, None)]
        )
        store.set_last_location({"screen": "lesson", "lesson": FIRST.id})


def without_marks(progress: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in progress.items() if k not in ("home", "store", "imported")}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A home with progress in every area, and its export (as JSON data)."""
    home = tmp_path_factory.mktemp("source")
    record_progress(home)
    file = home / "export.json"
    assert tutor(home, "progress", "--export", str(file)).returncode == 0
    return home, json.loads(file.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], bytes]:
    """A home with its own progress, its `progress --json` and its file's bytes: hostile imports go here."""
    home = tmp_path_factory.mktemp("target")
    with Store(home, now=lambda: T0 + timedelta(days=1)) as store:
        store.mark_read(FIRST.id, FIRST.sections[1].id)
        store.record_submission(FAILED, sha256="ef" * 32, status="pass", score=6, max_score=6)
    before = progress_json(home)
    return home, before, (home / FILE_NAME).read_bytes()


# --- hostile files -----------------------------------------------------------------------


def setting(table: str, field: str, value: Any, row: int = 0) -> Callable[[dict[str, Any]], None]:
    def change(tables: dict[str, Any]) -> None:
        tables[table][row][field] = value

    return change


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


HOSTILE_ROWS = {
    "checks not a list": (setting("submissions", "checks", '{"name": "shape"}'), "submissions[0].checks: "),
    "check without status": (
        setting("submissions", "checks", '[{"name": "x", "message": "", "hint": "", "points": 1}]'),
        "submissions[0].checks[0].status: is missing",
    ),
    "card of the wrong shape": (
        setting("review_cards", "card", '{"due": 5}'),
        "review_cards[0].card.card_id",
    ),
    "curve point of text": (
        setting("training_runs", "curve", '[[0, "low", null]]'),
        "training_runs[0].curve[0][1]: should be a valid number, not 'low'",
    ),
    "last location a list": (setting("kv", "value", "[1, 2]"), "kv[0].value: should be an object"),
    "NaN score": (setting("submissions", "score", float("nan")), "submissions[0].score: should be a finite"),
    "NaN in a JSON column": (setting("training_runs", "config", '{"lr": NaN}'), "training_runs[0].config: "),
    "infinite loss": (
        setting("training_runs", "final_val_loss", float("inf")),
        "training_runs[0].final_val_loss: should be a finite number, not inf",
    ),
    "2**70 reviews": (
        setting("review_cards", "reviews", 2**70),
        "review_cards[0].reviews: should be an integer",
    ),
    "2**70 in a JSON column": (
        setting("experiment_runs", "metrics", json.dumps({"params": 2**70})),
        "experiment_runs[0].metrics.params: should be an integer within SQLite's 64 bits",
    ),
    "year 10000": (setting("quiz_answers", "at", "10000-01-01T00:00:00+00:00"), "quiz_answers[0].at: "),
    "after 9998 in UTC": (
        setting("section_reads", "first_at", "9999-12-31T23:00:00-05:00"),
        "section_reads[0].first_at: should be between 1970 and 9998",
    ),
    "no time zone": (
        setting("hint_reveals", "at", "2026-03-02T09:00:00"),
        "hint_reveals[0].at: has no time zone",
    ),
    "lone surrogate": (
        setting("quiz_answers", "answer", "ok\ud800", row=1),
        "quiz_answers[1].answer: contains a",
    ),
    "lone surrogate in a JSON column": (
        setting("kv", "value", '{"lesson": "\\udc00"}'),
        "kv[0].value: at ['lesson']: contains a lone surrogate ('\\udc00')",
    ),
    "over-long name": (setting("hint_reveals", "exercise", "x" * 5000), "hint_reveals[0].exercise: is 5000"),
    "deeply nested JSON column": (
        setting("experiment_runs", "params", json.dumps({"a": nested(40)})),
        "experiment_runs[0].params.a: at [0]",
    ),
    "JSON column nested past recursion": (
        setting("experiment_runs", "params", "[" * 100_000),
        "experiment_runs[0].params: is nested too deeply",
    ),
    "null for a name": (setting("quiz_answers", "lesson", None), "quiz_answers[0].lesson: should be a valid"),
    "flag of 2": (setting("quiz_answers", "used_hint", 2), "quiz_answers[0].used_hint: should be 0 or 1"),
    "imported mark smuggled in": (setting("kv", "imported", 0), "kv[0].imported: is not a column of kv"),
    "text for a number": (setting("submissions", "max_score", "3"), "submissions[0].max_score: should be"),
}


@pytest.mark.parametrize("case", HOSTILE_ROWS, ids=list(HOSTILE_ROWS))
def test_a_hostile_row_is_refused_and_nothing_is_written(
    case: str, source: tuple[Path, dict[str, Any]], target: tuple[Path, dict[str, Any], bytes], tmp_path: Path
) -> None:
    change, message = HOSTILE_ROWS[case]
    data = json.loads(json.dumps(source[1]))
    change(data["tables"])
    file = tmp_path / "hostile.json"
    # json.dumps writes NaN and Infinity as bare tokens and a lone surrogate as \ud800, as a crafted file would
    file.write_text(json.dumps(data), encoding="utf-8")
    assert_refused(file, target, f"{file}: {message}")


def assert_refused(
    file: Path, target: tuple[Path, dict[str, Any], bytes], message: str
) -> subprocess.CompletedProcess:
    home, before, raw = target
    # in this process: the refusal's real process (exit 2, its message) is the reset test's, below
    result = tutor_here("progress", "--import", str(file), "--home", str(home), "--lang", "en")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert (home / FILE_NAME).read_bytes() == raw
    assert progress_json(home) == before
    return result


def test_every_bad_row_is_named_in_one_refusal(
    source: tuple[Path, dict[str, Any]], target: tuple[Path, dict[str, Any], bytes], tmp_path: Path
) -> None:
    data = json.loads(json.dumps(source[1]))
    data["tables"]["quiz_answers"].append([[["garbage"]]])
    data["tables"]["kv"][0]["at"] = "2026-13-45T00:00:00+00:00"
    data["tables"]["pets"] = []
    file = tmp_path / "many.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    rows = len(source[1]["tables"]["quiz_answers"])
    stderr = assert_refused(file, target, f"nothing was imported from {file} (problems found: 3)").stderr
    assert (
        f"{file}: quiz_answers[{rows}]: should be an object of column -> value, not [[['garbage']]]" in stderr
    )
    assert f"{file}: kv[0].at: should be an ISO timestamp" in stderr
    assert f"{file}: tables.pets: unknown table" in stderr


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (
            lambda f, text: f.write_text(text[: len(text) // 2], encoding="utf-8"),
            "is the file cut off, or not an export?",
        ),
        (lambda f, text: f.write_text("progress, but as CSV\n", encoding="utf-8"), "is not JSON"),
        (lambda f, text: f.write_bytes(b'{"format": "\xff"}'), "is not UTF-8 text (byte 12)"),
        (lambda f, text: f.write_text("[" * 100_000, encoding="utf-8"), "nests too deeply"),
        (lambda f, text: f.write_text('{"format": "zip"}', encoding="utf-8"), "not a tutor progress export"),
        (
            lambda f, text: f.write_text(text.replace('"version": 1', '"version": 2'), encoding="utf-8"),
            "export format version 2 is not supported (need 1)",
        ),
        (lambda f, text: _sparse(f, 64 * 2**20 + 1), "is larger than 64 MB"),
    ],
    ids=["truncated", "not JSON", "not UTF-8", "nested garbage", "other format", "other version", "huge"],
)
def test_a_file_that_is_not_an_export_is_refused(
    write: Callable[[Path, str], Any],
    message: str,
    source: tuple[Path, dict[str, Any]],
    target: tuple[Path, dict[str, Any], bytes],
    tmp_path: Path,
) -> None:
    file = tmp_path / "in.json"
    write(file, (source[0] / "export.json").read_text(encoding="utf-8"))
    assert_refused(file, target, message)


def _sparse(file: Path, size: int) -> None:
    with file.open("wb") as fh:
        fh.truncate(size)


# --- good files --------------------------------------------------------------------------


def test_export_then_import_gives_equal_progress_and_twice_changes_nothing(
    source: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    home, data = source
    original = progress_json(home)
    rows = sum(len(v) for v in data["tables"].values())
    fresh = tmp_path / "fresh"
    first = tutor(fresh, "progress", "--import", str(home / "export.json"))
    assert first.returncode == 0 and f"imported {rows} new or newer records" in first.stdout
    copied = progress_json(fresh)
    assert without_marks(copied) == without_marks(original)
    assert copied["lessons"][0]["exercises"]["passed"] == 1 and copied["training_runs"] == 1
    again = tutor(fresh, "progress", "--import", str(home / "export.json"))
    assert again.returncode == 0 and "imported 0 new or newer records" in again.stdout
    assert progress_json(fresh) == copied
    re_exported = tmp_path / "again.json"
    assert tutor(fresh, "progress", "--export", str(re_exported)).returncode == 0
    assert json.loads(re_exported.read_text(encoding="utf-8"))["tables"] == data["tables"]


def test_imported_progress_is_marked_in_progress_and_exercise_list(
    source: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    home, _ = source
    assert progress_json(home)["imported"] == {
        "lessons": {x.id: {"sections_read": 0, "answered": 0, "passed": 0} for x in COURSE.lessons},
        "reviews_due": 0,
        "training_runs": 0,
        "experiment_runs": 0,
        "last_location": False,
    }
    fresh = tmp_path / "fresh"
    assert tutor(fresh, "progress", "--import", str(home / "export.json")).returncode == 0
    marks = progress_json(fresh)["imported"]
    assert marks["lessons"][FIRST.id] == {"sections_read": 1, "answered": 1, "passed": 1}
    assert marks["lessons"][SECOND.id] == {"sections_read": 1, "answered": 1, "passed": 0}
    assert (marks["reviews_due"], marks["training_runs"], marks["experiment_runs"]) == (1, 1, 1)
    assert marks["last_location"] is True

    text = " ".join(read(fresh, "progress").stdout.split())  # as words: the console may wrap lines
    assert "* imported from a file, not done on this machine: sections read 2, quiz answers 2," in text
    assert f"1/{len(FIRST.exercises)}*" in text
    listed = read(fresh, "exercise", "list").stdout
    assert f"{PASSED:<16} passed (imported)" in listed
    rows = {r["id"]: r for r in json.loads(read(fresh, "exercise", "list", "--json").stdout)}
    assert (rows[PASSED]["state"], rows[PASSED]["imported"]) == ("passed", True)
    # its imported failing grade is a grade recorded: started, and not marked, as only a pass is
    assert (rows[FAILED]["state"], rows[FAILED]["imported"]) == ("started", False)

    with Store(fresh) as store:  # passed here too: no longer only imported
        store.record_submission(PASSED, sha256="12" * 32, status="pass", score=2, max_score=2)
    listed = read(fresh, "exercise", "list").stdout
    assert f"{PASSED:<16} passed " in listed and "(imported)" not in listed
    assert progress_json(fresh)["imported"]["lessons"][FIRST.id]["passed"] == 0


def test_reset_then_importing_a_poisoned_backup_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    record_progress(home)
    with sqlite3.connect(home / FILE_NAME) as conn:  # what the old, unchecked import let in
        conn.execute(
            "INSERT INTO submissions (exercise, at, sha256, status, score, max_score, checks, hints_revealed)"
            " VALUES (?, '2026-03-02T09:30:00+00:00', ?, 'pass', 9, 9, '\"all good\"', 0)",
            (PASSED, "00" * 32),
        )
    damaged = tutor(home, "progress", "--json")
    assert damaged.returncode == 2 and "Traceback" not in damaged.stderr
    assert (
        "submissions row this tutor cannot read" in damaged.stderr
        and "checks: should be a valid list" in damaged.stderr
    )

    reset = tutor(home, "progress", "--reset", "--yes")
    assert reset.returncode == 0
    (backup,) = (home / "backups").glob("*.json")
    cleared = progress_json(home)
    poisoned_row = len(json.loads(backup.read_text(encoding="utf-8"))["tables"]["submissions"]) - 1
    refused = tutor(home, "progress", "--import", str(backup))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert (
        f"{backup}: submissions[{poisoned_row}].checks: should be a valid list, not 'all good'"
        in refused.stderr
    )
    assert progress_json(home) == cleared
    assert sum(x["exercises"]["passed"] for x in cleared["lessons"]) == 0


# --- a large import ------------------------------------------------------------------------


def _many_rows(n: int) -> dict[str, Any]:
    """An export of `n` distinct rows: quiz answers, hint reveals (logs) and section reads (state)."""
    tables: dict[str, list[dict[str, Any]]] = {"quiz_answers": [], "hint_reveals": [], "section_reads": []}
    for i in range(n):
        at = (T0 + timedelta(seconds=i)).isoformat()
        if i % 10 < 7:
            tables["quiz_answers"].append(
                {
                    "lesson": FIRST.id,
                    "question": f"q{i % 7}",
                    "exercise": None,
                    "answer": str(i),
                    "correct": i % 2,
                    "rating": 3,
                    "used_hint": 0,
                    "counted": 1,
                    "session": "s",
                    "at": at,
                }
            )
        elif i % 10 < 9:
            tables["hint_reveals"].append({"exercise": PASSED, "hint": "0", "at": at})
        else:
            tables["section_reads"].append(
                {"lesson": FIRST.id, "section": f"s{i}", "first_at": at, "last_at": at}
            )
    return {"format": "attention-tutor-progress", "version": 1, "schema_version": 2, "tables": tables}


def _import_work(home: Path, n: int) -> tuple[int, float]:
    """SQLite's work (virtual-machine instructions, in hundreds) and this process's CPU seconds to import
    `n` rows into an empty store and then again (every row already there)."""
    from tutor.progress.transfer import import_data

    data = _many_rows(n)
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0  # go on

    with Store(home) as store:
        store.db.conn.set_progress_handler(step, 100)
        start = time.process_time()
        assert import_data(store, data) == n
        assert import_data(store, data) == 0
        return steps[0], time.process_time() - start


def test_a_large_import_grows_linearly_with_its_rows(tmp_path: Path) -> None:
    """Four times the rows cost about four times the work, not sixteen: SQLite's instructions, which are
    exact whatever the machine is doing (its CPU time is not: 48 ms against 437 ms was seen once on a
    fresh clone; docs/figures.md has the seconds). Each row used to scan its table for a duplicate."""
    (small_steps, _), (large_steps, _) = (_import_work(tmp_path / str(n), n) for n in (2_000, 8_000))
    assert large_steps / small_steps < 6, (small_steps, large_steps)
