"""OS isolation for the grading worker, through ctypes: what the learner's process may still do.

`confine(...)` runs inside the worker after torch is imported and before the learner's file is read.
Each layer is used where the platform has it, and reported, so the grade can say what was in force:

- resource limits (everywhere): address space, CPU seconds, bytes per file, no core files;
- namespaces (Linux, unprivileged user namespaces): no network at all, and the scratch folder becomes
  a size-capped tmpfs, which caps the bytes written in total, not per file;
- seccomp (Linux x86-64 and arm64): no new processes (threads only), no exec, no ptrace or reading
  another process's memory, and signals only to itself: the process count is one, and it binds root too;
- Landlock (Linux 5.13+): writes only inside the scratch folder; reads only Python, the installed
  packages, the project's code and model files; from ABI 6 on no signals or abstract sockets beyond
  its own domain, from ABI 4 on no TCP.

Where none of this exists (macOS, old kernels) the limits alone remain: "basic" isolation. Grading
never refuses to run for lack of isolation.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path

# --- Landlock (linux/landlock.h) -----------------------------------------------------------------
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | 1 << 14 | 1 << 15  # + truncate, ioctl_dev
_FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # how many access bits each ABI knows
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]  # fmt: skip


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


# --- seccomp (linux/seccomp.h, linux/filter.h) ---------------------------------------------------
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PR_SET_PDEATHSIG = 22, 2, 1
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_EPERM, _ENOSYS = 1, 38
_CLONE_THREAD = 0x00010000
# syscall numbers: (audit arch, x32 bit, {name: number})
_SYSCALLS = {
    "x86_64": (0xC000003E, 0x40000000, {
        "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
        "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
        "pidfd_send_signal": 424, "pidfd_open": 434, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "unshare": 272, "setns": 308, "mount": 165, "prctl": 157,
    }),
    "aarch64": (0xC00000B7, 0, {
        "clone": 220, "execve": 221, "execveat": 281, "clone3": 435,
        "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
        "pidfd_send_signal": 424, "pidfd_open": 434, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "unshare": 97, "setns": 268, "mount": 40, "prctl": 167,
    }),
}  # fmt: skip
_DENIED = ("fork", "vfork", "execve", "execveat", "tkill", "pidfd_send_signal", "pidfd_open", "ptrace",
           "process_vm_readv", "process_vm_writev", "unshare", "setns", "mount")  # fmt: skip
_OWN_PID_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: a pid


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]  # fmt: skip


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


# --- namespaces (linux/sched.h, linux/mount.h) ---------------------------------------------------
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWIPC = 0x00020000, 0x10000000, 0x40000000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 2, 4, 1 << 14, 1 << 18


@dataclass
class Limits:
    mem_bytes: int
    cpu_s: int
    file_bytes: int  # per file (RLIMIT_FSIZE); the tmpfs caps the total where namespaces exist
    total_bytes: int
    open_files: int = 256


@dataclass
class Report:
    """Which layers are in force, for the grade's `isolation` field."""

    layers: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        have = " ".join(self.layers)
        if "landlock" in have and "seccomp" in have:
            return "strong"
        return "partial" if ("landlock" in have or "seccomp" in have) else "basic"

    def to_json(self) -> dict:
        return {"level": self.level, "layers": self.layers}


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _set_limits(limits: Limits) -> None:
    # soft = hard, so the learner's code cannot raise them again
    for name, value in (
        ("RLIMIT_AS", limits.mem_bytes),
        ("RLIMIT_CPU", limits.cpu_s),
        ("RLIMIT_FSIZE", limits.file_bytes),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NOFILE", limits.open_files),
    ):
        limit = getattr(resource, name)
        soft, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))


