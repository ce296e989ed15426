"""The grading box, attacked the way its review did, through the real CLI.

Every route that got out of the old box is tried by a submission that reports what it reached: a
Unix socket server of the same user (our own listener), TCP and UDP listeners on the host, a victim
process whose limits and scheduling must stay as they were, a key planted in the session keyring of
the process that starts the grade, kernel interfaces (memfd, io_uring, bpf, perf, userfaultfd), and
the course's own answers (tutor.model.positions, the lessons' reference solutions). Each file raises
"ESCAPED: ..." if anything got through and "refused: ..." otherwise, so its grade is always a non-pass;
the tests check the reason and what happened outside. Then the same on a machine that refuses user
namespaces (simulated: a seccomp filter makes `unshare` fail with EPERM for the whole CLI), where the
grade must say which layers are missing. No test depends on the order the attacks run in.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import socket
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tests.grading_helpers import SOLUTION, grading_processes_left, probe_course

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"),
    reason="the box's layers are Linux's",
)

SECRET = "tutor-box-test-secret-7f3a"
# system call numbers the attacks need (x86_64, aarch64)
NUMBERS = {
    "x86_64": {
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "io_uring_setup": 425,
        "bpf": 321,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "ioprio_set": 251,
        "ptrace": 101,
        "clone": 56,
    },
    "aarch64": {
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "io_uring_setup": 425,
        "bpf": 280,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "ioprio_set": 30,
        "ptrace": 117,
        "clone": 220,
    },
}[platform.machine()]

# Every attack file starts with this: `attempt(what, fn)` records whether fn got through.
PRELUDE = """
import ctypes, os, socket
got, refused = [], []

def attempt(what, fn):
    try:
        fn()
    except (OSError, LookupError, ImportError) as err:
        refused.append(f"{what} ({type(err).__name__}: {getattr(err, 'strerror', None) or err})")
    else:
        got.append(what)

def verdict():
    if got:
        raise RuntimeError("ESCAPED: " + "; ".join(got))
    raise RuntimeError("refused: " + "; ".join(refused))

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def syscall(number, *args):
    if libc.syscall(number, *args) < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
