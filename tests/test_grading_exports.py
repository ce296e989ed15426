"""Instructor exports (`grade ID --batch DIR --export OUT [--roster CSV]`, and the same from `--merge`),
through the real CLI: the per-check CSV, the gradebook and the feedback files, in English and German,
from a hostile folder. A submission writes Markdown meant to break out of the feedback (a heading, a
link, an image, HTML, runs of backticks) into its message and its output, another makes a formula; file
names hold a newline, a bidi override and a case-only twin; a roster names a formula as a student's name.
The exports stay whole and safe: every row there, every CSV cell text, nothing of the submission
rendered as Markdown, every feedback file inside OUT/feedback.

Five files are graded in all (three in English, two in German, at the same time); the rest are error
rows that start no grader.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import resource
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import PYTHON, run_tutor_env
from tests.grading_helpers import exercise_course, tutor
from tutor import __version__
from tutor.course import open_course
from tutor.errors import TutorError
from tutor.grading.instructor.batch import checks_version, shown_name
from tutor.grading.instructor.export import GRADEBOOK_COLUMNS, md_block, md_code, read_roster
from tutor.grading.untrusted import one_line

PROBE_TOML = """
id = "probe"
file_name = "probe.py"
section = "probe"
timeout_s = 10
title = { en = "Probe", de = "Probe-Aufgabe" }
task = { en = "Write add(a, b) and neg(x)." }
hints = [{ en = "first hint", de = "erster Tipp" }, { en = "second hint", de = "zweiter Tipp" }]

[[checks]]
id = "add"
points = 2
title = { en = "adds", de = "addiert" }
hint = { en = "use +", de = "nimm +" }

[[checks]]
id = "neg"
title = { en = "negates", de = "negiert" }
hint = { en = "use -x", de = "nimm -x" }
"""
# add's message is what the submission returned: a learner writes it
PROBE_CHECKS = """
from tutor.grading.kit import expect


def check_add(learner):
    got = learner.add(2, 3)
    assert got == 5, str(got)
    return "2 + 3 = 5"


def check_neg(learner):
    expect(learner.neg(4), -4)
