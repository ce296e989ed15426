"""Landlock (Linux 5.13+), through ctypes: the grading worker's second layer around the filesystem.

The same rule set as its private root: read (and map) only the paths it was handed, write only in its
scratch folder and /dev/null. From ABI 4 on, no TCP bind or connect; from ABI 6 on, no signals and no
abstract Unix sockets beyond its own domain. Where the private root exists this repeats it; where user
namespaces are refused it is the filesystem layer that remains.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | 1 << 14 | 1 << 15  # + truncate, ioctl_dev
_FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # how many access bits each ABI knows
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall


def abi() -> int:
    """The Landlock ABI version this kernel offers (0: none)."""
    if sys.platform != "linux":
        return 0
    version = _syscall()(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def restrict(readable: list[Path], writable: list[Path], max_abi: int | None = None) -> int:
    """Confine this process (no_new_privs must be set) with what ABI `max_abi` knows at most (None: all
    this kernel offers; a lower one is what a learner on an older kernel gets); the ABI in force, 0
    when Landlock is missing."""
    version = abi() if max_abi is None else min(abi(), max_abi)
    if version < 1:
        return 0
    syscall = _syscall()
    fs_all = (1 << _FS_BITS_BY_ABI.get(version, 16)) - 1
    attr = _RulesetAttr(fs_all, 0, 0)
    if version >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if version >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    ruleset = syscall(
        _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        return 0
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
                    syscall(
                        _SYS_ADD_RULE,
                        ctypes.c_int(ruleset),
                        ctypes.c_int(_RULE_PATH_BENEATH),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    )
                finally:
                    os.close(fd)
        if syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return 0
    finally:
        os.close(ruleset)
    return version