"""


def _attacks(env: dict) -> dict[str, str]:
    """name: source. `env` holds the addresses of the test's listeners and its victim."""
    n = NUMBERS
    return {
        "unix_socket": f"""
def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect({env["unix"]!r})
    s.sendall(b"run-shell 'touch /tmp/pwned'\\n")
attempt("connect to a Unix socket of the same user", unix)
attempt("socketpair", lambda: socket.socketpair())
verdict()
""",
        "tcp_and_udp": f"""
def tcp():
    socket.create_connection(("127.0.0.1", {env["tcp"]}), timeout=2).sendall(b"x")
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"{SECRET}", ("127.0.0.1", {env["udp"]}))
attempt("TCP to a listener on the host", tcp)
attempt("UDP to a listener on the host", udp)
verdict()
""",
        "other_processes": f"""
import resource
victim = {env["victim"]}
attempt("prlimit CPU of another process", lambda: resource.prlimit(victim, resource.RLIMIT_CPU, (1, 1)))
attempt("prlimit memory of another process", lambda: resource.prlimit(victim, resource.RLIMIT_AS, (2**20, 2**20)))
attempt("prlimit of its parent", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1)))
attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, victim, 19))
attempt("setpriority of the user", lambda: os.setpriority(os.PRIO_USER, os.getuid(), 19))
attempt("sched_setaffinity", lambda: os.sched_setaffinity(victim, {{0}}))
attempt("sched_setscheduler", lambda: os.sched_setscheduler(victim, os.SCHED_IDLE, os.sched_param(0)))
attempt("ioprio_set", lambda: syscall({n["ioprio_set"]}, 1, victim, (3 << 13) | 7))
attempt("getsid", lambda: os.getsid(victim))
attempt("getpgid", lambda: os.getpgid(victim))
attempt("kill 0", lambda: os.kill(victim, 0))
attempt("ptrace attach", lambda: syscall({n["ptrace"]}, 16, victim, 0, 0))
verdict()
""",
        "session_keyring": f"""
buf = ctypes.create_string_buffer(256)
attempt("keyctl read the session keyring", lambda: syscall({n["keyctl"]}, 11, -3, buf, 256))
attempt("request_key", lambda: syscall({n["request_key"]}, b"user", b"{SECRET}", None, 0))
attempt("add_key", lambda: syscall({n["add_key"]}, b"user", b"mine", b"x", 1, -3))
if b"{SECRET}" in buf.raw:
    got.append("read the planted key")
verdict()
""",
        "kernel_interfaces": f"""
params = ctypes.create_string_buffer(120)
attempt("memfd_create", lambda: os.memfd_create("big"))
attempt("io_uring_setup", lambda: syscall({n["io_uring_setup"]}, 8, params))
attempt("bpf", lambda: syscall({n["bpf"]}, 0, params, 120))
attempt("perf_event_open", lambda: syscall({n["perf_event_open"]}, params, 0, -1, -1, 0))
attempt("userfaultfd", lambda: syscall({n["userfaultfd"]}, 0))
verdict()
""",
        "signals": f"""
import fcntl, signal, struct
victim = {env["victim"]}
r, w = os.pipe()
def whole_route():
    fcntl.fcntl(r, fcntl.F_SETOWN, victim)
    fcntl.fcntl(r, 10, signal.SIGKILL)
    fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
    os.write(w, b"x")
attempt("F_SETOWN to another process", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, victim))
attempt("F_SETOWN_EX", lambda: fcntl.fcntl(r, 15, struct.pack("ii", 1, victim)))
attempt("F_SETSIG", lambda: fcntl.fcntl(r, 10, signal.SIGKILL))
attempt("O_ASYNC", lambda: fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC))
attempt("SIGKILL through O_ASYNC", whole_route)
verdict()
""",
        "leases_and_locks": """
import fcntl
handed = os.__file__
attempt("a read lease on a handed file", lambda: fcntl.fcntl(os.open(handed, os.O_RDONLY), fcntl.F_SETLEASE, fcntl.F_RDLCK))
attempt("F_NOTIFY", lambda: fcntl.fcntl(os.open(".", os.O_RDONLY), fcntl.F_NOTIFY, fcntl.DN_ACCESS))
attempt("a POSIX lock on a handed file", lambda: fcntl.lockf(os.open(handed, os.O_RDONLY), fcntl.LOCK_SH | fcntl.LOCK_NB))
attempt("flock on a handed file", lambda: fcntl.flock(os.open(handed, os.O_RDONLY), fcntl.LOCK_SH | fcntl.LOCK_NB))
verdict()
""",
        "memory_and_clone": """
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
page = libc.mmap(None, 4096, 3, 0x22, -1, 0)
def call(name, *args):
    if getattr(libc, name)(*args) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
attempt("madvise MADV_MERGEABLE", lambda: call("madvise", ctypes.c_void_p(page), 4096, 12))
attempt("madvise MADV_HWPOISON", lambda: call("madvise", ctypes.c_void_p(page), 4096, 100))
attempt("prctl PR_SET_VMA with another sub-command", lambda: call("prctl", 0x53564D41, 1, 0, 0, 0))
attempt("prctl PR_SET_PDEATHSIG", lambda: call("prctl", 1, 0, 0, 0, 0))
attempt("a thread in a new user namespace", lambda: syscall(CLONE, 0x10000000 | 0x10000 | 0x800 | 0x100, 0, 0, 0, 0))
attempt("a thread with an exit signal", lambda: syscall(CLONE, 17 | 0x10000 | 0x800 | 0x100, 0, 0, 0, 0))
verdict()
""".replace("CLONE", str(n["clone"])),
        "course_answers": f"""
import importlib, sys
attempt("sys.modules", lambda: sys.modules["models." + "positions"])
attempt("import", lambda: importlib.import_module("models." + "positions"))
attempt("read the reference", lambda: open({str(ROOT / "tutor/lessons/03-rope-alibi/exercises/rope/solution.py")!r}).read())
attempt("read the checks", lambda: open({str(ROOT / "tutor/lessons/03-rope-alibi/exercises/rope/checks.py")!r}).read())
attempt("the grader's code", lambda: importlib.import_module("tutor.grading.judging.judge"))
verdict()
""",
    }


