"""An instructor's batch folder and a learner's answer file are hostile input, through the real CLI.

Batch (`grade EXERCISE --batch DIR`): only regular files directly in the folder are graded. A link (to a
secret outside the folder, to the reference solution, to a folder, to nothing), a hard link (to the
reference solution), a FIFO, a socket and a folder named *.py are error rows saying what they are, with no
sha256 (their bytes are not read), and nothing outside the folder is read or quoted; a file too large to
grade has the sha256 of its bytes, so no two refused rows look like one submission.
Names are shown escaped in the table, JSON and CSV, so a name cannot forge a row, reverse the text after
it or fake an escape; CSV cells a spreadsheet would run as formulas are neutralised.

Answer files (head-count's head_count.toml): every kind of TOML value, for every key the checks read,
gets a message naming the key, what it must be and what the file holds; an integer too long for Python
to read is an error naming its line and key. Never a traceback. (The kinds of value and the messages'
languages are graded by `grade` run in this process, 30 grades that start no judge; the other answer
files go through the real CLI.)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import socket
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env, tutor_here
from tests.grading_helpers import exercise_course, tutor
from tutor.progress.store import Store

SECRET = "API_KEY=sk-live-7f3a9c5e0b1d"
SPLIT_SOLUTION = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads/solution.py"

PROBE_TOML = """
id = "probe"
file_name = "probe.py"
section = "probe"
timeout_s = 10
title = { en = "Probe" }
task = { en = "Write add(a, b)." }

[[checks]]
id = "add"
title = { en = "adds" }
hint = { en = "use +" }
"""
# the message of a wrong answer is the answer itself: a learner chooses how a CSV cell starts
PROBE_CHECKS = """
def check_add(learner):
    got = learner.add(2, 3)
    assert got == 5, str(got)
    return "2 + 3 = 5"
