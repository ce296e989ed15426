"""The grading box: the worker starts with nothing and is handed what its exercise needs.

Built the way bubblewrap and nsjail build theirs, in the processes judge.py forks (ctypes only):

1. **Namespaces.** The worker's parent enters new user, PID, mount, network, IPC, UTS and cgroup
   namespaces in one `unshare` and forks process 1 of the new PID namespace, which forks the worker:
   no pid outside exists for it, and nothing it could start outlives it. Its network namespace holds a
   loopback device that is down, and nothing else.
2. **A private root.** The worker mounts a fresh tmpfs as its root and binds into it, read-only and at
   the same paths, exactly what it was handed (`handover`): the standard library, the installed
   distributions its exercise imports (with what they require), the course modules and files the
   exercise declares, /dev/null, /dev/zero and /dev/urandom, and a 16 MB tmpfs at /scratch for its
   files and output. No /tmp, /run, /proc, /sys, home folders, progress store or lessons (solutions,
   checks, broken variants) exist in there. Then it drops every capability.
3. **Limits:** address space, CPU seconds, file size, open files, no core files (soft = hard), and a
   cap on the box's processes and threads (`MAX_TASKS`): a pids cgroup the worker's parent joins before
   it unshares, where one can be made (v1's pids hierarchy, or a v2 one that delegates the controller:
   root, mostly), and RLIMIT_NPROC, which the kernel counts per user namespace (inside one, the box's own
   tasks; without one, every task of the user, so the limit is what the user runs now plus the cap) and
   ignores for root. Either is the `process-cap` layer.
4. **Landlock** (landlock.py) with the same rule set: read only the handed paths, write only in the
   scratch and /dev/null; no TCP; signals and abstract sockets scoped to itself.
5. **The system-call allow-list** (seccomp.py), last.

What each level keeps (`Isolation.level`; the grade's `isolation` field names every layer in force and
every one missing):
- **strong**: every layer above.
- **partial**: the allow-list, and Landlock or the private root, but not all of it: where unprivileged
  user namespaces are refused (Ubuntu 24.04's default AppArmor rule, hardened kernels) steps 1 and 2
  cannot happen. What needs no private root still holds: no signal, lease or lock reaches another process
  (the allow-list filters those by argument, whatever Landlock's ABI scopes), no write lands outside
  the scratch folder (Landlock), and no new file on the real disk at all (the allow-list).
- **basic**: less than that. With the allow-list but neither Landlock nor a private root, the list
  refuses every open for writing, truncating, renaming and deleting, so no file changes, but the worker
  can read whatever the user can; without the allow-list (macOS, no libseccomp), the limits alone.
The judge grades at strong and partial only; below that it refuses, and says why in the learner's
language, unless the learner or instructor allows a weak box (`--allow-weak-box`, or
TUTOR_ALLOW_WEAK_BOX=1); the grade then says what was missing.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from tutor.grading.box import landlock, seccomp
from tutor.settings import is_course_module

SCRATCH = Path("/scratch")  # the worker's folder inside its private root
DEVICES = (Path("/dev/null"), Path("/dev/zero"), Path("/dev/urandom"))
# the layers, by the name the grade shows (grade.layer.NAME in the catalogue)
ROOT, PID, NET, LANDLOCK, SECCOMP, LIMITS, TASKS, NO_FILES, NO_WRITES = (
    "private-root",
    "pid-namespace",
    "network-namespace",
    "landlock",
    "seccomp",
    "limits",
    "process-cap",
    "no-new-files",
    "no-writes",
)
STRONG = (ROOT, PID, NET, LANDLOCK, SECCOMP, LIMITS, TASKS)
LAYERS = (*STRONG, NO_FILES, NO_WRITES)
GRADED_LEVELS = ("strong", "partial")  # below these the judge refuses, unless a weak box is allowed

# linux/sched.h, linux/mount.h, linux/capability.h
_CLONE_NEWNS, _CLONE_NEWCGROUP, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x20000, 0x02000000, 0x04000000, 0x08000000
_CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1,
    2,
    4,
    8,
    32,
    4096,
    1 << 14,
    1 << 18,
)
_MNT_DETACH = 2
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
_CAP_LAST = 63


@dataclass
class ResourceLimits:
    """The worker's resource limits (setrlimit, soft = hard); from the grade's limits (runner.Limits)."""

    mem_bytes: int
    cpu_s: int
    file_bytes: int  # per file (RLIMIT_FSIZE); the scratch tmpfs caps the total
    total_bytes: int
    max_tasks: int
    open_files: int = 256


@dataclass
class Isolation:
    """Which layers are in force, for the grade's `isolation` field."""

    layers: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        if all(layer in self.layers for layer in STRONG):
            return "strong"
        if SECCOMP in self.layers and (LANDLOCK in self.layers or ROOT in self.layers):
            return "partial"
        return "basic"

    def to_json(self) -> dict:
        return {
            "level": self.level,
            "layers": list(self.layers),
            "missing": [layer for layer in STRONG if layer not in self.layers],
        }


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