def _tutor(
    home: Path, args: list[str], tmpdir: Path, wrapper: str | None = None, env: dict | None = None, **kw
) -> subprocess.CompletedProcess:
    env = run_tutor_env(home) | {"TMPDIR": str(tmpdir)} | (env or {})
    argv = [PYTHON, "-m", "tutor", *args]
    if wrapper is not None:
        argv = [PYTHON, "-c", wrapper, *argv]
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL, **kw
    )


# runs the command after it with a key planted in a fresh session keyring
PLANT_KEY = f"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.syscall({NUMBERS["keyctl"]}, 1, None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING: a new, anonymous one
assert libc.syscall({NUMBERS["add_key"]}, b"user", b"{SECRET}", b"{SECRET}", len(b"{SECRET}"), -3) >= 0
os.execv(sys.argv[1], sys.argv[1:])
"""


def refusing(*calls: str) -> str:
    """A launcher that runs the command after it as on a machine that refuses `calls` (EPERM), for the
    whole CLI and everything it starts: `unshare` for a kernel or policy without unprivileged user
    namespaces (Ubuntu 24.04's AppArmor default), `landlock_create_ruleset` for a kernel without
    Landlock, `mount` for one that refuses mounts in a user namespace."""
    rules = "".join(
        f'assert lib.seccomp_rule_add(ctx, 0x00050001, lib.seccomp_syscall_resolve_name(b"{call}"), 0) == 0\n'
        for call in calls
    )
    return f"""
import ctypes, os, sys
lib = ctypes.CDLL("libseccomp.so.2")
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
ctx = lib.seccomp_init(0x7FFF0000)
{rules}assert ctypes.CDLL(None).prctl(38, 1, 0, 0, 0) == 0 and lib.seccomp_load(ctx) == 0
os.execv(sys.argv[1], sys.argv[1:])
"""


NO_USER_NAMESPACES = refusing("unshare")
NO_LANDLOCK = refusing("unshare", "landlock_create_ruleset")
NO_MOUNTS = refusing("mount")
UBUNTU_24_04 = {"TUTOR_BOX_LANDLOCK_ABI": "4"}  # with NO_USER_NAMESPACES: Landlock without signal scoping


class Listeners:
    """A Unix socket server, a TCP and a UDP listener on the host, and a victim process: what each
    received, and the victim's limits and scheduling before the attacks."""

    def __init__(self, folder: Path):
        self.unix_path = str(folder / "tutor-test.sock")
        self.received: list[str] = []
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        self.unix.listen()
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        for s in (self.unix, self.tcp, self.udp):
            s.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.victim = subprocess.Popen(["sleep", "600"])
        self.before = self.victim_state()

    def _serve(self) -> None:
        while not self.stop.is_set():
            for name, s in (("unix", self.unix), ("tcp", self.tcp)):
                try:
                    conn, _ = s.accept()
                    self.received.append(f"{name}: connection {conn.recv(100)!r}")
                except OSError:
                    pass
            try:
                self.received.append(f"udp: {self.udp.recvfrom(100)[0]!r}")
            except OSError:
                pass

    def victim_state(self) -> dict:
        pid = self.victim.pid
        return {
            "limits": Path(f"/proc/{pid}/limits").read_text(),
            "nice": os.getpriority(os.PRIO_PROCESS, pid),
            "affinity": os.sched_getaffinity(pid),
            "policy": os.sched_getscheduler(pid),
            "alive": self.victim.poll() is None,
        }

    def addresses(self) -> dict:
        return {
            "unix": self.unix_path,
            "tcp": self.tcp.getsockname()[1],
            "udp": self.udp.getsockname()[1],
            "victim": self.victim.pid,
        }

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.victim.kill()
        self.victim.wait()
        for s in (self.unix, self.tcp, self.udp):
            s.close()


def _batch(
    lessons: Path,
    home: Path,
    folder: Path,
    files: dict[str, str],
    tmpdir: Path,
    wrapper: str,
    env: dict | None = None,
    args: tuple[str, ...] = (),
) -> tuple:
    folder.mkdir()
    for name, source in files.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    tmpdir.mkdir()
    out = _tutor(
        home,
        [
            "grade",
            "probe",
            "--batch",
            str(folder),
            "--format",
            "json",
            "--timeout",
            "10",
            "--lessons",
            str(lessons),
            *args,
        ],
        tmpdir,
        wrapper,
        env,
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    grades = {Path(r["file"]).stem: r["grade"] for r in json.loads(out.stdout)["results"]}
    return grades, out.stdout, grading_processes_left(tmpdir)


def _outside(base: Path) -> dict:
    """Files outside every box, the user's own: a secret, a file to keep, one to delete, a folder."""
    folder = base / "outside"
    (folder / "a-folder").mkdir(parents=True)
    (folder / "secret.txt").write_text(SECRET, encoding="utf-8")
    (folder / "keep.txt").write_text("keep me", encoding="utf-8")
    (folder / "doomed.txt").write_text("delete me", encoding="utf-8")
    return {name: str(folder / name) for name in ("secret.txt", "keep.txt", "doomed.txt", "a-folder")}


def _file_attacks(outside: dict) -> dict[str, str]:
    keep, doomed, folder = outside["keep.txt"], outside["doomed.txt"], outside["a-folder"]
    return {
        "reads_a_secret": PRELUDE + f"attempt('read a secret outside its folder', "
        f"lambda: print(open({outside['secret.txt']!r}).read()))\nverdict()\n",
        "changes_outside_files": PRELUDE
        + f"""
attempt("rewrite an outside file", lambda: os.open({keep!r}, os.O_WRONLY | os.O_TRUNC))
attempt("append to an outside file", lambda: open({keep!r}, "a").write("x"))
attempt("truncate an outside file", lambda: os.ftruncate(os.open({keep!r}, os.O_RDWR), 0))
attempt("delete an outside file", lambda: os.unlink({doomed!r}))
attempt("rename an outside file", lambda: os.rename({doomed!r}, {doomed!r} + ".moved"))
attempt("remove an outside folder", lambda: os.rmdir({folder!r}))
verdict()
""",
        # far more threads than the cap: the 65th cannot start
        "threads": "import threading\nstop = threading.Event()\nfor _ in range(2000):\n"
        "    threading.Thread(target=stop.wait, daemon=True).start()\n",
    }


@pytest.fixture(scope="module")
def attacked(tmp_path_factory) -> dict:
    """Four batches, two at a time: in the full box, with a key planted in the session keyring; as on
    Ubuntu 24.04 (no user namespaces, Landlock ABI 4); with neither user namespaces nor Landlock, a weak
    box allowed; and the same without that allowance, where nothing may run."""
    base = tmp_path_factory.mktemp("box")
    lessons = probe_course(base / "lessons")
    listeners = Listeners(base)
    outside = _outside(base)
    try:
        attacks = {name: PRELUDE + body for name, body in _attacks(listeners.addresses()).items()}
        files = _file_attacks(outside)
        if platform.machine() == "x86_64":  # getpid through the x32 ABI: the filter kills the process
            attacks["x32_call"] = PRELUDE + "libc.syscall(0x40000000 | 39)\nverdict()\n"
        fills = (
            PRELUDE + "attempt('write 180 MB', lambda: open('big', 'wb').write(b'x' * (180 << 20)))\n"
            "attempt('make a folder', lambda: os.mkdir('d'))\nverdict()\n"
        )
        home_folder = (
            PRELUDE
            + f"attempt('list the home folder', lambda: os.listdir({str(Path.home())!r}))\nverdict()\n"
        )
        reaching = (
            "unix_socket",
            "tcp_and_udp",
            "other_processes",
            "signals",
            "leases_and_locks",
            "memory_and_clone",
        )
        batches = {
            "strong": ({**attacks, **files}, PLANT_KEY, None, ()),
            "partial": (
                {
                    **{k: attacks[k] for k in (*reaching, "course_answers")},
                    **files,
                    "fills_the_disk": fills,
                    "reads_the_home_folder": home_folder,
                    "solution": SOLUTION,
                },
                NO_USER_NAMESPACES,
                UBUNTU_24_04,
                (),
            ),
            "basic": (
                {**{k: attacks[k] for k in reaching}, **files, "fills_the_disk": fills, "solution": SOLUTION},
                NO_LANDLOCK,
                None,
                ("--allow-weak-box",),
            ),
            "refused": (
                {"solution": SOLUTION, "prints": "print('I ran')\n" + SOLUTION},
                NO_LANDLOCK,
                None,
                (),
            ),
        }
        with ThreadPoolExecutor(max_workers=2) as pool:
            running = {
                box: pool.submit(
                    _batch,
                    lessons,
                    base / f"h-{box}",
                    base / box,
                    batch,
                    base / f"t-{box}",
                    wrapper,
                    env,
                    args,
                )
                for box, (batch, wrapper, env, args) in batches.items()
            }
            result = {box: future.result() for box, future in running.items()}
        result["received"] = list(listeners.received)
        result["victim"] = (listeners.before, listeners.victim_state())
        result["tmp"] = [base / f"t-{box}" for box in batches]
        result["outside"] = outside
        return result
    finally:
        listeners.close()


def _message(grade: dict) -> str:
    return next(c for c in grade["checks"] if c["status"] != "pass")["message"]


@pytest.mark.parametrize("box", ["strong", "partial", "basic"])
def test_every_route_out_is_refused_with_a_clear_reason(attacked, box):
    grades = attacked[box][0]
    for name, grade in grades.items():
        if name in ("solution", "x32_call", "threads") or (box, name) == ("basic", "reads_a_secret"):
            continue
        message = _message(grade)
        assert grade["status"] == "error" and grade["score"] == 0, (name, grade["status"], message)
        assert "refused: " in message and "ESCAPED" not in message, (name, message)
        reasons = ("Operation not permitted", "Permission denied", "No such file", "No module", "KeyError")
        assert any(reason in message for reason in reasons), (name, message)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 is an x86-64 ABI")
def test_a_call_through_another_abi_ends_the_worker(attacked):
    grade = attacked["strong"][0]["x32_call"]
    assert grade["status"] == "error" and grade["score"] == 0
    assert "SIGSYS, a system call the grader does not allow" in _message(grade), _message(grade)


def test_nothing_reached_the_host_and_the_victim_is_unchanged(attacked):
    assert attacked["received"] == []
    before, after = attacked["victim"]
    assert after == before and after["alive"]
    assert not Path("/tmp/pwned").exists()


def test_the_planted_key_is_never_read(attacked):
    grades, report, _ = attacked["strong"]
    assert SECRET not in report
    assert "keyctl read the session keyring (PermissionError: Operation not permitted)" in _message(
        grades["session_keyring"]
    )


def test_the_course_answers_are_not_there_to_take(attacked):
    message = _message(attacked["strong"][0]["course_answers"])
    for what in ("sys.modules", "import", "read the reference", "read the checks", "the grader's code"):
        assert f"{what} (" in message, message


def test_the_full_box_is_strong_and_names_every_layer(attacked):
    for grade in attacked["strong"][0].values():
        assert grade["isolation"]["level"] == "strong"
        assert grade["isolation"]["missing"] == []
        assert set(grade["isolation"]["layers"]) >= {
            "private-root",
            "pid-namespace",
            "network-namespace",
            "landlock",
            "seccomp",
            "limits",
            "process-cap",
        }


def test_without_user_namespaces_the_grade_says_what_is_missing(attacked):
    grades = attacked["partial"][0]
    assert grades["solution"]["status"] == "pass"
    for grade in grades.values():
        isolation = grade["isolation"]
        assert isolation["level"] == "partial"
        assert isolation["missing"] == ["private-root", "pid-namespace", "network-namespace"]
        assert {"landlock", "seccomp", "no-new-files", "limits", "process-cap"} <= set(isolation["layers"])
    disk = _message(grades["fills_the_disk"])
    assert "write 180 MB (PermissionError" in disk and "make a folder (PermissionError" in disk


@pytest.mark.parametrize("box", ["strong", "partial", "basic"])
def test_no_signal_lease_or_lock_reaches_outside_at_any_level(attacked, box):
    grades = attacked[box][0]
    for name, attempts in (
        (
            "signals",
            ("F_SETOWN to another process", "F_SETOWN_EX", "F_SETSIG", "O_ASYNC", "SIGKILL through O_ASYNC"),
        ),
        (
            "leases_and_locks",
            (
                "a read lease on a handed file",
                "F_NOTIFY",
                "a POSIX lock on a handed file",
                "flock on a handed file",
            ),
        ),
    ):
        for what in attempts:
            assert f"{what} (PermissionError: Operation not permitted)" in _message(grades[name]), what
    message = _message(attacked[box][0]["memory_and_clone"])
    assert "ESCAPED" not in message and message.count("Operation not permitted") == 6, message


@pytest.mark.parametrize("box", ["strong", "partial", "basic"])
def test_a_file_that_starts_thousands_of_threads_meets_the_cap(attacked, box):
    grade = attacked[box][0]["threads"]
    assert grade["status"] == "error" and grade["score"] == 0
    assert (
        "your code started more threads than the grader allows (64 processes and threads in all): "
        "RuntimeError: can't start new thread" in _message(grade)
    ), _message(grade)


def test_outside_files_stay_as_they_were_and_only_a_weak_box_reads_them(attacked):
    outside = attacked["outside"]
    assert Path(outside["keep.txt"]).read_text(encoding="utf-8") == "keep me"
    assert Path(outside["doomed.txt"]).is_file() and Path(outside["a-folder"]).is_dir()
    assert not Path(outside["doomed.txt"] + ".moved").exists()
    assert "No such file" in _message(attacked["strong"][0]["reads_a_secret"])  # not in its root
    assert "Permission denied" in _message(attacked["partial"][0]["reads_a_secret"])  # Landlock
    basic = attacked["basic"][0]["reads_a_secret"]  # what a weak box cannot keep, and says
    assert "ESCAPED: read a secret outside its folder" in _message(basic) and SECRET in basic["output"]
    assert basic["isolation"]["level"] == "basic"
    assert basic["isolation"]["missing"] == ["private-root", "pid-namespace", "network-namespace", "landlock"]
    assert {"seccomp", "no-writes", "limits", "process-cap"} <= set(basic["isolation"]["layers"])
    assert attacked["basic"][0]["solution"]["status"] == "pass"


def test_a_weak_box_runs_no_learner_code_unless_allowed(attacked):
    grades, report, _ = attacked["refused"]
    assert "I ran" not in report
    for grade in grades.values():
        assert grade["status"] == "error" and grade["score"] == 0 and grade["output"] == ""
        assert grade["isolation"]["level"] == "basic"
        assert _message(grade) == (
            "not graded: this system cannot close the grader's box (it lacks: private root, PID namespace, "
            "network namespace, Landlock), so code graded here could read files outside its folder. To grade "
            "anyway, add --allow-weak-box or set TUTOR_ALLOW_WEAK_BOX=1"
        )


def test_no_grade_leaves_a_process_or_a_file_behind(attacked):
    for box in ("strong", "partial", "basic", "refused"):
        assert attacked[box][2] == set(), box
    for tmp in attacked["tmp"]:
        assert list(tmp.iterdir()) == [], tmp


def test_the_missing_layers_are_named_in_the_learners_language(tmp_path):
    lessons = probe_course(tmp_path / "lessons")
    path = tmp_path / "probe.py"
    path.write_text(SOLUTION, encoding="utf-8")
    (tmp_path / "t").mkdir()
    out = _tutor(
        tmp_path / "home",
        ["grade", "probe", str(path), "--lang", "de", "--lessons", str(lessons)],
        tmp_path / "t",
        NO_USER_NAMESPACES,
    )
    assert out.returncode == 0, out.stderr
    assert (
        "Dein Code lief in einer Box, die dieses System nicht ganz schließen konnte (es fehlt: eigenes "
        "Wurzelverzeichnis, PID-Namespace, Netzwerk-Namespace); trotzdem kein Netzwerk" in out.stdout
    )


def test_a_refused_mount_leaves_the_namespaces_and_says_the_root_is_missing(tmp_path):
    lessons = probe_course(tmp_path / "lessons")
    path = tmp_path / "probe.py"
    path.write_text(SOLUTION + "\nimport os\nassert os.getpid() == 2, os.getpid()\n", encoding="utf-8")
    (tmp_path / "t").mkdir()
    out = _tutor(
        tmp_path / "home",
        ["grade", "probe", str(path), "--json", "--lessons", str(lessons)],
        tmp_path / "t",
        NO_MOUNTS,
    )
    grade = json.loads(out.stdout)
    assert grade["status"] == "pass", grade
    assert grade["isolation"]["level"] == "partial"
    assert grade["isolation"]["missing"] == ["private-root"]
    assert list((tmp_path / "t").iterdir()) == []


FORGED = {
    # the worker's reply channel is fd 4: write what the judge must refuse, then wait
    "a_tensor_of_10_to_the_30": SOLUTION
    + """
import gc
w = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
_send = w.send
w.send = lambda m: _send({**m, "ok": {"__tensor__": ["float32", [0, 10**30], ""]}} if "ok" in m and m["id"] > 1 else m)
""",
    "a_60_mb_answer": """
import os
os.write(4, b'{"id": 1, "ok": "' + b"x" * (60 << 20))
""",
    "a_deep_answer": SOLUTION
    + """
import gc
w = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
_send = w.send
def send(m):
    if "ok" in m and m["id"] > 1:
        os.write(4, b'{"id": %d, "ok": ' % m["id"] + b"[" * 100000 + b"]" * 100000 + b"}\\n")
    else:
        _send(m)
import os
w.send = send
""",
    "names_not_a_dict": """
import gc
w = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
_send = w.send
w.send = lambda m: _send({**m, "ok": {"names": ["add"]}} if "ok" in m else m)
""",
}


def test_forged_replies_void_the_run_quickly_and_without_a_traceback(tmp_path):
    lessons = probe_course(tmp_path / "lessons")
    folder = tmp_path / "forged"
    folder.mkdir()
    for name, source in FORGED.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    (tmp_path / "t").mkdir()
    start = time.monotonic()
    out = _tutor(
        tmp_path / "home",
        ["grade", "probe", "--batch", str(folder), "--format", "json", "--lessons", str(lessons)],
        tmp_path / "t",
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert time.monotonic() - start < 60  # four judges; a 60 MB answer is cut at 16 MB, not read whole
    grades = {Path(r["file"]).stem: r["grade"] for r in json.loads(out.stdout)["results"]}
    reasons = {
        "a_tensor_of_10_to_the_30": "not plain data",
        "a_60_mb_answer": "an answer larger than 16 MB",
        "a_deep_answer": "broke the grading protocol",
        "names_not_a_dict": "a malformed answer to submit",
    }
    for name, reason in reasons.items():
        grade = grades[name]
        assert grade["status"] == "error" and grade["score"] == 0, (name, grade)
        assert reason in _message(grade), (name, _message(grade))


def test_every_report_of_a_batch_says_which_box_its_files_had(tmp_path):
    """As on Ubuntu 24.04: the table's last line, the CSV's columns, the gradebook and each student's
    feedback say the box was partial and what it lacked, in the instructor's language."""
    lessons = probe_course(tmp_path / "lessons")
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ada.py").write_text(SOLUTION, encoding="utf-8")
    (folder / "ben.py").write_text(SOLUTION.replace("a + b", "a - b", 1), encoding="utf-8")
    (tmp_path / "t").mkdir()
    out = _tutor(
        tmp_path / "home",
        [
            "grade",
            "probe",
            "--batch",
            str(folder),
            "--lang",
            "de",
            "--export",
            str(tmp_path / "out"),
            "--lessons",
            str(lessons),
        ],
        tmp_path / "t",
        NO_USER_NAMESPACES,
        UBUNTU_24_04,
    )
    assert out.returncode == 0, out.stderr  # a batch that graded every file
    assert out.stdout.rstrip().splitlines()[-1] == (
        "2 Dateien in einer Box der Stufe teilweise bewertet (es fehlt: eigenes Wurzelverzeichnis, PID-Namespace, "
        "Netzwerk-Namespace)"
    )
    book = (tmp_path / "out/gradebook.csv").read_text(encoding="utf-8").splitlines()
    rows = list(csv.DictReader(io.StringIO("\n".join(book))))
    assert rows and all(row["isolation"] == "partial" for row in rows), book
    feedback = (tmp_path / "out/feedback/ben.md").read_text(encoding="utf-8")
    assert "- Box: Dein Code lief in einer Box, die dieses System nicht ganz schließen konnte" in feedback
    csv_out = _tutor(
        tmp_path / "home",
        ["grade", "probe", "--batch", str(folder), "--format", "csv", "--lessons", str(lessons)],
        tmp_path / "t",
    )
    rows = csv_out.stdout.splitlines()
    assert rows[0].endswith(",isolation,missing_layers") and rows[1].endswith(",strong,"), rows
