"""A batch's intake is bounded, through the real CLI: a class with a zip bomb in it is read in bounded
memory (the sources streamed to a spool, never all held), each bound refuses with a row naming the file
and the bound (in English, German and Chinese) while the rest of the class is graded, a zip cut mid-way
says how many members were not read, a zip in a zip is graded under its name, and a bound given badly is
exit 2 before anything is read. The figures at full size: benchmarks/bench_intake.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.conftest import PYTHON, run_tutor_env
from tests.grading_helpers import SOLUTION, probe_lessons, tutor
from tests.intake_helpers import MiB, bomb, liar, nested, peak_rss_mib, stored_liar, tiny, zipped

# the tutor's own process while it reads a batch: ~50 MiB here, whatever the batch holds; before the
# intake was bounded, the 300 members of 1 MiB below took it to ~345 MiB
PEAK_RSS_MIB = 150


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> Path:
    return probe_lessons(tmp_path_factory.mktemp("lessons"))


def batch(
    lessons: Path, folder: Path, *flags: str, lang: str = "en"
) -> tuple[subprocess.CompletedProcess, float]:
    """`grade probe --batch folder --format json FLAGS` and the peak RSS of its own process (MiB)."""
    env = run_tutor_env(folder.parent / "home")
    env["TUTOR_LANG"] = lang
    argv = [
        PYTHON,
        "-m",
        "tutor",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(folder),
        "--format",
        "json",
        "--jobs",
        "2",
        *flags,
    ]
    out_path = folder.parent / f"out-{lang}.json"
    with out_path.open("w") as stdout:
        child = subprocess.Popen(
            argv, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL
        )
        peak = peak_rss_mib(child)
        _, err = child.communicate(timeout=180)
    return subprocess.CompletedProcess(
        argv, child.returncode, out_path.read_text(encoding="utf-8"), err
    ), peak


def rows(out: subprocess.CompletedProcess) -> dict[str, dict]:
    assert out.returncode == 0, out.stderr
    return {r["file"]: r for r in json.loads(out.stdout)["results"]}


def message(row: dict) -> str:
    return row["grade"]["checks"][0]["message"]


def bomb_class(base: Path) -> Path:
    """Two students' zips; the second holds 300 members of 1 MiB of 0xff (330 KB zipped), which do not
    decode: read, each is an error row, and no grader starts for it."""
    folder = base / "subs"
    folder.mkdir()
    (folder / "ann_101.zip").write_bytes(zipped({"probe.py": SOLUTION.encode()}))
    (folder / "bob_102.zip").write_bytes(zipped({"probe.py": SOLUTION.encode(), **bomb(300, byte=b"\xff")}))
    # members of 60 KB, each too small to be a bomb, but 600 KB from a zip of 2 KB
    ratio = {f"r{i}.py": b"\xff" * 60_000 for i in range(10)}
    (folder / "cy_103.zip").write_bytes(zipped({"probe.py": SOLUTION.encode(), **ratio}))
    (folder / "dan_104.zip").write_bytes(stored_liar(100))  # a ratio of 1 by its headers
    return folder


def test_a_class_with_a_zip_bomb_is_read_in_bounded_memory(lessons, tmp_path):
    folder = bomb_class(tmp_path)
    out, peak = batch(lessons, folder)
    found = rows(out)
    assert peak < PEAK_RSS_MIB, f"the batch's process peaked at {peak:.0f} MiB"
    assert found["ann_101.zip/probe.py"]["grade"]["status"] == "pass"
    assert found["bob_102.zip/probe.py"]["grade"]["status"] == "pass"  # the rest of the zip is graded too
    refused = [row for name, row in found.items() if name.startswith("bob_102.zip/bomb/")]
    assert len(refused) == 300 and all(row["grade"]["status"] == "error" for row in refused)
    stored = zipfile.ZipFile(folder / "bob_102.zip").getinfo("bomb/0007.py").compress_size
    assert message(found["bob_102.zip/bomb/0007.py"]) == (
        f"could not load the file: bob_102.zip/bomb/0007.py inflates from {stored:,} bytes to more than 100"
        " times as many, as a zip bomb does; it is not read (--max-ratio)"
    )
    assert found["cy_103.zip/probe.py"]["grade"]["status"] == "pass" and "cy_103.zip/r2.py" in found
    size = (folder / "cy_103.zip").stat().st_size // 2**10
    assert message(found["cy_103.zip"]).endswith(
        f"cy_103.zip: 7 of its members were not read: they would take cy_103.zip past 100 times its own {size} KB"
        " (--max-ratio)"
    )
    # the headers' claim passes; the bytes inflated stop at 100 times the zip's own size on the disk
    size = (folder / "dan_104.zip").stat().st_size
    read = [row for name, row in found.items() if name.startswith("dan_104.zip/") and row["sha256"]]
    assert 0 < len(read) <= 100 * size // MiB and all("is not UTF-8" in message(row) for row in read)
    assert message(found["dan_104.zip"]).endswith(
        f"of its members were not read: they would take dan_104.zip past 100 times its own {size // 2**10} KB"
        " (--max-ratio)"
    )


def test_every_member_is_read_and_still_one_file_at_a_time_is_held(lessons, tmp_path):
    """With the ratio bound lifted, all 300 MiB are read (each member's hash is its bytes', and each says
    it is not UTF-8): streamed through the spool, the process stays as small."""
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "bob_102.zip").write_bytes(zipped(bomb(300, byte=b"\xff")))
    out, peak = batch(lessons, folder, "--max-ratio", "1000000", "--max-zip-mb", "1000")
    found = rows(out)
    assert peak < PEAK_RSS_MIB, f"the batch's process peaked at {peak:.0f} MiB"
    want = hashlib.sha256(b"\xff" * (MiB - 1) + b"\n").hexdigest()
    assert len(found) == 300 and all(row["sha256"] == want for row in found.values())
    assert all("is not UTF-8" in message(row) for row in found.values())


@pytest.fixture(scope="module")
def bounded(lessons, tmp_path_factory) -> dict[str, dict]:
    """A folder of zips each meeting one bound, graded with small bounds."""
    base = tmp_path_factory.mktemp("bounded")
    folder = base / "subs"
    folder.mkdir()
    good = {"probe.py": SOLUTION.encode()}
    (folder / "a_deep.zip").write_bytes(nested(2, good, bombs=0))  # a_deep.zip/level1.zip/level0.zip/probe.py
    (folder / "b_nested.zip").write_bytes(nested(1, good, bombs=0))  # b_nested.zip/level0.zip/probe.py
    (folder / "c_members.zip").write_bytes(zipped({**good, **tiny(20)}))  # 21 members, 10 may be listed
    (folder / "d_directory.zip").write_bytes(zipped({**good, **tiny(100)}))  # a directory over 10 × 256 B
    (folder / "e_liar.zip").write_bytes(liar(50 * MiB, first=good))
    (folder / "f_big.zip").write_bytes(zipped({"probe.py": SOLUTION.encode() + b"#" * 3000 + b"\n"}))
    # zips in it of 600 KB each (noise, not a bomb; a zip is no file, --max-file-kb does not take it)
    noise = {f"x{i}.zip": zipped({"n.py": os.urandom(600 * 2**10)}) for i in range(3)}
    (folder / "g_cut.zip").write_bytes(zipped({**good, **noise}))
    (folder / "i_plain.py").write_text(SOLUTION, encoding="utf-8")
    out, _ = batch(
        lessons, folder, "--max-depth", "2", "--max-members", "10", "--max-file-kb", "2", "--max-zip-mb", "1"
    )
    return rows(out)


def test_a_zip_in_a_zip_is_graded_under_its_name_and_one_too_deep_is_refused(bounded):
    assert bounded["b_nested.zip/level0.zip/probe.py"]["grade"]["status"] == "pass"
    deep = bounded["a_deep.zip/level1.zip/level0.zip"]
    assert deep["grade"]["status"] == "error" and "more than 2 folders and zips deep" in message(deep)
    assert message(deep).endswith("(--max-depth)")


def test_a_zip_listing_more_members_than_it_may_is_read_up_to_the_bound(bounded):
    assert bounded["c_members.zip/probe.py"]["grade"]["status"] == "pass"  # among the first 10
    assert message(bounded["c_members.zip"]).endswith(
        "c_members.zip holds 21 members: the first 10 were read, the other 11 were not (--max-members)"
    )
    directory = message(bounded["d_directory.zip"])
    assert "d_directory.zip: its directory of" in directory and directory.endswith(
        "it is not read (--max-members)"
    )
    assert "d_directory.zip/probe.py" not in bounded  # refused unread, its directory never parsed


def test_a_header_that_lies_about_its_size_gets_no_further(bounded):
    assert bounded["e_liar.zip/probe.py"]["grade"]["status"] == "pass"
    lie = bounded["e_liar.zip/lie.py"]
    assert lie["grade"]["status"] == "error" and lie["sha256"] is None
    assert "Bad CRC-32" in message(lie)  # 1,000 bytes inflated, as the header says, and they do not match


def test_a_file_larger_than_the_bound_is_refused_naming_it(bounded):
    assert "f_big.zip/probe.py is larger than 2 KB, the most a batch reads of one file (--max-file-kb)" in (
        message(bounded["f_big.zip/probe.py"])
    )


def test_a_zip_cut_mid_way_says_how_many_members_were_not_read(bounded):
    assert bounded["g_cut.zip/probe.py"]["grade"]["status"] == "pass"
    assert "larger than 2 KB" in message(bounded["g_cut.zip/x0.zip/n.py"])  # x0.zip was read
    assert message(bounded["g_cut.zip"]).endswith(
        "g_cut.zip: 2 of its members were not read: they would take g_cut.zip past the 1 MB one zip may"
        " inflate to (--max-zip-mb)"
    )
    assert bounded["i_plain.py"]["grade"]["status"] == "pass"  # the rest of the class is graded


def test_a_batch_takes_at_most_its_files_and_says_where_it_stopped(lessons, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in ("a.py", "b.py", "c.py", "d.py"):
        (folder / name).write_text(SOLUTION, encoding="utf-8")
    found = rows(batch(lessons, folder, "--max-files", "2")[0])
    assert [name for name in found] == ["a.py", "b.py", "c.py"]
    assert message(found["c.py"]).endswith(
        "c.py and every file after it were not read: a batch takes at most 2 files (--max-files, or grade the"
        " class in parts with --shard K/N)"
    )


@pytest.mark.parametrize(("lang", "words"), [("de", "wie eine ZIP-Bombe"), ("zh", "与 zip 炸弹无异")])
def test_refusals_are_said_in_the_instructors_language(lessons, tmp_path, lang, words):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "bomb.zip").write_bytes(zipped(bomb(2, prefix="")))
    (folder / "deep.zip").write_bytes(nested(2, {"x.py": b"x = 1\n"}, bombs=0))
    found = rows(batch(lessons, folder, "--max-depth", "1", lang=lang)[0])
    assert words in message(found["bomb.zip/0000.py"]) and "--max-ratio" in message(found["bomb.zip/0000.py"])
    assert "--max-depth" in message(found["deep.zip/level1.zip"])


def test_a_bound_given_badly_is_refused_before_anything_is_read(lessons, tmp_path):
    alone = tutor(tmp_path / "home", "--lessons", str(lessons), "grade", "probe", "x.py", "--max-files", "3")
    assert alone.returncode == 2 and "--max-files goes with --batch DIR" in alone.stderr, alone.stderr
    zero = tutor(
        tmp_path / "home",
        "--lessons",
        str(lessons),
        "grade",
        "probe",
        "--batch",
        str(tmp_path),
        "--max-ratio",
        "0",
    )
    assert zero.returncode == 2 and "--max-ratio must be a number from 1 to 1,000,000, got 0" in zero.stderr
    assert "Traceback" not in alone.stderr + zero.stderr