# --- what the worker is handed (worked out by the tutor, trusted) --------------------------------


def _stdlib() -> list[Path]:
    """The standard library, entry by entry, without the interpreter's own site-packages (where
    packages installed without a virtualenv live: the course's lessons could be among them)."""
    paths = []
    for key in ("stdlib", "platstdlib"):
        folder = Path(sysconfig.get_paths()[key])
        if folder.is_dir():
            paths += [p for p in folder.iterdir() if p.name not in ("site-packages", "dist-packages")]
    return paths


def _requirement_names(dist) -> list[str]:
    names = []
    for line in dist.requires or []:
        if "extra ==" in line.replace("extra==", "extra =="):
            continue  # an optional extra: not needed to import the package
        name = line.split(";")[0].strip()
        for stop in " <>=!~[(":
            name = name.split(stop)[0]
        names.append(name)
    return names


def _distribution_paths(top: str) -> list[Path]:
    """Every file a top-level import `top` needs from site-packages: the folders and files of its
    distribution and of every distribution it requires (extras left out), their metadata included."""
    from importlib import metadata

    try:  # the distribution is mostly named as its package; the full map costs 0.2 s to build
        todo = [metadata.distribution(top).name]
    except metadata.PackageNotFoundError:
        todo = list(metadata.packages_distributions().get(top, []))
    seen: set[str] = set()
    paths: set[Path] = set()
    while todo:
        name = todo.pop()
        key = name.lower().replace("-", "_")
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        # the first part of every path in RECORD (read as text: dist.files is 20x slower for torch)
        record = dist.read_text("RECORD") or ""
        for entry in {line.split(",", 1)[0].split("/", 1)[0] for line in record.splitlines()}:
            if entry in ("", "..", "__pycache__") or entry.endswith(".pth"):
                continue  # scripts outside, the shared bytecode folder, start-up hooks
            path = Path(str(dist.locate_file(entry)))
            if path.exists():
                paths.add(path)
        todo += _requirement_names(dist)
    return sorted(paths | _package_itself(top))


def _package_itself(top: str) -> set[Path]:
    """Where Python finds `top`: handed even when its distribution lists no files (a system package)."""
    import importlib.util

    spec = importlib.util.find_spec(top)
    if spec is None:
        return set()
    if spec.submodule_search_locations:
        return {Path(p) for p in spec.submodule_search_locations}
    return {Path(spec.origin)} if spec.origin and spec.origin not in ("built-in", "frozen") else set()


def _course_module(root: Path, dotted: str) -> list[Path]:
    """A module of the course (tutor.model.gpt): its file and every package's __init__.py above it."""
    parts = dotted.split(".")
    paths = [root.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts))]
    module = root.joinpath(*parts)
    paths.append(module / "__init__.py" if module.is_dir() else module.with_suffix(".py"))
    return paths


def handover(imports: list[str], files: list[str], root: Path) -> list[str]:
    """The paths an exercise's worker is handed, read-only: the standard library, the distributions
    behind `imports` that are installed packages, the course modules among `imports` (module by module:
    `tutor.model.gpt` hands the __init__.py of tutor/ and of tutor/model/ and tutor/model/gpt.py, never
    tutor/model/positions.py), and `files` (relative to the course's root folder)."""
    paths = set(_stdlib())
    for name in imports:
        if is_course_module(name):
            paths.update(_course_module(root, name))
        else:
            paths.update(_distribution_paths(name.split(".")[0]))
    paths.update(root / f for f in files)
    return sorted(str(p) for p in paths if p.exists())


def box_for(imports: list[str], files: list[str], root: Path) -> dict:
    """The job's description of a worker's box: the paths it is handed, and the course modules it
    imports before its box closes (so the first probe does not wait for them)."""
    course = [name for name in imports if is_course_module(name)]
    return {"handed": handover(imports, files, root), "course_modules": course}


# --- namespaces (in the worker's parent) and the private root (in the worker) ----------------------