"""
PROBE_SOLUTION = "def add(a, b):\n    return a + b\n"

NEWLINE_NAME = "evil\nalice_solution.py  pass   1\u22151    -      0.1\nzz.py"  # ∕: a name has no "/"
BIDI_NAME = "report\u202eyp.txt.py"  # shown by a terminal as "reportyp.txt.py" reversed after U+202E


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    """The shipped course plus a probe exercise whose checks need no model."""
    files = {
        "exercise.toml": PROBE_TOML,
        "checks.py": PROBE_CHECKS,
        "solution.py": PROBE_SOLUTION,
        "starter.py": "def add(a, b):\n    raise NotImplementedError\n",
    }
    return exercise_course(tmp_path_factory.mktemp("lessons"), files)


def _socket(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFSOCK | 0o600)
    except OSError:  # where mknod makes no sockets: a bound one (the path must be short)
        sock = socket.socket(socket.AF_UNIX)
        cwd = os.getcwd()
        os.chdir(path.parent)
        try:
            sock.bind(path.name)
        finally:
            os.chdir(cwd)
            sock.close()


# (name as it is on disk, name as reports show it); only anna.py and formula.py are graded
ENTRIES = {
    "anna.py": "anna.py",
    "formula.py": "formula.py",
    "leak.py": "leak.py",
    "ref.py": "ref.py",
    "dir_link.py": "dir_link.py",
    "dangling.py": "dangling.py",
    "x.py": "x.py",
    "d.py": "d.py",
    "sock.py": "sock.py",
    "hard.py": "hard.py",
    "big.py": "big.py",
    NEWLINE_NAME: "evil\\nalice_solution.py  pass   1\u22151    -      0.1\\nzz.py",
    BIDI_NAME: "report\\u202eyp.txt.py",
    "fake\\nrow.py": "fake\\\\nrow.py",  # a real backslash: shown doubled, so it is not a newline
    "tab\tbell\x07esc\x1b.py": "tab\\tbell\\x07esc\\x1b.py",
    "zero\u200bwidth.py": "zero\\u200bwidth.py",
    "=SUM(A1).py": "=SUM(A1).py",
    "+1.py": "+1.py",
    "-1.py": "-1.py",
    "@cmd.py": "@cmd.py",
    "中文名字é.py": "中文名字é.py",
}
KINDS = {
    "leak.py": "symbolic link",
    "ref.py": "symbolic link",
    "dir_link.py": "symbolic link",
    "dangling.py": "symbolic link",
    "x.py": "FIFO",
    "d.py": "folder",
    "sock.py": "socket",
    "hard.py": "hard link",
}
BIG = b"# " + b"x" * (2 * 2**20) + b"\n"  # over GRADE_MAX_SOURCE_BYTES


@pytest.fixture(scope="module")
def hostile(lessons, tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """One hostile folder graded as a table, JSON and CSV (at once)."""
    base = tmp_path_factory.mktemp("hostile")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    folder = base / "subs"
    folder.mkdir()
    (folder / "anna.py").write_text(PROBE_SOLUTION, encoding="utf-8")
    (folder / "formula.py").write_text("def add(a, b):\n    return '=2+5'\n", encoding="utf-8")
    (folder / "leak.py").symlink_to(outside / "secret.txt")
    (folder / "ref.py").symlink_to(lessons / "09-probe/exercises/probe/solution.py")
    (folder / "dir_link.py").symlink_to(outside)
    (folder / "dangling.py").symlink_to(outside / "nothing-here.py")
    os.mkfifo(folder / "x.py")
    (folder / "d.py").mkdir()
    (folder / "d.py" / "inner.py").write_text(PROBE_SOLUTION, encoding="utf-8")  # not directly in the folder
    _socket(folder / "sock.py")
    os.link(lessons / "09-probe/exercises/probe/solution.py", folder / "hard.py")  # would pass if graded
    (folder / "big.py").write_bytes(BIG)
    for name in ENTRIES:
        if not (folder / name).exists() and not (folder / name).is_symlink():
            (folder / name).write_bytes(b"\xff not UTF-8\n")  # an error row without a grader started
    (folder / "notes.txt").write_text(SECRET, encoding="utf-8")  # not *.py: not graded, not shown
    home = base / "home"
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = {
            fmt: pool.submit(
                tutor,
                home,
                "grade",
                "probe",
                "--batch",
                str(folder),
                "--format",
                fmt,
                "--lessons",
                str(lessons),
            )
            for fmt in ("table", "json", "csv")
        }
        return {fmt: run.result() for fmt, run in runs.items()}


def test_the_batch_finishes_and_nothing_outside_the_folder_is_read_or_quoted(hostile):
    for fmt, out in hostile.items():
        assert out.returncode == 0, (fmt, out.stderr)
        assert "Traceback" not in out.stderr
        assert SECRET not in out.stdout and SECRET not in out.stderr, fmt
        assert "sk-live" not in out.stdout and "outside" not in out.stdout, fmt


def _json_rows(hostile) -> list[dict]:
    return json.loads(hostile["json"].stdout)["results"]


def test_every_entry_is_one_row_in_name_order_shown_escaped(hostile):
    expected = [ENTRIES[name] for name in sorted(ENTRIES)]
    assert [r["file"] for r in _json_rows(hostile)] == expected
    assert [r["file"] for r in csv.DictReader(io.StringIO(hostile["csv"].stdout))] == [
        "'" + shown if shown[0] in "=+-@" else shown for shown in expected
    ]
    lines = hostile["table"].stdout.splitlines()
    boxed = sum(r["grade"].get("isolation", {}).get("level", "none") != "none" for r in _json_rows(hostile))
    # head, rule, one line per entry, the summary, then the box the files that reached one were graded in
    *table, summary, box = lines
    assert len(table) == 2 + len(ENTRIES) and summary == f"1 of {len(ENTRIES)} passed"
    assert re.fullmatch(rf"{boxed} files graded in an? \w+ box( \(missing: .*\))?", box), box
    assert all(line.startswith(shown + " ") for line, shown in zip(table[2:], expected, strict=True))


def test_links_fifos_sockets_and_folders_are_error_rows_saying_what_they_are(hostile):
    rows = {r["file"]: r for r in _json_rows(hostile)}
    for name, kind in KINDS.items():
        grade = rows[name]["grade"]
        assert grade["status"] == "error", (name, grade["status"])
        assert f"{name} is a {kind}" in grade["checks"][0]["message"], grade["checks"][0]["message"]
        assert rows[name]["sha256"] is None, name  # not read: no hash, never the hash of no bytes
    assert rows["anna.py"]["grade"]["status"] == "pass"  # a regular file beside them is graded
    assert rows["ref.py"]["grade"]["score"] == 0  # a link to the reference solution does not pass
    assert (
        rows["hard.py"]["grade"]["score"] == 0
        and "cp, not ln" in rows["hard.py"]["grade"]["checks"][0]["message"]
    )
    big = rows["big.py"]
    assert (
        big["grade"]["status"] == "error"
        and "big.py is larger than 1024 KB" in big["grade"]["checks"][0]["message"]
    )
    assert big["sha256"] == hashlib.sha256(BIG).hexdigest()  # read safely: the hash of all its bytes
    undecodable = hashlib.sha256(b"\xff not UTF-8\n").hexdigest()  # read, then refused: their real hash
    assert rows["zero\\u200bwidth.py"]["sha256"] == undecodable
    table = {line.split("  ")[0]: line for line in hostile["table"].stdout.splitlines()}
    assert "symbolic link" in table["leak.py"] and "FIFO" in table["x.py"] and "socket" in table["sock.py"]


def test_a_name_cannot_forge_a_row_reverse_the_text_or_fake_an_escape(hostile):
    for fmt in ("table", "csv"):
        lines = hostile[fmt].stdout.splitlines()
        assert not [line for line in lines if line.startswith(("alice_solution.py", "zz.py"))], fmt
    for out in hostile.values():
        assert not {"\u202e", "\u200b", "\x1b", "\x07", "\t"} & set(out.stdout)
    rows = {r["file"]: r for r in _json_rows(hostile)}
    assert "fake\\\\nrow.py" in rows and "fake\\nrow.py" not in rows  # a real backslash stays one
    assert "中文名字é.py" in rows  # Chinese and accents stay readable
    assert (
        "evil\\nalice_solution.py"
        in hostile["table"].stdout.splitlines()[2 + sorted(ENTRIES).index(NEWLINE_NAME)]
    )


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(hostile):
    rows = {r["file"]: r for r in csv.DictReader(io.StringIO(hostile["csv"].stdout))}
    for name in ("=SUM(A1).py", "+1.py", "-1.py", "@cmd.py"):
        assert "'" + name in rows, sorted(rows)
    formula = rows["formula.py"]
    assert formula["status"] == "fail" and formula["message"] == "'=2+5"
    for row in rows.values():
        for key in ("file", "status", "first_failure", "message", "sha256"):
            assert not row[key].startswith(("=", "+", "-", "@", "\t", "\r")), (key, row[key])
        assert float(row["score"]) >= 0 and float(row["max_score"]) == 1 and float(row["duration_s"]) >= 0
    assert rows["anna.py"]["score"] == "1.0"  # numbers are written as numbers, never quoted away


def test_a_link_to_the_reference_solution_does_not_pass(lessons, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "split_heads.py").symlink_to(SPLIT_SOLUTION)
    out = tutor(
        tmp_path / "home",
        "grade",
        "split-heads",
        "--batch",
        str(folder),
        "--format",
        "json",
        "--lessons",
        str(lessons),
    )
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["results"]
    assert row["grade"]["status"] == "error" and row["grade"]["score"] == 0
    assert "split_heads.py is a symbolic link" in row["grade"]["checks"][0]["message"]


def test_an_entry_swapped_after_the_listing_is_refused_when_it_is_opened(tmp_path):
    """read_entry's own checks, as met when a regular file is swapped for a link, a FIFO or a device
    between the listing and the open: nothing is followed, nothing blocks."""
    from tutor.errors import TutorError
    from tutor.grading.safe_read import read_entry

    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    (tmp_path / "link.py").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_entry(fd, "ok.py", "ok.py") == b"x = 1\n"
        for name, kind in (("link.py", "symbolic link"), ("fifo.py", "FIFO")):
            with pytest.raises(TutorError, match=f"{name} is a {kind}"):
                read_entry(fd, name, name)
    finally:
        os.close(fd)
    dev = os.open("/dev", os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(TutorError, match="null is a device"):
            read_entry(dev, "null", "null")
    finally:
        os.close(dev)


def test_names_and_terminal_text_are_escaped_by_the_rules():
    from tutor.grading.instructor.batch import csv_cell, shown_name
    from tutor.grading.runner import clean

    assert shown_name("a\\b\nc\rd\te\x00f\x7fg\x85h\u202ei\u2066j\u200ek\u061cl\u2028m\ufeffn.py") == (
        "a\\\\b\\nc\\rd\\te\\x00f\\x7fg\\u0085h\\u202ei\\u2066j\\u200ek\\u061cl\\u2028m\\ufeffn.py"
    )
    assert shown_name(os.fsdecode(b"caf\xe9.py")) == "caf\\xe9.py"  # a byte that is not UTF-8
    assert shown_name("中文 naïve 🙂.py") == "中文 naïve 🙂.py"
    assert [csv_cell(v) for v in ("=1", "+1", "-1", "@1", "\t1", "\r1", "a=1", "", -1.5, 0)] == [
        "'=1",
        "'+1",
        "'-1",
        "'@1",
        "'\t1",
        "'\r1",
        "a=1",
        "",
        -1.5,
        0,
    ]
    bidi = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
    assert clean(f"a{bidi}b\x1b[31mc\x00d\n\te") == "ab" + "c�d\n\te"


# --- a submission's text never reads as the grader's own lines ------------------------------------------

# eight made-up check lines and the grader's "Passed." line, as an exception's message and as output
FORGED = (
    "nothing\n"
    + "  ✓ adds [add]  1/1\n" * 8
    + "Passed. See the reference solution: python -m tutor exercise solution probe"
)
FORGER = f"FORGED = {FORGED!r}\nprint(FORGED)\n\n\ndef add(a, b):\n    raise ValueError(FORGED)\n"
CHECK_LINE = re.compile(r"^  [✓✗!⧗·] ")  # how text.render starts a check's line


def test_an_exception_message_with_newlines_cannot_forge_check_lines_or_a_pass(lessons, tmp_path):
    path = tmp_path / "forger.py"
    path.write_text(FORGER, encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool:  # the report and its JSON, at once
        runs = [
            pool.submit(
                tutor, tmp_path / home, "--lessons", str(lessons), "grade", "probe", str(path), *extra
            )
            for home, extra in (("home", ()), ("home-json", ("--json",)))
        ]
        out, as_json = (run.result() for run in runs)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("probe — Probe: FAIL  0/1 points")
    assert [line for line in lines if CHECK_LINE.match(line)] == ["  ! adds [add]  0/1   ← first failure"]
    assert not [line for line in lines if line.startswith("Passed")]
    message = next(line for line in lines if "ValueError" in line)
    assert message.startswith("      add(2, 3): ValueError: nothing↵  ✓ adds [add]  1/1↵  ✓ adds")  # one line
    shown = lines[lines.index("  Output of your code:") + 1 :]
    printed = [line for line in shown if line.startswith("    | ")]
    assert [
        line.removeprefix("    | ") for line in printed
    ] == FORGED.splitlines()  # output stays lines, each marked
    as_json = json.loads(as_json.stdout)
    assert "\n" not in as_json["checks"][0]["message"] and "↵Passed. See" in as_json["checks"][0]["message"]
    assert as_json["output"].rstrip("\n") == FORGED and as_json["status"] == "fail" and as_json["score"] == 0


def test_on_a_terminal_a_long_message_is_folded_under_its_check_never_wrapped_to_its_left(lessons, tmp_path):
    """A message as long as a terminal row would be wrapped by the terminal to its first column, where a
    made-up check line could begin a row: on a terminal (here a pty of 80 columns), every row is folded
    by the grade itself and keeps the message's indent."""
    pad = "x" * (80 - len("      add(2, 3): ValueError: "))  # the terminal would wrap just before "  ✓"
    path = tmp_path / "wrapper.py"
    path.write_text(
        f"def add(a, b):\n    raise ValueError({pad + '  ✓ adds [add]  1/1  ' * 6!r})\n", encoding="utf-8"
    )
    master, terminal = os.openpty()
    env = {**run_tutor_env(tmp_path / "home"), "COLUMNS": "80", "LINES": "24"}
    proc = subprocess.Popen(
        [PYTHON, "-m", "tutor", "--lessons", str(lessons), "grade", "probe", str(path)],
        stdout=terminal,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 1, proc.stderr.read()
    rows = shown.decode("utf-8").replace("\r\n", "\n").splitlines()
    assert all(len(row) <= 80 for row in rows), rows
    assert [row for row in rows if CHECK_LINE.match(row)] == ["  ! adds [add]  0/1   ← first failure"], rows
    start = next(i for i, row in enumerate(rows) if "ValueError" in row)
    folded = rows[start : start + 4]
    assert len(folded) == 4 and all(row.startswith("      ") for row in folded), folded


# --- head-count's answer file ------------------------------------------------------------------------

KEYS = ("best_heads", "loss_gap", "seed_spread", "beyond_noise", "same_params")
WANT = {
    "best_heads": "one of 1, 4, 8 (a whole number, without quotes)",
    "loss_gap": "a finite number such as 0.012 (without quotes)",
    "seed_spread": "a finite number such as 0.012 (without quotes)",
    "beyond_noise": "true or false (without quotes)",
    "same_params": "true or false (without quotes)",
}
# kind: (TOML value, how the message describes it, the keys it is right for)
VALUES = {
    "string": ('"4"', 'the string "4"', ()),
    "empty string": ('""', 'the string ""', ()),
    "boolean": ("true", "the boolean true", ("beyond_noise", "same_params")),
    "integer": ("2", "the integer 2", ("loss_gap", "seed_spread")),
    "negative integer": ("-7", "the integer -7", ("loss_gap", "seed_spread")),
    "huge hex integer": ("0x" + "f" * 5000, "an integer of 6,021 digits", ()),
    "float": ("4.5", "the number 4.5", ("loss_gap", "seed_spread")),
    "inf": ("inf", "inf, which is not a finite number", ()),
    "-inf": ("-inf", "-inf, which is not a finite number", ()),
    "nan": ("nan", "nan, which is not a finite number", ()),
    "huge float": ("1" + "0" * 5000 + ".0", "inf, which is not a finite number", ()),
    "offset datetime": ("1979-05-27T07:32:00Z", "the date and time 1979-05-27T07:32:00+00:00", ()),
    "local datetime": ("1979-05-27T07:32:00", "the date and time 1979-05-27T07:32:00", ()),
    "date": ("1979-05-27", "the date 1979-05-27", ()),
    "time": ("07:32:00", "the time 07:32:00", ()),
    "array": ("[1, 4]", "an array of 2 values", ()),
    "inline table": ("{ heads = 4 }", "a table of 1 key", ()),
    "nested table": (None, "a table of 1 key", ()),
}


def _answer_text(kind: str) -> str:
    value = VALUES[kind][0]
    if value is None:  # [best_heads] heads = 4: a table of its own for every key
        return "".join(f"[{key}]\nheads = 4\n\n" for key in KEYS)
    return "".join(f"{key} = {value}\n" for key in KEYS)


@pytest.fixture(scope="module")
def runs_home(tmp_path_factory) -> Path:
    """A home holding a complete set of comparable runs, so every check reads its key."""
    from tutor.content.loader import load_course
    from tutor.grading.runs import exercise_checks

    home = tmp_path_factory.mktemp("runs-home")
    sample = exercise_checks(load_course(ROOT / "tutor" / "lessons").exercise("head-count")).sample_runs
    with Store(home) as store:
        for run in sample({1: 5.30, 4: 5.35, 8: 5.40}):
            store.record_training_run(
                run["key"],
                config=run["config"],
                status="done",
                final_val_loss=run["final_val_loss"],
                params=run["params"],
                seconds=90.0,
                curve=[(1000, 5.0, run["final_val_loss"])],
            )
    return home


def _grade_answer(home: Path, path: Path, *extra: str, here: bool = False) -> subprocess.CompletedProcess:
    """`grade head-count PATH --json` as a real process, or with `here` in this one (tutor_here)."""
    if here:
        return tutor_here("grade", "head-count", str(path), "--json", *extra, home=home)
    return tutor(home, "grade", "head-count", str(path), "--json", *extra, timeout=60)


def _grade_each(
    home: Path, texts: dict[str, str], base: Path, here: bool = False
) -> dict[str, subprocess.CompletedProcess]:
    """Each answer file (name: text) graded in `home`: real processes two at a time (one per core), or
    with `here` one after the other in this process."""

    def run(name: str) -> subprocess.CompletedProcess:
        folder = base / name
        folder.mkdir()
        path = folder / "head_count.toml"
        path.write_text(texts[name], encoding="utf-8")
        return _grade_answer(home, path, here=here)

    if here:
        return {name: run(name) for name in texts}
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(texts, pool.map(run, texts), strict=True))


