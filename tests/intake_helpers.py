"""Zips a student out to exhaust the grader would upload, and the peak RSS of the command that reads
them, for tests/test_grading_intake.py and benchmarks/bench_intake.py. Each zip function gives the
bytes of a zip, or members to put in one:

- `bomb`: members that inflate a thousandfold (1 MiB of one byte each);
- `tiny`: many tiny members (not *.py), more than a zip may list;
- `liar`: a member whose header says it holds 1,000 bytes, while its data inflates to far more;
- `stored_liar`: bombs whose directory entries say each is stored in as many bytes as it inflates to;
- `nested`: a zip in a zip in a zip ..., a bomb at every level.
"""

from __future__ import annotations

import io
import struct
import subprocess
import time
import zipfile

MiB = 2**20


def zipped(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def bomb(n: int, prefix: str = "bomb/", byte: bytes = b"#") -> dict[str, bytes]:
    """`n` members of 1 MiB of `byte` each, about 1 KB each in the zip (b"#": a Python comment)."""
    return {f"{prefix}{i:04}.py": byte * (MiB - 1) + b"\n" for i in range(n)}


def tiny(n: int) -> dict[str, bytes]:
    return {f"t/{i:05}.txt": b"x" for i in range(n)}


def liar(size: int, claim: int = 1000, first: dict[str, bytes] | None = None) -> bytes:
    """A zip whose member lie.py inflates to `size` bytes of zeros while its header (the local one and
    the directory's) says it holds `claim` bytes; the `first` members come before it."""
    data = bytearray(zipped({**(first or {}), "lie.py": b"\0" * size}))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("lie.py")
    struct.pack_into("<I", data, info.header_offset + 22, claim)  # the local header's uncompressed size
    entry = data.rindex(b"PK\x01\x02", 0, data.rindex(b"lie.py"))  # its entry in the directory
    struct.pack_into("<I", data, entry + 24, claim)
    return bytes(data)


def stored_liar(n: int, byte: bytes = b"\xff") -> bytes:
    """A zip of `n` bombs (1 MiB of `byte` each, about 1 KB deflated) whose entries in the directory say
    each is stored in 1 MiB, as if it were not compressed at all: a ratio of 1 by the headers."""
    data = bytearray(zipped(bomb(n, byte=byte)))
    start = zipfile.ZipFile(io.BytesIO(bytes(data))).start_dir
    entry = start
    for _ in range(n):  # each entry: 46 bytes, then its name, extra field and comment
        struct.pack_into("<I", data, entry + 20, MiB)  # its compressed size
        name, extra, comment = struct.unpack_from("<HHH", data, entry + 28)
        entry += 46 + name + extra + comment
    return bytes(data)


def nested(levels: int, inner: dict[str, bytes], bombs: int = 1) -> bytes:
    """A zip holding `inner` inside `levels` zips, each level with `bombs` bombs beside the next zip."""
    data = zipped(inner)
    for level in range(levels):
        data = zipped({f"level{level}.zip": data, **bomb(bombs, prefix=f"b{level}/")})
    return data


def peak_rss_mib(child: subprocess.Popen) -> float:
    """The child's VmHWM (the peak of its resident set, its own, not its children's) in MiB, polled
    until it ends: the last value read."""
    peak = 0
    while child.poll() is None:
        try:
            with open(f"/proc/{child.pid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak = int(line.split()[1])
        except (OSError, ValueError):  # it ended between the poll and the read
            break
        time.sleep(0.005)
    return peak / 1024