def enter_namespaces(scratch: Path, total_bytes: int) -> str | None:
    """A user namespace with its own (empty) network and a private mount of a size-capped tmpfs on
    the scratch folder. None where unprivileged user namespaces are not allowed. Call it while the
    process has one thread (before importing torch): unshare refuses a threaded process."""
    if sys.platform != "linux":
        return None
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET | _CLONE_NEWNS | _CLONE_NEWIPC) != 0:
        return None
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError:
        return "user+net namespaces"
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return "user+net namespaces"
    options = f"size={max(total_bytes // 1024, 64)}k,mode=0700".encode()
    if libc.mount(b"tmpfs", str(scratch).encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        return "user+net namespaces"
    os.chdir(scratch)  # the old cwd is the folder under the new mount
    return f"user+net+mount namespaces (scratch: tmpfs of {total_bytes // 2**20} MB)"


def _seccomp_program(arch: str, own_pid: int) -> list[tuple[int, int, int, int]]:
    audit_arch, x32_bit, numbers = _SYSCALLS[arch]
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, audit_arch), (_RET_K, 0, 0, _RET_KILL_PROCESS)]
    prog.append((_LD_W_ABS, 0, 0, 0))  # the syscall number
    if x32_bit:
        prog += [(_JSET_K, 0, 1, x32_bit), (_RET_K, 0, 0, _RET_ERRNO | _ENOSYS)]

    def rule(name: str, handler: list[tuple[int, int, int, int]]) -> None:
        prog.append((_JEQ_K, 0, len(handler), numbers[name]))
        prog.extend(handler)

    deny = [(_RET_K, 0, 0, _RET_ERRNO | _EPERM)]
    arg0 = (_LD_W_ABS, 0, 0, 16)  # low 32 bits of the first argument (little-endian)
    # clone3 says ENOSYS so the C library falls back to clone, whose flags a filter can read
    rule("clone3", [(_RET_K, 0, 0, _RET_ERRNO | _ENOSYS)])
    rule("clone", [arg0, (_JSET_K, 0, 1, _CLONE_THREAD), (_RET_K, 0, 0, _RET_ALLOW), *deny])
    for name in _DENIED:
        if name in numbers:
            rule(name, deny)
    for name in _OWN_PID_ONLY:
        rule(name, [arg0, (_JEQ_K, 0, 1, own_pid), (_RET_K, 0, 0, _RET_ALLOW), *deny])
    # the signal that ends the worker with the judge stays set: prctl(PR_SET_PDEATHSIG, ...) is refused
    rule("prctl", [arg0, (_JEQ_K, 0, 1, _PR_SET_PDEATHSIG), *deny, (_RET_K, 0, 0, _RET_ALLOW)])
    prog.append((_RET_K, 0, 0, _RET_ALLOW))
    return prog


def _seccomp(libc) -> str | None:
    arch = platform.machine()
    if arch not in _SYSCALLS:
        return None
    prog = _seccomp_program(arch, os.getpid())
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return None
    return "seccomp (no new processes or exec, signals only to itself, the parent-death signal kept)"


def landlock_abi() -> int:
    if sys.platform != "linux":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(int(abi), 0)


def _landlock(libc, abi: int, readable: list[Path], writable: list[Path]) -> str | None:
    if abi < 1:
        return None
    fs_all = (1 << _FS_BITS_BY_ABI.get(abi, 16)) - 1
    attr = _RulesetAttr(fs_all, 0, 0)
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    libc.syscall.restype = ctypes.c_long
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           ctypes.c_uint32(0))  # fmt: skip
    if ruleset < 0:
        return None
    try:
        read = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
        for paths, access in ((readable, read), (writable, fs_all)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a path that does not exist here needs no rule
                try:
                    # a rule on a file may only name file rights: a directory's extra bits are refused
                    allowed = access if os.path.isdir(path) else access & _FS_FILE_RIGHTS
                    rule = _PathBeneath(allowed, fd)
                    libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                                 ctypes.byref(rule), ctypes.c_uint32(0))  # fmt: skip
                finally:
                    os.close(fd)
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return None
    finally:
        os.close(ruleset)
    extra = (", no TCP" if abi >= 4 else "") + (", signals scoped" if abi >= 6 else "")
    return f"landlock ABI {abi} (writes only in scratch, reads only Python and the course code{extra})"


def readable_paths(code_dirs: list[Path]) -> list[Path]:
    """What the worker may read: Python and its packages, system libraries, the course's code."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    paths |= {Path(p) for p in sys.path if p and os.path.isdir(p)}
    paths |= {Path(p) for p in ("/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/dev/urandom")}
    return sorted(paths | set(code_dirs))


def confine(scratch: Path, limits: Limits, code_dirs: list[Path], namespaces: str | None) -> Report:
    """Apply every other layer this platform offers; returns all that is in force."""
    report = Report([namespaces] if namespaces else [])
    if sys.platform == "linux":
        libc = _libc()
        _set_limits(limits)
        report.layers.append("resource limits (memory, CPU time, file size)")
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
            writable = [scratch, Path("/dev/null")]
            if (ll := _landlock(libc, landlock_abi(), readable_paths(code_dirs), writable)) is not None:
                report.layers.append(ll)
            if (sc := _seccomp(libc)) is not None:
                report.layers.append(sc)
    else:
        _set_limits(limits)
        report.layers.append("resource limits (memory, CPU time, file size)")
    return report
