"""atomicio: a write either completes or leaves the file as it was."""

from pathlib import Path

import pytest

from tutor.atomicio import atomic_write, atomic_write_text


def test_a_write_that_fails_midway_leaves_the_earlier_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "export.json"
    atomic_write_text(target, "earlier, complete")

    def half(fh) -> None:
        fh.write(b"half of the new")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        atomic_write(target, half)
    assert target.read_text(encoding="utf-8") == "earlier, complete"
    assert [p.name for p in tmp_path.iterdir()] == ["export.json"]


def test_the_folder_is_made_and_the_text_is_utf8(tmp_path: Path) -> None:
    target = tmp_path / "new" / "folder" / "f.txt"
    atomic_write_text(target, "白日依山尽")
    assert target.read_bytes() == "白日依山尽".encode()
