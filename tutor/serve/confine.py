"""Learners kept apart by the kernel: each served app, and each process forked for a learner, restricts
itself at start, before it reads anything of the learner's.

    layers = confine_app(home, course, folder, learner_id)   # the app, first thing (commands/app.py)
    confine_fork(home)                                       # a forked experiment (tutor/experiment_zygote.py)

- **A mount namespace** (where one can be made: as root, or in a user namespace of its own): the class
  folder is covered by an empty, read-only tmpfs in which only `learners/ID`, the learner's own home, is
  bound back; `links.csv` and every other home are not there at all.
- **Landlock** (Linux 5.13+): read and run only the course, the tutor's code and checkpoints, Python and
  the system's libraries; write only the learner's home (none for a quick experiment) and /dev/null;
  from ABI 4 on no TCP, from ABI 6 on no signal to, and no abstract socket of, a process outside. Set
  with no_new_privs, for this process and everything it starts.
- **Modes:** umask 077, so every folder made is 0700 and every file 0600.

Where neither layer is available (macOS, an old kernel) the apps are kept apart by the tutor's own
conduct and the grading box only, and `confine_app` says so by returning no layer.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import sys
from pathlib import Path

from tutor.settings import CODE_PACKAGES, ROOT, checkpoints_dir

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS = 38
SYSTEM = [
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/proc",
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
]
ETC = [
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "mime.types",
    "os-release",
    "alternatives",
    "python3*",
]


def readable(course: Path | None) -> list[Path]:
    """What a learner's processes may read (and run): never the class folder, which holds every home.
    The checkout itself is not in it, only its code (tutor/, tutor/model/, tutor/atomicio.py: a class folder may lie in it)."""
    paths = [*(ROOT / package for package in CODE_PACKAGES), checkpoints_dir()]
    if course is not None:
        paths.append(Path(course))
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths += [Path(p) for p in sorted(prefixes)]
    # `python -m` (or a script) puts the folder it started in first: the instructor's working folder,
    # which may hold the class folder. An app never imports from it (it starts in its learner's home).
    started = sys.path[0] if sys.path and not (sys.flags.isolated or sys.flags.safe_path) else None
    for entry in sys.path:  # site-packages outside the prefix (a user's), the standard library's zip
        if entry == started:
            continue
        if entry and Path(entry).resolve() != ROOT.resolve() and not ROOT.resolve().is_relative_to(entry):
            paths.append(Path(entry))
    paths += [Path(p) for p in SYSTEM]
    for name in ETC:
        paths += [Path(p) for p in glob.glob(f"/etc/{name}")]
    return paths


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _no_new_privs() -> None:
    _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _landlock(reads: list[Path], writes: list[Path]) -> int:
    from tutor.grading.box import landlock

    _no_new_privs()
    return landlock.restrict(reads, writes)


def _mount(libc, source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}: {os.strerror(ctypes.get_errno())}")


def hide_class(folder: Path, home: Path, learner_id: str) -> bool:
    """In a mount namespace of this process's own: `folder` shows nothing but `learners/ID` (the home,
    bound back). False, and nothing changed, where no namespace can be made."""
    if sys.platform != "linux" or len(os.listdir("/proc/self/task")) != 1:
        return False  # a user namespace needs a process of one thread
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    home_fd = -1
    try:
        if os.geteuid() == 0:
            entered = libc.unshare(CLONE_NEWNS) == 0
        else:
            entered = libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0
            if entered:  # the same ids inside: files keep their owner
                Path("/proc/self/setgroups").write_text("deny")
                Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
                Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        if not entered:
            return False
        _mount(libc, None, "/", None, MS_REC | MS_PRIVATE, None)  # nothing done here reaches the server's
        home_fd = os.open(home, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)  # in this namespace's mounts
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        _mount(libc, "tmpfs", str(folder), "tmpfs", flags, "size=64k,mode=0700")
        place = folder / "learners" / learner_id
        place.mkdir(parents=True, mode=0o700)
        _mount(libc, f"/proc/self/fd/{home_fd}", str(place), None, MS_BIND | MS_REC, None)
        _mount(libc, "tmpfs", str(folder), "tmpfs", MS_REMOUNT | MS_RDONLY | flags, "size=64k,mode=0700")
    finally:
        if home_fd >= 0:
            os.close(home_fd)
    return True


def confine_app(home: Path, course: Path, folder: str | Path | None, learner_id: str) -> list[str]:
    """Restrict this app process to its learner's home (read-write) and the course (read-only); the
    layers in force, as words for the log."""
    os.umask(0o077)
    home = Path(home).resolve()
    layers = []
    if folder is not None:
        try:
            if hide_class(Path(folder).resolve(), home, learner_id):
                layers.append("mount namespace")
        except OSError:
            pass  # half made: Landlock below still holds (the namespace is this process's only)
    tmp = home / ".tmp"
    with contextlib.suppress(OSError):
        tmp.mkdir(mode=0o700, exist_ok=True)
    version = _landlock(readable(course), [home, Path(os.devnull)])
    if version:
        layers.append(f"Landlock ABI {version}")
    return layers


def confine_fork(home: str | None) -> int:
    """A process forked for a learner (an experiment): read what an app reads, write only `home` (None:
    nothing). The Landlock ABI in force (0: none)."""
    os.umask(0o077)
    course = Path(sys.argv[1]) if len(sys.argv) > 2 else None  # the zygote's: LESSONS FD
    writes = [Path(os.devnull)] + ([Path(home)] if home else [])
    return _landlock(readable(course), writes)