"""
SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef neg(x):\n    return -x\n"
MARKDOWN = (
    "`````\n# pwned\n[click](http://evil.example/a)\n![img](http://evil.example/x.png)\n"
    "<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n````"
)
BEN = f"print({MARKDOWN!r})\n\n\ndef add(a, b):\n    return {MARKDOWN!r}\n\n\ndef neg(x):\n    return x\n"
FORMULA = "def add(a, b):\n    return '=2+5'\n\n\ndef neg(x):\n    return -x\n"
NEWLINE_NAME = "evil\nalice.py"
BIDI_NAME = "report\u202eyp.txt.py"
# on disk: content (bytes: an error row, no grader started)
FILES: dict[str, str | bytes] = {
    "anna.py": SOLUTION,
    "ben.py": BEN,
    "formula.py": FORMULA,
    NEWLINE_NAME: b"\xff",
    BIDI_NAME: b"\xff",
    "Zed.py": b"\xff",
    "zed.py": b"\xff",
    "..py": b"\xff",
}
ROSTER = 'file,student_id,name\nanna.py,s001,Anna Li\nben.py,s002,"=HYPERLINK(""http://evil.example"")"\nevil\\nalice.py,s003,\n'
CHECKS_HEAD = [
    "student_id",
    "file",
    "check",
    "status",
    "points",
    "max_points",
    "message",
    "version",
    "checks_version",
    "override",
]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    files = {
        "exercise.toml": PROBE_TOML,
        "checks.py": PROBE_CHECKS,
        "solution.py": SOLUTION,
        "starter.py": SOLUTION.replace("return", "raise NotImplementedError #"),
    }
    return exercise_course(tmp_path_factory.mktemp("lessons"), files, shipped=False, order=1)


def folder_of(path: Path, files: dict[str, str | bytes]) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


@pytest.fixture(scope="module")
def exported(lessons, tmp_path_factory) -> dict:
    """The hostile folder exported in English with a roster, and a two-file folder in German, at once."""
    base = tmp_path_factory.mktemp("exports")
    subs = folder_of(base / "subs", FILES)
    de_subs = folder_of(base / "de-subs", {"anna.py": SOLUTION, "bert.py": SOLUTION.replace("-x", "x")})
    (base / "roster.csv").write_text(ROSTER, encoding="utf-8")
    common = ("--lessons", str(lessons), "grade", "probe", "--format", "json")
    with ThreadPoolExecutor(max_workers=2) as pool:
        en = pool.submit(
            tutor,
            base / "home",
            *common,
            "--batch",
            str(subs),
            "--export",
            str(base / "en"),
            "--roster",
            str(base / "roster.csv"),
        )
        de = pool.submit(
            tutor,
            base / "home",
            "--lang",
            "de",
            *common,
            "--batch",
            str(de_subs),
            "--export",
            str(base / "de"),
        )
        return {"base": base, "en": en.result(), "de": de.result()}


def read_csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def outside_fences(markdown: str) -> list[str]:
    """The lines of `markdown` a renderer reads as Markdown: those outside fenced code blocks (a fence
    of backticks ends only at a line of at least as many backticks and nothing else)."""
    out, fence = [], 0
    for line in markdown.splitlines():
        run = re.match(r"(`{3,})(.*)$", line)
        if not fence:
            if run:
                fence = len(run[1])
            else:
                out.append(line)
        elif run and len(run[1]) >= fence and not run[2].strip():
            fence = 0
    assert not fence, "a fenced block is left open"
    return out


def test_the_batch_report_is_printed_and_the_exports_are_written(exported):
    out = exported["en"]
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["results"]) == len(FILES)
    assert out.stderr.splitlines()[-1].startswith(f"exports for {len(FILES)} files written to ")
    en = exported["base"] / "en"
    assert sorted(p.name for p in en.iterdir()) == [
        "canvas.csv",
        "checks.csv",
        "exercism",
        "export.json",
        "feedback",
        "gradebook.csv",
        "gradescope",
        "moodle.csv",
    ]


def test_the_per_check_csv_has_a_row_per_file_and_check(exported, lessons):
    path = exported["base"] / "en/checks.csv"
    assert path.read_text(encoding="utf-8").splitlines()[0] == ",".join(CHECKS_HEAD)
    rows = read_csv(path)
    assert len(rows) == len(FILES) * 2
    by = {(r["file"], r["check"]): r for r in rows}
    version = checks_version(open_course(lessons).exercise("probe"))
    assert by["anna.py", "add"] == {
        "student_id": "s001",
        "file": "anna.py",
        "check": "add",
        "status": "pass",
        "points": "2.0",
        "max_points": "2",
        "message": "2 + 3 = 5",
        "version": "1",
        "checks_version": version,
        "override": "",
    }
    assert (by["ben.py", "neg"]["status"], by["ben.py", "neg"]["message"]) == (
        "fail",
        "neg(4): expected -4, got 4",
    )
    assert by["ben.py", "add"]["message"] == one_line(MARKDOWN)  # in a CSV cell it is text, and starts with `
    assert "↵# pwned↵" in by["ben.py", "add"]["message"]  # one line: the grader's own words never seem to end
    assert by["formula.py", "add"]["message"] == "'=2+5"  # a spreadsheet would have run it
    assert by["formula.py", "add"]["student_id"] == "formula"
    assert by["evil\\nalice.py", "add"]["student_id"] == "s003"
    assert by["report\\u202eyp.txt.py", "add"]["status"] == "error"
    assert by["..py", "neg"]["status"] == "skipped"
    for row in rows:
        assert not any(row[k].startswith(FORMULA_START) for k in CHECKS_HEAD), row


def test_the_gradebook_has_a_row_per_student_flagging_files_not_in_the_roster(exported, lessons):
    path = exported["base"] / "en/gradebook.csv"
    assert path.read_text(encoding="utf-8").splitlines()[0] == ",".join(GRADEBOOK_COLUMNS)
    rows = read_csv(path)
    assert [r["file"] for r in rows] == [
        "..py",
        "Zed.py",
        "anna.py",
        "ben.py",
        "evil\\nalice.py",
        "formula.py",
        "report\\u202eyp.txt.py",
        "zed.py",
    ]
    by = {r["file"]: r for r in rows}
    version = checks_version(open_course(lessons).exercise("probe"))
    assert by["anna.py"] == {
        "student_id": "s001",
        "name": "Anna Li",
        "file": "anna.py",
        "total": "3.0",
        "max": "3.0",
        "status": "pass",
        "in_roster": "yes",
        "feedback": "feedback/s001.md",
        "version": "1",
        "checks_version": version,
        "isolation": "strong",
        "files": "1",
        "overrides": "0",
        "tutor_version": __version__,
        "graded_at": by["anna.py"]["graded_at"],
        "seed": by["anna.py"]["seed"],
        "submitted": by["anna.py"]["submitted"],
        "submitted_from": "none",
        "late_days": "",
        "late_penalty": "",
        "owner_from": "roster",
        "picked_because": "only",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", by["anna.py"]["graded_at"])
    assert re.fullmatch(r"[0-9a-f]{16}", by["anna.py"]["seed"])
    assert by["ben.py"]["name"] == '\'=HYPERLINK("http://evil.example")' and by["ben.py"]["total"] == "0.0"
    assert (by["formula.py"]["student_id"], by["formula.py"]["in_roster"]) == ("formula", "no")
    assert (by["evil\\nalice.py"]["student_id"], by["evil\\nalice.py"]["in_roster"]) == ("s003", "yes")
    assert by["report\\u202eyp.txt.py"]["student_id"] == "report\\u202eyp.txt"
    assert by["..py"]["student_id"] == "..py" and by["..py"]["feedback"] == "feedback/..py.md"
    assert (
        by["Zed.py"]["feedback"] == "feedback/Zed.md"
    )  # its twin, on a case-insensitive disk the same file:
    assert re.fullmatch(
        r"feedback/zed-[0-9a-f]{12}\.md", by["zed.py"]["feedback"]
    )  # a hash of the name added
    for row in rows:
        assert not any(row[k].startswith(FORMULA_START) for k in GRADEBOOK_COLUMNS), row


def test_every_feedback_file_is_inside_the_feedback_folder_and_escaped(exported):
    en = exported["base"] / "en"
    named = {r["feedback"].removeprefix("feedback/") for r in read_csv(en / "gradebook.csv")}
    assert {p.name for p in (en / "feedback").iterdir()} == named
    assert {p.name for p in exported["base"].iterdir()} - {"home"} == {
        "de",
        "de-subs",
        "en",
        "roster.csv",
        "subs",
    }
    for path in [*(en / "feedback").iterdir(), en / "checks.csv", en / "gradebook.csv"]:
        text = path.read_text(encoding="utf-8")
        assert not {"\u202e", "\x1b", "\r"} & set(text + path.name), path
        assert "\n" not in path.name
    evil = (en / "feedback/s003.md").read_text(encoding="utf-8")
    assert "- File: `evil\\nalice.py`" in evil
    bidi = next(p for p in (en / "feedback").iterdir() if p.name.startswith("report"))
    assert bidi.name == "report\\u202eyp.txt.md" and "- File: `report\\u202eyp.txt.py`" in bidi.read_text()


def test_a_submissions_markdown_is_shown_as_text_never_rendered(exported):
    text = (exported["base"] / "en/feedback/s002.md").read_text(encoding="utf-8")
    assert text.startswith("# Probe (probe): feedback\n")
    assert '- Student: `s002` (`=HYPERLINK("http://evil.example")`)' in text
    assert "- Total: 0/3 points, **FAIL**" in text
    markdown = outside_fences(text)
    assert [line for line in markdown if line.startswith("#")] == [
        "# Probe (probe): feedback",
        "## Checks",
        "### ✗ adds (`add`)",
        "### ✗ negates (`neg`)",
        "## Output of your code",
    ]
    assert not [line for line in markdown if re.search(r"pwned|evil\.example/|<script|<img|\]\(", line)]
    assert text.count("``````text\n`````↵# pwned") == 1  # the message, one line, in a longer fence
    assert text.count("``````text\n`````\n# pwned") == 1  # the output, as printed, in a longer fence
    assert "**Hint:** use +" in text and "use -x" not in text  # the first failure's own hint only
    assert "stuck? python -m tutor grade probe --hint shows hint 1 of 2" in text


def test_a_pass_and_an_error_row_in_english(exported):
    anna = (exported["base"] / "en/feedback/s001.md").read_text(encoding="utf-8")
    assert "- Total: 3/3 points, **PASS**" in anna and "### ✓ adds (`add`)\n\npass, 2/2 points" in anna
    assert "Passed. See the reference solution: python -m tutor exercise solution probe" in anna
    assert "Hint" not in anna and "stuck?" not in anna
    zed = (exported["base"] / "en/feedback/Zed.md").read_text(encoding="utf-8")
    assert "**ERROR**" in zed and "Zed.py is not UTF-8" in zed and "### · negates (`neg`)\n\nnot run" in zed


def test_the_exports_are_in_german_when_the_instructor_says_so(exported):
    out = exported["de"]
    assert out.returncode == 0, out.stderr
    assert "Exporte für 2 Dateien in " in out.stderr
    de = exported["base"] / "de"
    rows = read_csv(de / "checks.csv")
    assert [(r["student_id"], r["check"], r["status"]) for r in rows] == [
        ("anna", "add", "pass"),
        ("anna", "neg", "pass"),
        ("bert", "add", "pass"),
        ("bert", "neg", "fail"),
    ]
    assert rows[3]["message"] == "neg(4): erwartet -4, erhalten 4"
    book = read_csv(de / "gradebook.csv")
    assert [(r["student_id"], r["total"], r["status"], r["in_roster"]) for r in book] == [
        ("anna", "3.0", "pass", ""),
        ("bert", "2.0", "fail", ""),
    ]
    bert = (de / "feedback/bert.md").read_text(encoding="utf-8")
    assert bert.startswith("# Probe-Aufgabe (probe): Rückmeldung\n")
    assert "- Studierende(r): `bert`" in bert and "- Gesamt: 2/3 Punkte, **NICHT BESTANDEN**" in bert
    assert "### ✗ negiert (`neg`)\n\nnicht bestanden, 0/1 Punkte" in bert
    assert "**Tipp:** nimm -x" in bert and "Tipp 1 von 2" in bert
    assert "BESTANDEN" in (de / "feedback/anna.md").read_text(encoding="utf-8")


def test_exports_from_a_merge_are_the_batchs(exported, lessons, tmp_path):
    report = tmp_path / "all.json"
    report.write_text(exported["en"].stdout, encoding="utf-8")
    out = tutor(
        tmp_path,
        "--lessons",
        str(lessons),
        "grade",
        "--merge",
        str(report),
        "--export",
        str(tmp_path / "m"),
        "--roster",
        str(exported["base"] / "roster.csv"),
    )
    assert out.returncode == 0, out.stderr
    en = exported["base"] / "en"
    made = sorted(str(p.relative_to(en)) for p in en.rglob("*") if p.is_file())
    assert made == sorted(
        str(p.relative_to(tmp_path / "m")) for p in (tmp_path / "m").rglob("*") if p.is_file()
    )
    assert "gradescope/s001.json" in made and "exercism/s001.json" in made and "canvas.csv" in made
    for where in made:
        assert (tmp_path / "m" / where).read_bytes() == (en / where).read_bytes(), where


def test_a_roster_id_that_names_a_path_is_refused_before_anything_is_graded(lessons, tmp_path):
    subs = folder_of(tmp_path / "subs", {"x.py": SOLUTION})
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nx.py,../x\n", encoding="utf-8")
    out = tutor(
        tmp_path / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(subs),
        "--export",
        str(tmp_path / "out"),
        "--roster",
        str(roster),
    )
    assert out.returncode == 2 and out.stdout == ""
    assert (
        "roster.csv, line 2: the student id ../x cannot name a feedback file: it holds a path separator"
        in out.stderr
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.md").exists()
    lonely = tutor(tmp_path / "home", "--lessons", str(lessons), "grade", "probe", "--roster", str(roster))
    assert lonely.returncode == 2 and "--roster goes with --export DIR" in lonely.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "anna.py,s1\n",
            "the first line must name the columns file,student_id[,name] (the tutor's roster), or",
        ),
        ("file,name\nanna.py,Anna\n", "the first line must name the columns"),
        ("file,student_id\nanna.py\n", "line 2: expected 2 cells, as in the header, got 1"),
        ("file,student_id\nanna.py,a\nanna.py,b\n", "line 3: anna.py is already on line 2"),
        ("file,student_id\na.py,..\n", "the student id .. cannot name a feedback file: it is . or .."),
        ("file,student_id\na.py,a\\b\n", "it holds a path separator"),
        ("file,student_id\na.py,\n", "the student id  cannot name a feedback file: it is empty"),
        (
            "file,student_id\na.py,x\u202ey\n",
            "the student id x\\u202ey cannot name a feedback file: it holds a control",
        ),
        ('file,student_id\na.py,"x\ny"\n', "it holds a control or invisible character"),
        ("file,student_id\na.py," + "x" * 201 + "\n", "it is longer than 200 bytes"),
        ("file,student_id\n,s1\n", "line 2: the file cell is empty"),
        ('file,student_id\n"a.py,s1\n', "not valid CSV"),
    ],
)
def test_a_bad_roster_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TutorError, match=re.escape(message)):
        read_roster(path, "en")


def test_a_roster_may_have_a_bom_blank_lines_spaces_and_more_columns(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("\ufeffstudent_id, file, email\n\ns1, a.py, a@example.org\n", encoding="utf-8")
    (student,) = read_roster(path, "en").files.items()
    assert student[0] == "a.py" and (student[1].id, student[1].name, student[1].in_roster) == ("s1", "", True)
    path.write_bytes(b"file,student_id\na.py,s\xff\n")
    with pytest.raises(TutorError, match="roster.csv is not UTF-8"):
        read_roster(path, "en")


def test_markdown_neutralising_rules():
    assert md_block("a ``` b\n````") == "`````text\na ``` b\n````\n`````"
    assert md_block("plain") == "```text\nplain\n```"
    assert md_code("a.py") == "`a.py`" and md_code("x`y") == "``x`y``" and md_code("`x") == "`` `x ``"
    assert md_code(shown_name("a\nb[c](d)")) == "`a\\nb[c](d)`"


def test_feedback_names_never_collide_and_no_row_stops_the_export(lessons, tmp_path):
    """Zed.py and zed.py are one file on a case-insensitive disk, so zed.py's feedback gets a hash of its
    name: a student whose own id is that hashed name takes it first, and zed.py must get another."""
    hashed = "zed-" + hashlib.sha256(b"zed.py").hexdigest()[:12]
    subs = folder_of(
        tmp_path / "subs",
        {
            "Zed.py": SOLUTION,
            f"{hashed}.py": SOLUTION.replace("-x", "x"),
            "zed.py": "def add(a, b):\n    return 0\n",
        },
    )
    out = tutor(
        tmp_path / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(subs),
        "--export",
        str(tmp_path / "out"),
    )
    assert out.returncode == 0, out.stderr
    book = {r["student_id"]: r for r in read_csv(tmp_path / "out/gradebook.csv")}
    assert set(book) == {"Zed", hashed, "zed"}
    names = [book[sid]["feedback"] for sid in ("Zed", hashed, "zed")]
    assert (
        names[:2] == ["feedback/Zed.md", f"feedback/{hashed}.md"] and len({n.casefold() for n in names}) == 3
    )
    for sid, total in (("Zed", "3/3"), (hashed, "2/3"), ("zed", "0/3")):  # each file its own student's
        text = (tmp_path / "out" / book[sid]["feedback"]).read_text(encoding="utf-8")
        assert f"- Student: `{sid}`" in text and f"- Total: {total} points" in text
    stems = {Path(n).stem for n in names}
    for folder in ("gradescope", "exercism"):
        assert {p.stem for p in (tmp_path / "out" / folder).iterdir()} == stems


def test_a_file_the_disk_refuses_is_reported_and_the_rest_is_written(lessons, tmp_path):
    """Run with a limit on file size (RLIMIT_FSIZE, as a quota would refuse): the feedback of a file that
    printed 7000 characters is over it, every other file of the export is under it."""
    subs = folder_of(tmp_path / "subs", {"anna.py": SOLUTION, "loud.py": "print('x' * 7000)\n" + SOLUTION})
    out = subprocess.run(
        [
            PYTHON,
            "-m",
            "tutor",
            "--lessons",
            str(lessons),
            "grade",
            "probe",
            "--batch",
            str(subs),
            "--export",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=run_tutor_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000)),
    )
    assert out.returncode == 0, out.stderr
    assert (
        "warning: feedback/loud.md could not be written (File too large); the rest of the export is written"
        in (out.stderr)
    )
    book = {r["student_id"]: r for r in read_csv(tmp_path / "out/gradebook.csv")}
    assert (book["anna"]["feedback"], book["loud"]["feedback"]) == (
        "feedback/anna.md",
        "",
    )  # no lost file named
    assert (book["anna"]["total"], book["loud"]["total"]) == ("3.0", "3.0")
    assert sorted(p.name for p in (tmp_path / "out/feedback").iterdir()) == ["anna.md"]
    assert sorted(p.name for p in (tmp_path / "out/exercism").iterdir()) == ["anna.json", "loud.json"]
