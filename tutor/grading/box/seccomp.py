"""The grading worker's system-call allow-list, written with libseccomp (through ctypes).

Deny by default: a call not listed here fails with EPERM, so the learner's code gets a plain
PermissionError and the grade says which operation was refused. The list is what the worker's Python,
torch and the probes were measured to use (tests/test_grading_box.py traces every course file under
this filter), plus the obvious companions of those calls (readv beside read, ppoll beside poll).

Calls that name another process are allowed only on the worker itself: `kill`, `tgkill`,
`rt_sigqueueinfo`, `prlimit64`, `setpriority`, the `sched_*` family, `getsid` and `getpgid` take 0
(where that means "myself") or the worker's own pid. Calls that take a command are allowed only with
the commands the worker's Python and torch use, and none that reaches another process or holds up one:
`fcntl` duplicates descriptors and reads or sets their flags (never `F_SETOWN`, `F_SETOWN_EX`, `F_SETSIG`,
`F_SETLEASE`, `F_NOTIFY`, a lock, nor `F_SETFL` with `O_ASYNC`, the routes to a signal sent to any process
of the user or to a file held shut); `ioctl` only asks about a descriptor; `prctl` names threads and
memory; `madvise` gives the usual hints, never KSM merging, page removal or poisoning. `clone` only makes
threads (no namespace, no tracing, no exit signal); `clone3` answers ENOSYS so the C library falls back
to `clone`, whose flags a filter can read. There is no `socket` or `socketpair` of any family, no
`keyctl`, `add_key` or `request_key`, no `memfd_create`, no `io_uring_*`, `bpf`, `perf_event_open`,
`userfaultfd`, `ptrace`, `process_vm_*`, `pidfd_*`, `mount`, `unshare`, `setns` or `execve`.

What the worker may do to files depends on what else holds it (`Files`): inside its private root,
anything (the root is a tmpfs of read-only binds); with Landlock but no private root, it may not create
files (nothing lands on the real disk); with neither, it may not write, truncate, create, rename or
delete any file at all: every open for writing is refused.

libseccomp builds the filter for the running architecture and refuses every other one, x32 system
calls on x86-64 included (the filter's bad-architecture action kills the process). Without libseccomp
(not installed, or not Linux) there is no filter, and the grade says so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from enum import Enum

# libseccomp's constants (seccomp.h)
_ACT_KILL_PROCESS = 0x80000000
_ACT_ALLOW = 0x7FFF0000
_FLTATR_ACT_BADARCH = 2
_CMP_EQ, _CMP_MASKED_EQ = 4, 7


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


# Allowed with any arguments: files and descriptors (the private root, the read-only binds and
# Landlock decide what a path reaches), memory, threads, signals to itself, time. The course files make
# 13 of these (benchmarks/box_syscalls.py); the rest is what Python does for a learner's own code
# (print, time.sleep, threading, a file in /scratch), so that it fails only where it reaches out.
ALLOWED = (
    # descriptors and files
    "read",
    "readv",
    "pread64",
    "write",
    "writev",
    "pwrite64",
    "close",
    "lseek",
    "dup",
    "dup2",
    "dup3",
    "pipe2",
    "open",
    "openat",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "ftruncate",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "umask",
    "poll",
    "ppoll",
    # memory
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    # threads, signals to itself, exit
    "futex",
    "set_robust_list",
    "set_tid_address",
    "rseq",
    "sched_yield",
    "exit",
    "exit_group",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    "restart_syscall",
    "arch_prctl",
    # who and when
    "getpid",
    "gettid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getrandom",
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "nanosleep",
    "gettimeofday",
    "time",
    "uname",
    "getrlimit",
    "getrusage",
)
# (name, index of the argument that names a process): allowed only for 0 and the worker's own pid
ONLY_ITSELF = (
    ("prlimit64", 0),
    ("sched_getaffinity", 0),
    ("sched_setaffinity", 0),
    ("sched_getparam", 0),
    ("sched_setparam", 0),
    ("sched_getscheduler", 0),
    ("sched_setscheduler", 0),
    ("sched_getattr", 0),
    ("sched_setattr", 0),
    ("getsid", 0),
    ("getpgid", 0),
)
# signals: the target must be the worker's own pid (0 would mean its process group)
SIGNALS_TO_ITSELF = (("kill", 0), ("tgkill", 0), ("rt_sigqueueinfo", 0), ("rt_tgsigqueueinfo", 0))
_PRIO_PROCESS = 0
# ioctl requests: is it a terminal, its size, bytes waiting, blocking and close-on-exec flags
_IOCTLS = {
    "TCGETS": 0x5401,
    "TIOCGWINSZ": 0x5413,
    "FIONREAD": 0x541B,
    "FIONBIO": 0x5421,
    "FIONCLEX": 0x5450,
    "FIOCLEX": 0x5451,
}
# prctl options Python, glibc and torch use: thread names, dumpable flag (PR_SET_VMA: naming anonymous
# memory, its only sub-command PR_SET_VMA_ANON_NAME = 0)
_PRCTL_OPTIONS = {"PR_GET_DUMPABLE": 3, "PR_SET_NAME": 15, "PR_GET_NAME": 16}
_PR_SET_VMA = 0x53564D41
# fcntl commands: duplicate a descriptor, read or set its close-on-exec flag, read its status flags;
# F_SETFL (4) only without O_ASYNC (its signals go to whoever F_SETOWN names)
_FCNTL_COMMANDS = {"F_DUPFD": 0, "F_GETFD": 1, "F_SETFD": 2, "F_GETFL": 3, "F_DUPFD_CLOEXEC": 1030}
_F_SETFL, _O_ASYNC = 4, 0o20000
# madvise hints allocators and torch give: normal, random, sequential, willneed, dontneed, free, dontfork,
# dofork, (no)hugepage, (no)dump, wipe/keep on fork, cold, pageout, populate; never MADV_REMOVE (9),
# MADV_MERGEABLE (12, a side channel between processes), MADV_HWPOISON (100) or MADV_SOFT_OFFLINE (101)
_MADVICE = (0, 1, 2, 3, 4, 8, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23)
# clone: a thread of this process (CLONE_THREAD set), and none of the flags that make a namespace, a
# traced or vforked child, a pidfd or a child with an exit signal (the low byte)
_CLONE_THREAD = 0x00010000
_CLONE_REFUSED = (
    0xFF
    | 0x80
    | 0x1000
    | 0x2000
    | 0x4000
    | 0x8000
    | 0x20000
    | 0x800000
    | 0x02000000
    | 0x04000000
    | 0x08000000
    | 0x10000000
    | 0x20000000
    | 0x40000000
    | 0x80000000
)
# open flags (the same on x86-64 and arm64): those that create a file (O_CREAT, __O_TMPFILE), and those
# that write one (O_WRONLY, O_RDWR, O_TRUNC, O_APPEND)
_CREATING = 0o100 | 0o20000000
_WRITING = _CREATING | 0o1 | 0o2 | 0o1000 | 0o2000
_CREATES = (
    "creat",
    "mknod",
    "mknodat",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "mkdir",
    "mkdirat",
    "rename",
    "renameat",
    "renameat2",
)
_CHANGES = (*_CREATES, "unlink", "unlinkat", "rmdir", "ftruncate")


class Files(Enum):
    """What the worker may do to files, by what else confines it."""

    ANY = "any"  # its private root: a tmpfs of read-only binds and its scratch tmpfs
    NO_NEW = "no-new"  # Landlock without a private root: write only in scratch, create nothing
    READ_ONLY = "read-only"  # neither: no open for writing, no truncating, renaming or deleting


def allowed_names() -> set[str]:
    """Every call the filter lets through in some case (with any arguments, or only some)."""
    names = set(ALLOWED) | {name for name, _ in ONLY_ITSELF + SIGNALS_TO_ITSELF}
    return names | {"getpriority", "setpriority", "ioctl", "prctl", "clone", "fcntl", "madvise"}


def _library():
    if sys.platform != "linux":
        return None
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    return lib


_LIB = None


def load_library() -> bool:
    """Open libseccomp now, while its file is still readable (the judge calls this before it forks
    the worker); True when it is there."""
    global _LIB
    if _LIB is None:
        _LIB = _library() or False
    return bool(_LIB)


class _Filter:
    def __init__(self, lib):
        self.lib = lib
        self.ctx = lib.seccomp_init(_errno(errno.EPERM))
        if not self.ctx:
            raise OSError("seccomp_init failed")
        lib.seccomp_attr_set(self.ctx, _FLTATR_ACT_BADARCH, _ACT_KILL_PROCESS)

    def add(self, name: str, action: int = _ACT_ALLOW, *conditions: tuple[int, int, int, int]) -> None:
        number = self.lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:
            return  # not a system call of this architecture (open, stat, ... on arm64)
        array = (_ArgCmp * max(len(conditions), 1))(*[_ArgCmp(*c) for c in conditions])
        rc = self.lib.seccomp_rule_add_array(self.ctx, action, number, len(conditions), array)
        if rc < 0:
            raise OSError(-rc, f"seccomp rule for {name}: {os.strerror(-rc)}")

    def load(self) -> None:
        rc = self.lib.seccomp_load(self.ctx)
        if rc < 0:
            raise OSError(-rc, f"seccomp_load: {os.strerror(-rc)}")

    def release(self) -> None:
        self.lib.seccomp_release(self.ctx)


def _build(lib, own_pid: int, files: Files) -> _Filter:
    f = _Filter(lib)
    refused = {Files.ANY: (), Files.NO_NEW: _CREATES, Files.READ_ONLY: _CHANGES}[files]
    opens = {Files.NO_NEW: _CREATING, Files.READ_ONLY: _WRITING}.get(files)
    for name in ALLOWED:
        if name in refused:
            continue
        if opens is not None and name in ("open", "openat"):
            flags = 1 if name == "open" else 2  # the flags argument
            f.add(name, _ACT_ALLOW, (flags, _CMP_MASKED_EQ, opens, 0))
        else:
            f.add(name)
    for name, arg in ONLY_ITSELF:
        for pid in {0, own_pid}:
            f.add(name, _ACT_ALLOW, (arg, _CMP_EQ, pid, 0))
    for name, arg in SIGNALS_TO_ITSELF:
        f.add(name, _ACT_ALLOW, (arg, _CMP_EQ, own_pid, 0))
    for name in ("getpriority", "setpriority"):
        for who in {0, own_pid}:
            f.add(name, _ACT_ALLOW, (0, _CMP_EQ, _PRIO_PROCESS, 0), (1, _CMP_EQ, who, 0))
    for request in _IOCTLS.values():
        f.add("ioctl", _ACT_ALLOW, (1, _CMP_EQ, request, 0))
    for option in _PRCTL_OPTIONS.values():
        f.add("prctl", _ACT_ALLOW, (0, _CMP_EQ, option, 0))
    f.add("prctl", _ACT_ALLOW, (0, _CMP_EQ, _PR_SET_VMA, 0), (1, _CMP_EQ, 0, 0))
    for command in _FCNTL_COMMANDS.values():
        f.add("fcntl", _ACT_ALLOW, (1, _CMP_EQ, command, 0))
    f.add("fcntl", _ACT_ALLOW, (1, _CMP_EQ, _F_SETFL, 0), (2, _CMP_MASKED_EQ, _O_ASYNC, 0))
    for advice in _MADVICE:
        f.add("madvise", _ACT_ALLOW, (2, _CMP_EQ, advice, 0))
    f.add("clone", _ACT_ALLOW, (0, _CMP_MASKED_EQ, _CLONE_THREAD | _CLONE_REFUSED, _CLONE_THREAD))
    f.add("clone3", _errno(errno.ENOSYS))
    return f


def install(own_pid: int, *, files: Files) -> bool:
    """Load the allow-list into this process (and every thread it starts); False without libseccomp.
    The process must have set no_new_privs first."""
    if not load_library():
        return False
    f = _build(_LIB, own_pid, files)
    try:
        f.load()
    finally:
        f.release()
    return True