@pytest.fixture(scope="module")
def kind_grades(runs_home, tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """The answer file of every kind of value graded, each by `grade` in this process."""
    texts = {kind: _answer_text(kind) for kind in VALUES}
    return _grade_each(runs_home, texts, tmp_path_factory.mktemp("kinds"), here=True)


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_every_toml_value_kind_gets_a_message_naming_the_key(kind, kind_grades):
    out = kind_grades[kind]
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    # the runs are all there: runs_done passes whatever the answer holds, and every other check reads its key
    assert checks["runs_done"]["status"] == "pass", checks["runs_done"]
    _, described, right_for = VALUES[kind]
    for key in KEYS:
        message = checks[key]["message"]
        if key in right_for:  # the kind is right: the value itself is graded
            assert not message.startswith(f"{key}: expected") and "missing" not in message, message
        else:
            assert checks[key]["status"] == "fail"
            assert message == f"{key}: expected {WANT[key]}, got {described}", message


def test_a_wrong_kind_is_named_while_the_runs_are_still_missing(tmp_path):
    path = tmp_path / "head_count.toml"
    path.write_text(_answer_text("string"), encoding="utf-8")
    out = _grade_answer(tmp_path / "home", path)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    checks = {c["name"]: c["message"] for c in json.loads(out.stdout)["checks"]}
    assert "seeds: " in checks["runs_done"]
    assert checks["best_heads"] == f'best_heads: expected {WANT["best_heads"]}, got the string "4"'


def test_a_missing_key_is_named(runs_home, tmp_path):
    path = tmp_path / "head_count.toml"
    path.write_text("best_heads = 1\n", encoding="utf-8")
    checks = {c["name"]: c["message"] for c in json.loads(_grade_answer(runs_home, path).stdout)["checks"]}
    assert checks["loss_gap"] == f"loss_gap is missing from the answer file: expected {WANT['loss_gap']}"


@pytest.fixture(scope="module")
def long_integer_grades(runs_home, tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """For every key, an answer file whose value is an integer of 5,000 digits, graded through the CLI."""
    texts = {key: f'# {"9" * 5000}\nexplanation = "{"8" * 5000}"\n{key} = {"7" * 5000}\n' for key in KEYS}
    return _grade_each(runs_home, texts, tmp_path_factory.mktemp("long-integers"))


@pytest.mark.slow  # its fixture grades five answer files: 8 s; the array and ungraded-key test stays
@pytest.mark.parametrize("key", KEYS)
def test_an_integer_too_long_to_read_is_an_error_naming_line_and_key(key, long_integer_grades):
    out = long_integer_grades[key]
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    message = json.loads(out.stdout)["checks"][0]["message"]
    assert (
        f"head_count.toml, line 3: {key} is an integer of 5,000 digits, too long to read; expected {WANT[key]}"
        in message
    )


def test_a_long_integer_in_an_array_or_an_ungraded_key_is_an_error_too(runs_home, tmp_path):
    cases = {
        "best_heads = 1\nloss_gap = [\n  1,\n  " + "2" * 5000 + ",\n]\n": "line 4: loss_gap is an integer",
        "best_heads = 1\nnotes = "
        + "3" * 4400
        + "\n": "line 2: notes is an integer of 4,400 digits, too long"
        " to read; notes is not graded: delete that line",
    }
    for text, said in cases.items():
        path = tmp_path / "head_count.toml"
        path.write_text(text, encoding="utf-8")
        out = _grade_answer(runs_home, path)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert said in json.loads(out.stdout)["checks"][0]["message"]
    text_out = tutor(runs_home, "grade", "head-count", str(path), timeout=60)  # the text output, too
    assert text_out.returncode == 2 and "notes is not graded" in text_out.stdout, text_out.stdout


@pytest.mark.parametrize("lang", ["de", "zh"])
def test_answer_messages_are_in_the_learners_language(lang, runs_home, tmp_path):
    from test_grading_lang import english

    from tutor.content.loader import load_course

    ex = load_course(ROOT / "tutor" / "lessons").exercise("head-count")
    for kind in ("string", "huge hex integer", "offset datetime", "array", "nested table"):
        path = tmp_path / "head_count.toml"
        path.write_text(_answer_text(kind), encoding="utf-8")
        out = _grade_answer(runs_home, path, "--lang", lang, here=True)
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        for check in json.loads(out.stdout)["checks"]:
            assert not english(check["message"], lang, ex), (kind, check["message"])
    path.write_text("best_heads = " + "7" * 5000 + "\n", encoding="utf-8")
    out = _grade_answer(runs_home, path, "--lang", lang, here=True)
    message = json.loads(out.stdout)["checks"][0]["message"].replace(str(path), "")  # the path is not ours
    assert out.returncode == 2 and "best_heads" in message and not english(message, lang, ex), message