def unshare() -> bool:
    """Enter new user, PID, mount, network, IPC, UTS and cgroup namespaces, mapping only our own user
    and group; False (nothing changed) where that is refused. The caller must have one thread."""
    if sys.platform != "linux":
        return False
    uid, gid = os.getuid(), os.getgid()
    flags = (
        _CLONE_NEWUSER
        | _CLONE_NEWPID
        | _CLONE_NEWNS
        | _CLONE_NEWNET
        | _CLONE_NEWIPC
        | _CLONE_NEWUTS
        | _CLONE_NEWCGROUP
    )
    if _libc().unshare(flags) != 0:
        return False
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError:
        return False
    return True


def _mount(
    libc, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    enc = [s.encode() if s is not None else None for s in (source, target, fstype, data)]
    _check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def _mirror(staging: Path, path: Path) -> Path:
    """Make `path` resolve inside the new root as it does here: every symlink on the way is copied
    (a virtualenv's lib64 -> lib, a distribution's /lib -> /usr/lib); returns the real path."""
    real = Path("/")
    for part in path.parts[1:]:
        here = real / part
        if here.is_symlink():
            link = os.readlink(here)
            inside = staging / here.relative_to("/")
            if not inside.is_symlink() and not inside.exists():
                inside.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(link, inside)
            real = Path(os.path.realpath(here))
        else:
            real = here
    return real


def _bind(libc, staging: Path, source: Path, flags: int, bound: set[Path]) -> None:
    real = _mirror(staging, source)
    if any(p in bound for p in (real, *real.parents)):
        return  # already there, as part of a folder handed before or through another link
    bound.add(real)
    target = staging / real.relative_to("/")
    if real.is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    _mount(libc, str(real), str(target), None, _MS_BIND | _MS_REC)
    _mount(libc, None, str(target), None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags)


class RootRefused(OSError):
    """The private root could not be built (a kernel or policy that refuses a mount): nothing of it
    is left, and the worker goes on without it (the grade names the missing layer; this is never shown)."""


def build_root(staging: Path, handed: list[str], scratch_bytes: int) -> None:
    """Pivot into a root of our own: a tmpfs holding read-only binds of `handed` at their paths, three
    devices, and a tmpfs of `scratch_bytes` at /scratch; the old root is gone afterwards. Runs in the
    worker, which holds every capability of its new user namespace until `drop_capabilities`.
    RootRefused when a step before the pivot fails; an OSError after it is fatal to the worker."""
    libc = _libc()
    try:
        _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing we mount leaks to the host
        _mount(libc, "tmpfs", str(staging), "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4m,mode=0755")
    except OSError as err:
        raise RootRefused(err.errno, str(err)) from None
    try:
        bound: set[Path] = set()
        for path in sorted(handed, key=lambda p: (p.count("/"), p)):  # a folder before what is inside it
            _bind(libc, staging, Path(path), _MS_NOSUID | _MS_NODEV, bound)
        for device in DEVICES:
            _bind(libc, staging, device, _MS_NOSUID | _MS_NOEXEC, bound)
        scratch = staging / SCRATCH.relative_to("/")
        scratch.mkdir()
        size = f"size={max(scratch_bytes // 1024, 64)}k,mode=0700"
        _mount(libc, "tmpfs", str(scratch), "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, size)
        os.chdir(staging)
    except OSError as err:
        libc.umount2(str(staging).encode(), _MNT_DETACH)  # the binds go with it
        raise RootRefused(err.errno, str(err)) from None
    machine = os.uname().machine
    libc.syscall.restype = ctypes.c_long
    _check(libc.syscall(_SYS_PIVOT_ROOT[machine], b".", b"."), "pivot_root")  # the old root lies beneath
    _check(libc.umount2(b".", _MNT_DETACH), "umount the old root")
    _mount(libc, None, "/", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    os.chdir(SCRATCH)


def drop_capabilities() -> None:
    """Give up every capability of the user namespace (bounding, ambient, effective, permitted,
    inheritable): nothing the namespace owns can be changed afterwards."""
    libc = _libc()
    for cap in range(_CAP_LAST + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all zero, both words
    libc.syscall.restype = ctypes.c_long
    _check(libc.syscall(_SYS_CAPSET[os.uname().machine], header, data), "capset")


# --- the cap on the box's tasks: a pids cgroup (the box's parent) and RLIMIT_NPROC (the worker) -----


def _pids_hierarchy() -> Path | None:
    """This process's own cgroup in a hierarchy with the pids controller: cgroup v1's pids hierarchy, or
    v2's where this cgroup delegates pids to its children; None where there is neither."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    v1 = v2 = None  # (where the hierarchy is mounted, which of its folders is mounted there)
    for line in mounts:
        fields, _, fs = line.partition(" - ")
        fstype, _, options = (fs.split() + ["", "", ""])[:3]
        if fstype == "cgroup" and "pids" in options.split(","):
            v1 = fields.split()[4], fields.split()[3]
        elif fstype == "cgroup2":
            v2 = fields.split()[4], fields.split()[3]
    for line in own:
        number, controllers, path = line.split(":", 2)
        if v1 and "pids" in controllers.split(","):
            return _under(*v1, path)
        if v2 and number == "0" and not controllers:
            folder = _under(*v2, path)
            return folder if folder is not None and _delegates_pids(folder) else None
    return None


def _under(mount: str, root: str, path: str) -> Path | None:
    """The folder of cgroup `path` in a hierarchy whose folder `root` is mounted at `mount`."""
    inside = Path(path).relative_to(root) if Path(path).is_relative_to(root) else None
    return Path(mount) / inside if inside is not None else None


def _delegates_pids(folder: Path) -> bool:
    try:
        return "pids" in (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def pids_cgroup(parent_pid: int) -> Path | None:
    """Where the box whose parent is `parent_pid` has its pids cgroup (a sibling of nothing: a child of
    the judge's own cgroup, which the box's parent starts in)."""
    folder = _pids_hierarchy()
    return folder / f"tutor-box-{parent_pid}" if folder is not None else None


def join_pids_cgroup(max_tasks: int) -> bool:
    """Put this process (the box's parent, before it unshares) into a pids cgroup of its own that holds
    at most `max_tasks` tasks; everything it forks stays in it. False where none can be made."""
    folder = pids_cgroup(os.getpid())
    if folder is None:
        return False
    try:
        folder.mkdir(exist_ok=True)  # left by a box whose judge was killed, with the same pid
        (folder / "pids.max").write_text(str(max_tasks))
        (folder / "cgroup.procs").write_text("0")  # this process
    except OSError:
        remove_pids_cgroup(os.getpid(), wait_s=0)
        return False
    return True


def remove_pids_cgroup(parent_pid: int, wait_s: float = 1.0) -> None:
    """Remove the box's pids cgroup once its tasks are gone (the judge, after killing the box)."""
    folder = pids_cgroup(parent_pid)
    if folder is None:
        return
    end = time.monotonic() + wait_s
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # EBUSY: a task of the box is still on its way out
            if time.monotonic() >= end:
                return
            time.sleep(0.005)


def _user_tasks() -> int:
    """How many tasks (processes and threads) this user runs now, from /proc."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass  # gone meanwhile
    return count


def cap_tasks(max_tasks: int, own_namespace: bool) -> bool:
    """RLIMIT_NPROC for this process (the worker): `max_tasks` of the box's own where it is in a user
    namespace of its own, else what the user runs now plus `max_tasks`. False for root, whom the kernel
    never holds to it."""
    if os.getuid() == 0:
        return False
    value = max_tasks if own_namespace else _user_tasks() + max_tasks
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (value, value))
    return True


# --- the last layers (in the worker, just before the learner's code runs) --------------------------


def _set_limits(limits: ResourceLimits) -> None:
    # soft = hard, so the learner's code cannot raise them again
    for name, value in (
        ("RLIMIT_AS", limits.mem_bytes),
        ("RLIMIT_CPU", limits.cpu_s),
        ("RLIMIT_FSIZE", limits.file_bytes),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NOFILE", limits.open_files),
    ):
        limit = getattr(resource, name)
        _, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))


def confine(
    report: Isolation, limits: ResourceLimits, readable: list[str], scratch: Path, landlock_abi: int | None
) -> Isolation:
    """Limits, then Landlock (at most `landlock_abi`, None: what the kernel offers) and the allow-list
    where the platform has them; every layer in force is added to `report` (which holds the namespace
    layers and the pids cgroup already)."""
    _set_limits(limits)
    report.layers.append(LIMITS)
    if sys.platform != "linux":
        return report
    if cap_tasks(limits.max_tasks, own_namespace=PID in report.layers) and TASKS not in report.layers:
        report.layers.append(TASKS)
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return report
    writable = [scratch, Path("/dev/null")]
    if landlock.restrict([Path(p) for p in readable] + list(DEVICES), writable, landlock_abi):
        report.layers.append(LANDLOCK)
    files = (
        seccomp.Files.ANY
        if ROOT in report.layers
        else seccomp.Files.NO_NEW
        if LANDLOCK in report.layers
        else seccomp.Files.READ_ONLY
    )
    if seccomp.install(os.getpid(), files=files):
        report.layers.append(SECCOMP)
        report.layers += {seccomp.Files.NO_NEW: [NO_FILES], seccomp.Files.READ_ONLY: [NO_WRITES]}.get(
            files, []
        )
    return report
