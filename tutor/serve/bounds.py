"""Each learner's processes in bounds of their own: a memory cap, a CPU share and a cap on processes,
for the app and everything it starts (experiments, training, the judge of each grade).

Where the server can make control groups, a learner has one (in each hierarchy that has the
controller): the app joins it before it runs a line of the tutor (a shell writes its own pid into the
group's `cgroup.procs`, then `exec`s the app), and every process forked for that learner from the
server's warm processes (tutor.serve.forks) is moved into it before it reads its job. The kinds, in the
order they are tried:

    cgroup2    a delegated cgroup v2 subtree (a systemd service or scope with Delegate=yes): the server
               moves itself into a leaf `server/` and gives each learner a sibling `learner-ID/` with
               memory.max (and memory.swap.max 0), cpu.weight and cpu.max, pids.max
    cgroup1    cgroup v1 hierarchies the server may write (root, or hierarchies given to its user):
               memory.limit_in_bytes (+ memsw), cpu.shares and cpu.cfs_quota_us, pids.max, each in
               the server's own group of that hierarchy, `tutor-serve-PID/ID`; that group's own
               cpu.shares is the sum of its learners' (each learner weighs against the host's other
               processes as one ordinary process would: at 1024, the default, the whole class weighed as
               one, and a learner's keys waited behind the host's load once two others in the class ran)
    systemd    `systemd-run --user --scope` around each app (MemoryMax, CPUWeight, CPUQuota, TasksMax):
               for an instructor without a delegated subtree on a machine whose user manager runs
    rlimits    none of these: each process gets RLIMIT_AS (its own address space, not the learner's
               sum), RLIMIT_NPROC (the user's count at start plus the cap: per user, not per learner),
               and a lower priority (nice) than the server

A kind may lack a controller (cgroup v1 with memory but no writable pids hierarchy): that bound falls
back to its rlimit, and `layers` says which layer holds each bound. Every kind adds RLIMIT_FSIZE (no file
larger than the home's cap) and RLIMIT_CORE 0.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from tutor.proc.spawn import run

V1_FILES = {"memory": "memory.limit_in_bytes", "cpu": "cpu.shares", "pids": "pids.max"}
SERVER_GROUP = "_server"  # cgroup v1: the server's own CPU group in the class's (no learner id starts with _)
JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"'


@dataclass(frozen=True)
class Limits:
    """What one learner's processes may use together."""

    memory_bytes: int = 1536 * 2**20
    cpu_cores: float = 1.0  # at most this much CPU time per second (a quota; 0: no quota)
    cpu_weight: int = 100  # the share against other learners when the cores are busy (cgroup v2 units)
    pids: int = 128  # processes and threads
    nice: int = 5  # the rlimits kind: how much lower than the server the apps run
    home_bytes: int = 64 * 2**20  # what a home may hold, and so no file larger (RLIMIT_FSIZE)


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _own_cgroups() -> dict[str, str]:
    """{controller or "": this process's group} from /proc/self/cgroup ("" is cgroup v2's)."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        number, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _mounts() -> dict[str, tuple[str, str]]:
    """{controller or "": (mount point, the hierarchy's folder mounted there)} for cgroup v1 and v2."""
    out: dict[str, tuple[str, str]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        fields, _, fs = line.partition(" - ")
        fstype, _, options = (fs.split() + ["", "", ""])[:3]
        parts = fields.split()
        if fstype == "cgroup":
            for name in options.split(","):
                if name in V1_FILES:
                    out.setdefault(name, (parts[4], parts[3]))
        elif fstype == "cgroup2":
            out.setdefault("", (parts[4], parts[3]))
    return out


def _folder(mount: tuple[str, str], path: str) -> Path | None:
    point, root = mount
    if not Path(path).is_relative_to(root):
        return None
    return Path(point) / Path(path).relative_to(root)


@dataclass
class LearnerBounds:
    """One learner's bounds: how to start their app in them, move a forked process into them, list,
    kill and measure what runs in them."""

    placement: Placement
    learner_id: str
    folders: list[Path] = field(default_factory=list)  # the learner's group in each hierarchy
    # where the app runs, and where what is forked for it runs: the learner's group, or (for the CPU) a
    # child of it each, the forks' with a quarter of the app's weight, so that a grade or a training run
    # anywhere in the class yields to any learner's keys
    leaves: dict[str, list[Path]] = field(default_factory=lambda: {"app": [], "work": []})
    unit: str = ""  # systemd: the scope's name
    scope: Path | None = None  # systemd: the scope's group, once the app runs
    tracked: set[int] = field(default_factory=set)  # rlimits: the app and the processes forked for it

    def command(self, argv: list[str]) -> list[str]:
        """`argv` started inside these bounds."""
        limits = self.placement.limits
        kind = self.placement.kind
        if kind == "systemd":
            quota = [f"CPUQuota={round(limits.cpu_cores * 100)}%"] if limits.cpu_cores > 0 else []
            props = [
                f"MemoryMax={limits.memory_bytes}",
                "MemorySwapMax=0",
                f"CPUWeight={limits.cpu_weight}",
                f"TasksMax={limits.pids}",
                *quota,
            ]
            sets = [x for p in props for x in ("-p", p)]
            return [
                "systemd-run",
                "--user",
                "--scope",
                "--quiet",
                "--collect",
                f"--unit={self.unit}",
                *sets,
                "--",
                *argv,
            ]
        joins = [str(folder / "cgroup.procs") for folder in self.leaves["app"]]
        return ["/bin/sh", "-c", JOIN, "sh", *joins, "--", *argv]

    def limit_rlimits(self, pid: int, baseline_vm: int = 0, grouped: bool = True) -> None:
        """The rlimit layers on process `pid`: RLIMIT_FSIZE and RLIMIT_CORE always; RLIMIT_AS (`baseline_vm`,
        its address space before its work, plus the memory cap), RLIMIT_NPROC and nice for each bound no
        group holds, and for all of them when `pid` could not be put in the learner's group."""
        limits, layers = self.placement.limits, self.placement.layers
        rlimits = {"memory": "RLIMIT_AS", "cpu": "nice", "pids": "RLIMIT_NPROC"}
        held = {bound for bound, layer in layers.items() if grouped and layer != rlimits[bound]}
        size = baseline_vm + limits.memory_bytes
        most = self.placement.user_tasks_at_start + limits.pids
        steps = [(resource.RLIMIT_FSIZE, limits.home_bytes), (resource.RLIMIT_CORE, 0)]
        steps += [(resource.RLIMIT_AS, size)] if "memory" not in held else []
        steps += [(resource.RLIMIT_NPROC, most)] if "pids" not in held and os.getuid() != 0 else []
        for which, value in steps:
            with contextlib.suppress(OSError, ValueError):
                resource.prlimit(pid, which, (value, value))
        if "cpu" not in held:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, pid, max(os.getpriority(os.PRIO_PROCESS, pid), limits.nice))

    def started(self, pid: int) -> None:
        """The app runs as `pid` (inside the bounds already, but for the rlimit layers)."""
        self.tracked = {pid}
        self.limit_rlimits(pid)

    def adopt(self, pid: int, baseline_vm: int = 0) -> None:
        """Move a process forked for this learner (before it reads its job) into the learner's bounds;
        where it cannot be moved (a systemd scope the server may not write), rlimits and nice bound it."""
        groups = self.leaves["work"] if self.placement.kind != "systemd" else self._groups()
        grouped = bool(groups)
        for folder in groups:
            try:
                _write(folder / "cgroup.procs", str(pid))
            except OSError:
                grouped = False
        with contextlib.suppress(OSError):
            _write(Path(f"/proc/{pid}/oom_score_adj"), "500")  # at the cap, the kernel ends it, not the app
        self.tracked.add(pid)
        self.limit_rlimits(pid, baseline_vm, grouped)

    def _groups(self) -> list[Path]:
        if self.placement.kind == "systemd":
            return [self.scope] if self.scope is not None else []
        return self.folders

    def find_scope(self, app_pid: int) -> None:
        """systemd: the scope's group, read from where the app runs."""
        mount = self.placement.mounts.get("")
        if self.placement.kind != "systemd" or mount is None:
            return
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{app_pid}/cgroup").read_text().splitlines():
                if line.startswith("0::") and line.endswith(".scope"):
                    self.scope = _folder(mount, line[3:])

    def pids(self) -> list[int]:
        """Every process of this learner now: their group's, else the app's tree and its forks'."""
        groups = (
            self._groups() if self.placement.kind == "systemd" else self.leaves["app"] + self.leaves["work"]
        )
        if groups:
            found: set[int] = set()
            for folder in groups:
                with contextlib.suppress(OSError):
                    found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            return sorted(found)
        self.tracked = {p for p in self.tracked if Path(f"/proc/{p}").exists()}
        return sorted({p for pid in self.tracked for p in _tree(pid)})

    def kill(self) -> None:
        """SIGKILL to every process of this learner."""
        for folder in self._groups():
            if (folder / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    _write(folder / "cgroup.kill", "1")
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def empty(self) -> bool:
        return not self.pids()

    def oom_kills(self) -> int:
        """How many times the kernel ended one of this learner's processes at the memory cap."""
        for folder in self._groups():
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError):
                    for line in (folder / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            return int(value)
        return 0

    def memory_now(self) -> int:
        """Bytes charged to the learner's group now (0 where no group counts it)."""
        for folder in self._groups():
            for name in ("memory.current", "memory.usage_in_bytes"):
                with contextlib.suppress(OSError, ValueError):
                    return int((folder / name).read_text())
        return 0

    def remove(self) -> None:
        """Remove the learner's groups (once their processes are gone), their children first."""
        children = {leaf for leaves in self.leaves.values() for leaf in leaves} - set(self.folders)
        for folder in [*children, *self.folders]:
            end = time.monotonic() + 1.0
            while folder.exists():
                try:
                    folder.rmdir()
                except OSError:
                    if time.monotonic() > end:
                        break
                    time.sleep(0.01)
        self.placement.weigh_class()


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc/PID/task/*/children."""
    out, todo = [], [pid]
    while todo:
        here = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{here}/task")
        except OSError:
            continue
        out.append(here)
        for task in tasks:
            with contextlib.suppress(OSError, ValueError):
                todo.extend(int(c) for c in Path(f"/proc/{here}/task/{task}/children").read_text().split())
    return out


@dataclass
class Placement:
    """How this server bounds its learners: the kind, and the layer that holds each bound."""

    limits: Limits
    kind: str = "rlimits"
    layers: dict[str, str] = field(
        default_factory=lambda: {"memory": "RLIMIT_AS", "cpu": "nice", "pids": "RLIMIT_NPROC"}
    )
    base: dict[str, Path] = field(default_factory=dict)  # controller ("" for v2) -> the server's folder
    mounts: dict[str, tuple[str, str]] = field(default_factory=dict)
    user_tasks_at_start: int = 0
    server_came_from: Path | None = None  # cgroup v1: the CPU group the server left for the class's

    def learner(self, learner_id: str) -> LearnerBounds:
        bounds = LearnerBounds(self, learner_id)
        if self.kind == "systemd":
            bounds.unit = f"tutor-{os.getpid()}-{learner_id}-{time.monotonic_ns() % 10**9}"
        elif self.kind == "cgroup2":
            folder = self.base[""] / f"learner-{learner_id}"
            folder.mkdir(exist_ok=True)
            self._set_v2(folder)
            _write(folder / "cgroup.subtree_control", "+cpu")
            bounds.folders = [folder]
            for leaf, weight in (
                ("app", self.limits.cpu_weight),
                ("work", max(1, self.limits.cpu_weight // 4)),
            ):
                (folder / leaf).mkdir(exist_ok=True)
                _write(folder / leaf / "cpu.weight", str(weight))
                bounds.leaves[leaf].append(folder / leaf)
        elif self.kind == "cgroup1":
            for name, base in self.base.items():
                folder = base / learner_id
                folder.mkdir(exist_ok=True)
                self._set_v1(name, folder)
                bounds.folders.append(folder)
                for leaf, weight in (
                    ("app", self.limits.cpu_weight),
                    ("work", max(1, self.limits.cpu_weight // 4)),
                ):
                    if name == "cpu":
                        (folder / leaf).mkdir(exist_ok=True)
                        _write(folder / leaf / "cpu.shares", str(max(2, weight * 1024 // 100)))
                    bounds.leaves[leaf].append(folder / leaf if name == "cpu" else folder)
            self.weigh_class()
        return bounds

    def weigh_class(self) -> None:
        """cgroup v1: the class's CPU group weighs the sum of its learners' shares (their groups there
        now; at least one learner's, at most the kernel's most, 262144), and the server's group in it as
        much as all of them: it relays every learner's keys and screens, so no learner's work is ahead
        of it."""
        base = self.base.get("cpu") if self.kind == "cgroup1" else None
        if base is None:
            return
        with contextlib.suppress(OSError):
            learners = sum(1 for folder in base.iterdir() if folder.is_dir() and folder.name != SERVER_GROUP)
            one = max(2, self.limits.cpu_weight * 1024 // 100)
            total = min(262144, one * max(1, learners))
            _write(base / "cpu.shares", str(total))
            if self.server_came_from is not None:
                _write(base / SERVER_GROUP / "cpu.shares", str(total))

    def _set_v2(self, folder: Path) -> None:
        limits = self.limits
        _write(folder / "memory.max", str(limits.memory_bytes))
        with contextlib.suppress(OSError):
            _write(folder / "memory.swap.max", "0")
        _write(folder / "cpu.weight", str(limits.cpu_weight))
        if limits.cpu_cores > 0:
            _write(folder / "cpu.max", f"{round(limits.cpu_cores * 100000)} 100000")
        _write(folder / "pids.max", str(limits.pids))

    def _set_v1(self, name: str, folder: Path) -> None:
        limits = self.limits
        if name == "memory":
            _write(folder / "memory.limit_in_bytes", str(limits.memory_bytes))
            with contextlib.suppress(OSError):  # without swap accounting there is no such file
                _write(folder / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        elif name == "cpu":
            _write(folder / "cpu.shares", str(max(2, limits.cpu_weight * 1024 // 100)))
            if limits.cpu_cores > 0:
                _write(folder / "cpu.cfs_period_us", "100000")
                _write(folder / "cpu.cfs_quota_us", str(round(limits.cpu_cores * 100000)))
        elif name == "pids":
            _write(folder / "pids.max", str(limits.pids))

    def close(self) -> None:
        """Remove the server's own groups, and any learner's still there (each is removed as its app
        ends; a learner's group whose app was ended as the server stopped was left behind), the
        deepest first."""
        if self.kind == "cgroup1":
            if self.server_came_from is not None:  # back where it was: a group with a process stays
                with contextlib.suppress(OSError):
                    _write(self.server_came_from / "cgroup.procs", str(os.getpid()))
            end = time.monotonic() + 3.0  # a learner's last processes may still be ending
            for base in self.base.values():
                with contextlib.suppress(OSError):
                    folders = sorted((f for f in base.rglob("*") if f.is_dir()), key=lambda f: -len(f.parts))
                    for folder in [*folders, base]:
                        while True:
                            try:
                                folder.rmdir()
                                break
                            except OSError:
                                if time.monotonic() > end:
                                    break
                                time.sleep(0.02)

    def summary(self) -> str:
        return f"{self.kind}: " + ", ".join(f"{bound} by {layer}" for bound, layer in self.layers.items())


def place(limits: Limits, prefer: str | None = None) -> Placement:
    """The strongest kind of bounds this server can give its learners (`prefer`: only that kind, or
    rlimits where it cannot be had)."""
    mounts, own = _mounts(), _own_cgroups()
    placement = Placement(limits, mounts=mounts, user_tasks_at_start=_user_tasks())
    for kind, attempt in (("cgroup2", _try_v2), ("cgroup1", _try_v1), ("systemd", _try_systemd)):
        if prefer not in (None, kind):
            continue
        if attempt(placement, mounts, own):
            placement.kind = kind
            return placement
    return placement


def _try_v2(placement: Placement, mounts, own) -> bool:
    if "" not in mounts or "" not in own:
        return False
    base = _folder(mounts[""], own[""])
    if base is None:
        return False
    try:
        controllers = set((base / "cgroup.controllers").read_text().split())
        if not {"memory", "cpu", "pids"} <= controllers:
            return False
        server = base / "server"
        server.mkdir(exist_ok=True)
        _write(server / "cgroup.procs", str(os.getpid()))
        _write(base / "cgroup.subtree_control", "+memory +cpu +pids")
    except OSError:
        with contextlib.suppress(OSError):  # back where it was
            _write(base / "cgroup.procs", str(os.getpid()))
            (base / "server").rmdir()
        return False
    placement.base = {"": base}
    placement.layers = {
        "memory": "cgroup v2 memory.max",
        "cpu": "cgroup v2 cpu.weight and cpu.max",
        "pids": "cgroup v2 pids.max",
    }
    return True


def _try_v1(placement: Placement, mounts, own) -> bool:
    made: dict[str, Path] = {}
    for name in V1_FILES:
        if name not in mounts or name not in own:
            continue
        folder = _folder(mounts[name], own[name])
        if folder is None:
            continue
        folder = folder / f"tutor-serve-{os.getpid()}"
        try:
            folder.mkdir(exist_ok=True)
            if name == "memory":
                with contextlib.suppress(OSError):
                    _write(folder / "memory.use_hierarchy", "1")
            probe = folder / "probe"
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            continue
        made[name] = folder
    if not made:
        return False
    placement.base = made
    if "cpu" in made:  # the server itself in the class's CPU group, beside its learners
        server = made["cpu"] / SERVER_GROUP
        with contextlib.suppress(OSError):
            server.mkdir(exist_ok=True)
            _write(server / "cgroup.procs", str(os.getpid()))
            placement.server_came_from = made["cpu"].parent
        placement.weigh_class()
    named = {
        "memory": "cgroup v1 memory.limit_in_bytes",
        "cpu": "cgroup v1 cpu.shares and cfs quota",
        "pids": "cgroup v1 pids.max",
    }
    placement.layers = {
        bound: named[bound] if bound in made else placement.layers[bound] for bound in V1_FILES
    }
    return True


def _try_systemd(placement: Placement, mounts, own) -> bool:
    if shutil.which("systemd-run") is None:
        return False
    probe = ["systemd-run", "--user", "--scope", "--quiet", "--collect", "-p", "TasksMax=8", "true"]
    if run(probe, timeout_s=10) != 0:
        return False
    placement.layers = {
        "memory": "systemd scope MemoryMax",
        "cpu": "systemd scope CPUWeight and CPUQuota",
        "pids": "systemd scope TasksMax",
    }
    return True


def _user_tasks() -> int:
    uid, count = os.getuid(), 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if entry.stat().st_uid == uid:
                        count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count
