"""A batch as an instructor meets it, through the real CLI: downloads laid out as the LMSs lay them out
(Moodle's folder per student, a zip of Canvas's flat names, a zip given as --batch), progress and the
time left on stderr, an export that replaces an earlier one whole (or refuses without --force), export
files 0600, a file that did not load told why without a check's hint, and a latin-1 file with its PEP 263
coding line graded as Python reads it.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.grading_helpers import SOLUTION, probe_lessons, tutor
from tutor.commands.batch_progress import BatchProgress

WRONG = SOLUTION.replace("xs[-1]", "xs[0]")
LATIN1 = (
    "# -*- coding: latin-1 -*-\n# Übung von Jürgen\n" + SOLUTION.replace("return a + b", "return a + b  # ä")
).encode("latin-1")
BROKEN = "def add(a, b):\n    return a +\n"


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    return probe_lessons(tmp_path_factory.mktemp("lessons"))


def canvas_zip() -> bytes:
    """Canvas's "Download submissions": flat names, with macOS's leftovers and two hostile members."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("leeann_101_5001_probe.py", SOLUTION)
        archive.writestr("chanbo_late_102_5002_probe.py", WRONG)
        archive.writestr("__MACOSX/._leeann_101_5001_probe.py", b"\x00\x05\x16\x07")
        archive.writestr("../escape.py", SOLUTION)
        link = zipfile.ZipInfo("link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    return out.getvalue()


@pytest.fixture(scope="module")
def moodle(lessons, tmp_path_factory) -> dict:
    """Moodle's "Download all submissions" unzipped (a folder per student) with a zip beside it, graded."""
    base = tmp_path_factory.mktemp("moodle")
    subs = base / "subs"
    for folder, text in {
        "Ann Lee_101_assignsubmission_file_": SOLUTION.encode(),
        "Jürgen Roth_103_assignsubmission_file_": LATIN1,
        "Cy Dorn_104_assignsubmission_file_": BROKEN.encode(),
    }.items():
        (subs / folder).mkdir(parents=True)
        (subs / folder / "probe.py").write_bytes(text)
    (subs / "canvas.zip").write_bytes(canvas_zip())
    (subs / ".git").mkdir()
    (subs / ".git" / "hook.py").write_text(SOLUTION, encoding="utf-8")  # a hidden folder is skipped
    out = tutor(
        base / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(subs),
        "--format",
        "json",
        "--jobs",
        "2",
        "--export",
        str(base / "out"),
    )
    return {"base": base, "subs": subs, "out": out}


def statuses(out: subprocess.CompletedProcess) -> dict[str, str]:
    return {row["file"]: row["grade"]["status"] for row in json.loads(out.stdout)["results"]}


def test_a_folder_per_student_and_a_zip_in_it_are_graded_as_the_lms_lays_them_out(moodle):
    out = moodle["out"]
    assert out.returncode == 0, out.stderr
    assert statuses(out) == {
        "Ann Lee_101_assignsubmission_file_/probe.py": "pass",
        "Cy Dorn_104_assignsubmission_file_/probe.py": "error",
        "Jürgen Roth_103_assignsubmission_file_/probe.py": "pass",
        "canvas.zip/../escape.py": "error",
        "canvas.zip/chanbo_late_102_5002_probe.py": "fail",
        "canvas.zip/leeann_101_5001_probe.py": "pass",
        "canvas.zip/link.py": "error",
    }
    rows = {row["file"]: row for row in json.loads(out.stdout)["results"]}
    assert "never extracted" in rows["canvas.zip/../escape.py"]["grade"]["checks"][0]["message"]
    assert "symbolic link" in rows["canvas.zip/link.py"]["grade"]["checks"][0]["message"]
    assert rows["canvas.zip/link.py"]["sha256"] is None


def test_a_latin1_file_with_its_coding_line_is_graded_as_python_reads_it(moodle):
    row = next(r for r in json.loads(moodle["out"].stdout)["results"] if r["file"].startswith("Jürgen"))
    assert row["grade"]["score"] == row["grade"]["max_score"] == 4


def test_progress_and_the_time_left_are_lines_on_a_pipe(moodle):
    err = moodle["out"].stderr.splitlines()
    assert err[0] == "probe: grading 5 files"
    graded = [line for line in err if "files graded," in line]
    assert graded[0].startswith("probe: 1/5 files graded, about ") and graded[-1].startswith("probe: 5/5 ")
    assert any(line.startswith("probe: 5 files graded in ") for line in err)


def test_progress_on_a_terminal_is_one_bar_redrawn():
    out = io.StringIO()
    progress = BatchProgress("rope", "en", out, tty=True)
    progress.start(4)
    for done in range(1, 5):
        progress.done(done)
    progress.finish()
    text = out.getvalue()
    assert text.count("\r\033[K") == 6 and text.endswith("\n") and text.count("\n") == 1
    assert "[██████··················] rope: 1/4 files graded, about" in text
    assert "[████████████████████████] rope: 4/4 files graded" in text


def test_a_zip_given_as_the_batch_is_graded(lessons, tmp_path):
    archive = tmp_path / "download.zip"
    archive.write_bytes(canvas_zip())
    out = tutor(
        tmp_path / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(archive),
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    assert statuses(out)["leeann_101_5001_probe.py"] == "pass"
    (tmp_path / "bad.zip").write_bytes(b"PK not a zip")
    bad = tutor(
        tmp_path / "home", "--lessons", str(lessons), "grade", "probe", "--batch", str(tmp_path / "bad.zip")
    )
    assert bad.returncode == 2 and "bad.zip is not a zip file that can be read" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr


def test_every_export_file_is_private(moodle):
    out = moodle["base"] / "out"
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 10 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    assert stat.S_IMODE(out.stat().st_mode) == 0o700


def test_a_file_that_did_not_load_says_why_with_no_checks_hint(moodle):
    feedback = (moodle["base"] / "out/feedback").iterdir()
    cy = next(p for p in feedback if p.name == "104.md").read_text(
        encoding="utf-8"
    )  # Cy Dorn, participant 104
    assert "Your file did not load, so no check ran:" in cy and "syntax error in line 2" in cy
    assert "use +" not in cy and "**Hint:**" not in cy


@pytest.mark.slow  # 6-10 s: over the default run's budget (docs/development.md); CI's slow run has it
def test_an_earlier_export_is_replaced_whole_with_force_and_refused_without(lessons, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("ann.py", "bo.py"):
        (subs / name).write_text(SOLUTION, encoding="utf-8")
    common = (
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(subs),
        "--export",
        str(tmp_path / "out"),
    )
    first = tutor(tmp_path / "home", *common)
    assert first.returncode == 0 and (tmp_path / "out/feedback/bo.md").is_file(), first.stderr
    (subs / "bo.py").unlink()
    again = tutor(tmp_path / "home", *common)
    assert again.returncode == 2 and "holds an earlier export" in again.stderr and "--force" in again.stderr
    assert (tmp_path / "out/feedback/bo.md").is_file()  # untouched
    forced = tutor(tmp_path / "home", *common, "--force")
    assert forced.returncode == 0, forced.stderr
    assert sorted(p.name for p in (tmp_path / "out/feedback").iterdir()) == ["ann.md"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]  # nothing left beside it
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep", encoding="utf-8")
    refused = tutor(tmp_path / "home", *common[:-1], str(other), "--force")
    assert refused.returncode == 2 and "holds no export of this tutor (mine.txt)" in refused.stderr
    assert (other / "mine.txt").read_text(encoding="utf-8") == "keep" and os.listdir(other) == ["mine.txt"]
