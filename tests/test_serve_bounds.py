"""Each learner of a served class in bounds of their own, and apart from the others by the kernel,
through a real `python -m tutor serve --roster` process: the app's group and its caps, a grade that grows
past the memory cap, the form held to the caps, an app told another learner's path, the rlimits that
hold where no group can be made, and a server run by an instructor who is not root."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.serve_client import SPLIT, Learner, Served, app_processes, open_lab

ROSTER = "id,name,language\nana,Ana Lima,en\nbo,Bo Li,en\ncy,Cy Ng,en\n"


def start(folder: Path, *options: str, **kw) -> Served:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "class.csv").write_text(ROSTER, encoding="utf-8")
    return Served(
        "--roster",
        str(folder / "class.csv"),
        "--dir",
        str(folder / "class"),
        *options,
        folder=folder / "class",
        **kw,
    )


def placement(server: Served) -> str:
    """The kind of bounds the server says it gives (its line on stderr, just after the links)."""
    for _ in range(100):
        if found := re.search(r"\((cgroup2|cgroup1|systemd|rlimits):", server.stderr()):
            return found.group(1)
        time.sleep(0.05)
    return "?"


def app_of(server: Served, learner: str) -> int:
    home = str(server.folder / "learners" / learner).encode()
    (pid,) = [
        p
        for p in app_processes(server.proc.pid)
        if home in Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
    ]
    return pid


def groups(pid: int) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            out[name] = path
    return out


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    server = start(tmp_path_factory.mktemp("bounds"), "--memory-mb", "400", "--tasks", "96", "--cpus", "0.5")
    yield server
    said = server.stop()
    assert "Traceback" not in said, said
    # the server's groups, and every learner's in them, are gone with it
    left = [str(f) for f in Path("/sys/fs/cgroup").glob(f"*/tutor-serve-{server.proc.pid}")]
    left += [str(f) for f in Path("/sys/fs/cgroup").glob(f"tutor-serve-{server.proc.pid}")]
    assert left == [], left


def test_each_learners_app_runs_in_a_group_of_its_own_with_the_caps(klass):
    kind = placement(klass)
    if kind not in ("cgroup1", "cgroup2"):
        pytest.skip(f"this machine gives the server no groups of its own ({kind})")

    async def visit():
        async with Learner(klass.links()["ana"]) as ana:
            await ana.open()
            await ana.wait_for("Multi-head attention")
            return groups(app_of(klass, "ana"))

    found = asyncio.run(visit())
    mount = Path("/sys/fs/cgroup")
    if kind == "cgroup1":
        for name, file, value in (
            ("memory", "memory.limit_in_bytes", str(400 * 2**20)),
            ("pids", "pids.max", "96"),
            ("cpu", "cpu.cfs_quota_us", "50000"),
        ):
            # the CPU's group has two children: the app's, and its forks' with a quarter of its weight
            group = mount / name / found[name].lstrip("/")
            learner = group.parent if name == "cpu" else group
            assert str(learner).endswith(f"/tutor-serve-{klass.proc.pid}/ana"), found
            assert (learner / file).read_text().strip() == value
        assert found["cpu"].endswith("/ana/app")
        # the class's group weighs as its learners' groups together (each as one ordinary process), and
        # the server, in a group of its own in it, as much as all of them: it relays every learner's keys
        klass_group = mount / "cpu" / found["cpu"].lstrip("/").removesuffix("/ana/app")
        learners = [f for f in klass_group.iterdir() if f.is_dir() and f.name != "_server"]
        weight = str(1024 * len(learners))
        assert (klass_group / "cpu.shares").read_text().strip() == weight
        assert (klass_group / "_server" / "cpu.shares").read_text().strip() == weight
        assert str(klass.proc.pid) in (klass_group / "_server" / "cgroup.procs").read_text().split()
        assert [(learner / leaf / "cpu.shares").read_text().strip() for leaf in ("app", "work")] == [
            "1024",
            "256",
        ]
    else:
        folder = mount / found[""].lstrip("/")
        assert folder.name == "learner-ana"
        assert (folder / "memory.max").read_text().strip() == str(400 * 2**20)
        assert (folder / "pids.max").read_text().strip() == "96"


@pytest.mark.slow  # a 700 MB grade ended by the kernel: 18 s
def test_a_grade_that_grows_past_the_memory_cap_ends_alone(klass):
    """Ana's file takes 700 MB as it is imported, with a cap of 400 MiB: the kernel ends that grade's
    worker (in her group: the server moved her judge there), her app goes on, and Bo's keys are answered
    meanwhile."""
    home = klass.folder / "learners" / "ana"
    (home / "workspace" / "split-heads").mkdir(parents=True, exist_ok=True)
    source = (SPLIT / "solution.py").read_text(encoding="utf-8")
    (home / "workspace" / "split-heads" / "split_heads.py").write_text("HOG = b'x' * (700 << 20)\n" + source)

    async def visit():
        async with Learner(klass.links()["ana"], width=120) as ana, Learner(klass.links()["bo"]) as bo:
            await ana.open()
            await bo.open()
            await open_lab(ana)
            await bo.wait_for("Multi-head attention")
            await ana.press("g")
            await ana.wait_for("grading")
            await bo.press("enter")  # Bo reads on while Ana's grade hits her cap
            await bo.wait_for("Why one head is not")
            graded = await ana.wait_for("points", timeout=120)
            kills = oom_kills(app_of(klass, "ana"))
            await ana.press("escape")  # her app still answers
            await ana.wait_for("Multi-head attention", timeout=30)
            return graded, kills

    graded, kills = asyncio.run(visit())
    assert "0/6" in graded, graded
    assert kills is None or kills >= 1  # None: no group counts them here


def oom_kills(pid: int) -> int | None:
    """How often the kernel has ended a process of `pid`'s memory group at its cap."""
    found = groups(pid)
    for folder, name in (
        (Path("/sys/fs/cgroup/memory") / found.get("memory", "-").lstrip("/"), "memory.oom_control"),
        (Path("/sys/fs/cgroup") / found.get("", "-").lstrip("/"), "memory.events"),
    ):
        try:
            for line in (folder / name).read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        except OSError:
            continue
    return None


@pytest.mark.slow  # 6 s: a real server's app at its memory cap
def test_the_form_is_held_to_the_learners_memory_cap(klass):
    async def visit():
        async with Learner(klass.links()["cy"], width=200, height=40) as cy:  # the status on one line
            await cy.open()
            await cy.wait_for("Multi-head attention")
            # the palette opens an experiment by its id; typed into before the course is loaded (home
            # lists the kept cards first), it lists the course's entries once it is
            await cy.press("ctrl+p")
            await cy.wait_for("Search")
            await cy.keys("dk-scaling")
            await cy.wait_for("Why divide by √d_k")
            await cy.press("enter")
            await cy.wait_for("Why divide by √d_k", "r: run")
            await cy.press("o")
            hint = await cy.wait_for("each run may use at most 400 MiB")
            await cy.type("4096")  # dims (the field's text is selected on focus: typing replaces it)
            await cy.press("enter")
            return hint, await cy.wait_for("these settings need about")

    hint, refused = asyncio.run(visit())
    assert "a CPU share of 0.5" in hint
    said = " ".join(re.sub(r"[│▕▏]", " ", refused).split())  # the panel's status, as one line
    # 4 bytes × (3 × 4000 × 4096 + 2 × 256 × 16 × 4096): q, k and their product at the widest d_k, and
    # the softmax rows; the room is the cap less 256 MiB for the app
    assert "may use at most 400 MiB; these settings need about" in said and "315 MiB" in said, said


PROBE = '''
import json, os, pathlib
import tutor.serve.confine as confine

real = confine.confine_app


def probed(home, course, folder, learner):
    """The app's own start-up, then what it can reach of another learner's and of the server's."""
    layers = real(home, course, folder, learner)
    tried = {}
    for path in (f"{folder}/learners/bo/secret.txt", f"{folder}/links.csv", f"{folder}/learners/bo",
                 "/etc/shadow", str(pathlib.Path(course).parent / "README.md")):
        try:
            with open(path, "rb") as fh:
                tried[path] = fh.read(100).decode("utf-8", "replace")
        except IsADirectoryError:
            tried[path] = "listed: " + ",".join(os.listdir(path))
        except OSError as err:
            tried[path] = type(err).__name__
    try:
        pathlib.Path(f"{folder}/learners/bo/planted.py").write_text("x")
        tried["write"] = "written"
    except OSError as err:
        tried["write"] = type(err).__name__
    pathlib.Path(home, "probe.json").write_text(json.dumps({"layers": layers, "tried": tried}))
    os._exit(0)


confine.confine_app = probed
'''


def test_an_app_told_another_learners_path_cannot_open_it(tmp_path):
    """Ana's app, started by the real server as every app is, is told Bo's paths and the server's
    links file right after its start-up confines it (a sitecustomize module on the path the server
    gives apps wraps that start-up): it can neither read, list nor write any of them."""
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('TUTOR_SERVED'):\n    import probe_app\n"
    )
    (probe / "probe_app.py").write_text(PROBE)
    root = tmp_path / "site"
    bo = root / "class" / "learners" / "bo"
    bo.mkdir(parents=True)
    (bo / "secret.txt").write_text("Bo's secret 4711")
    server = start(root, env={"PYTHONPATH": f"{ROOT}{os.pathsep}{probe}"})
    try:

        async def visit():
            async with Learner(server.links()["ana"]) as ana:
                await ana.open()
                found = root / "class" / "learners" / "ana" / "probe.json"
                for _ in range(200):
                    if found.exists():
                        return json.loads(found.read_text())
                    await asyncio.sleep(0.05)
                raise AssertionError("the probe did not run")

        report = asyncio.run(visit())
    finally:
        server.stop()
    assert "Landlock ABI" in " ".join(report["layers"]), report
    tried = report["tried"]
    assert all(value in ("FileNotFoundError", "PermissionError") for value in tried.values()), tried
    assert "4711" not in json.dumps(report)
    assert not (bo / "planted.py").exists() and (bo / "secret.txt").read_text() == "Bo's secret 4711"


def _limits(pid: int) -> dict[str, str]:
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:47].strip() for row in rows}


def test_rlimits_and_a_lower_priority_hold_where_no_group_can_be_made(tmp_path):
    server = start(tmp_path, "--bounds", "rlimits", "--memory-mb", "600")
    try:

        async def visit():
            async with Learner(server.links()["ana"]) as ana:
                await ana.open()
                await ana.wait_for("Multi-head attention")
                pid = app_of(server, "ana")
                return _limits(pid), int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])

        limits, nice = asyncio.run(visit())
    finally:
        said = server.stop()
    assert "(rlimits: memory by RLIMIT_AS, cpu by nice, pids by RLIMIT_NPROC)" in said
    assert limits["Max address space"] == str(600 * 2**20)
    assert limits["Max file size"] == str(64 * 2**20)
    assert nice == 5


APP_BEFORE_ITS_GROUP = """
import asyncio, json, sys, time
from tutor.serve.app_process import AppProcess
from tutor.serve.bounds import Limits, place

async def main(placement):
    bounds = placement.learner("ana")
    bounds.command = lambda argv: argv  # the app runs before its shell has put it in the group
    async def nothing(*_):
        pass
    app = AppProcess([sys.executable, "-c", "import time; time.sleep(120)"], env={}, cwd=sys.argv[1],
                     bounds=bounds, pass_fds=(), on_data=nothing, on_exit=nothing)
    await app.start(80, 24)
    began = time.monotonic()
    try:
        await asyncio.wait_for(app.stop(0.0), 20)
    except TimeoutError:
        pass
    print(json.dumps({"kind": placement.kind, "alive": app.alive, "s": time.monotonic() - began}))
    if app.alive:
        app.proc.kill()
        await app.proc.wait()
    bounds.remove()

placement = place(Limits())
try:
    asyncio.run(main(placement))
finally:
    placement.close()
"""


def test_an_app_not_yet_in_its_learners_group_is_killed_when_its_session_ends(tmp_path):
    """The app joins its learner's group only once the shell in front of it has run, and a session can
    end first (a learner who closes the page at once, on a loaded host): killing the group alone missed
    it, and the session waited for an app that never ended. Run in a child: the server's placement
    moves the process that makes it into a group of the class's."""
    done = subprocess.run(
        [sys.executable, "-c", APP_BEFORE_ITS_GROUP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    stopped = json.loads(done.stdout)
    assert stopped["alive"] is False and stopped["s"] < 5, stopped


NOBODY = 65534
SYSTEM_PYTHON = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")


def python_for_nobody(root: Path) -> str:
    """An interpreter nobody may run, with this test run's packages: this venv's Python lies under
    /root here, which only root may enter. A venv of the system's Python of the same version, whose
    site-packages names this venv's."""
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    site = sysconfig.get_paths()["purelib"]
    (root / "venv" / "lib" / SYSTEM_PYTHON.name / "site-packages" / "tutor-tests.pth").write_text(site + "\n")
    return str(root / "venv" / "bin" / "python")


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root to become nobody")
@pytest.mark.skipif(
    not SYSTEM_PYTHON.exists(), reason=f"no {SYSTEM_PYTHON} to make an interpreter nobody may run"
)
@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
def test_a_server_run_by_an_instructor_who_is_not_root(tmp_path):
    """The same class served by a user without privileges (nobody): no group can be made, so rlimits and
    nice bound each learner; each app is in a user and mount namespace of its own and under Landlock;
    a grade still runs in its box."""
    root = Path(tempfile.mkdtemp(prefix="tutor-nobody-"))
    try:
        python = python_for_nobody(root)
        subprocess.run(["chmod", "-R", "a+rX", str(root)], check=True)
        os.chown(root, NOBODY, NOBODY)
        (root / "class.csv").write_text(ROSTER, encoding="utf-8")
        prefix = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
        server = Served(
            "--roster",
            str(root / "class.csv"),
            "--dir",
            str(root / "class"),
            folder=root / "class",
            prefix=prefix,
            env={"HOME": str(root)},
            python=python,
        )
        try:

            async def visit():
                async with Learner(server.links()["ana"], width=120) as ana:
                    await ana.open()
                    await open_lab(ana)
                    pid = app_of(server, "ana")
                    spaces = {n: os.readlink(f"/proc/{pid}/ns/{n}") for n in ("user", "mnt")}
                    ours = {n: os.readlink(f"/proc/{server.proc.pid}/ns/{n}") for n in ("user", "mnt")}
                    status = Path(f"/proc/{pid}/status").read_text()
                    await ana.press("g")
                    graded = await ana.wait_for("points", timeout=120)
                    return spaces, ours, status, graded

            spaces, ours, status, graded = asyncio.run(visit())
        finally:
            said = server.stop()
        assert "(rlimits:" in said
        assert spaces["user"] != ours["user"] and spaces["mnt"] != ours["mnt"]
        assert re.search(r"NoNewPrivs:\s+1", status)
        assert "0/6 points" in graded
        home = root / "class" / "learners" / "ana"
        assert home.stat().st_uid == NOBODY and stat.S_IMODE(home.stat().st_mode) == 0o700
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def _grade(learner: Learner, refused: str | None = None) -> str:
    """Press g and wait for the verdict that replaces "grading…", or for `refused`: a refusal can come back
    before any frame with "grading…" reaches the page."""
    await learner.press("g")
    if refused is not None:
        return await learner.wait_for(refused)
    await learner.wait_for("grading…")
    deadline = time.monotonic() + 120
    while "grading…" in (text := learner.text()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return text


def test_a_learner_whose_grades_keep_hitting_the_memory_cap_waits_before_the_next(klass):
    """Cy's file takes 700 MB as it is imported (the cap: 400 MiB). The kernel ends her first two grades
    at the cap; the third is not started: the server makes her wait (5 s after two such ends in a row),
    and her app says why, in her words, instead of paying the host another cap's worth of reclaim."""
    home = klass.folder / "learners" / "cy"
    (home / "workspace" / "split-heads").mkdir(parents=True, exist_ok=True)
    source = (SPLIT / "solution.py").read_text(encoding="utf-8")
    (home / "workspace" / "split-heads" / "split_heads.py").write_text("HOG = b'x' * (700 << 20)\n" + source)

    async def visit():
        async with Learner(klass.links()["cy"], width=120, height=40) as cy:
            await cy.open()
            await open_lab(cy)
            if oom_kills(app_of(klass, "cy")) is None:
                pytest.skip("no memory group counts the kernel's kills here (the rlimits kind)")
            said = [await _grade(cy), await _grade(cy)]
            said.append(await _grade(cy, refused="ended your last 2 runs at this session's memory cap"))
            return said, oom_kills(app_of(klass, "cy"))

    (first, second, third), kills = asyncio.run(visit())
    assert "0/6" in first and "0/6" in second, (first, second)
    assert kills == 2, kills  # the third grade's judge was never forked
    assert "ended your last 2 runs at this session's memory cap" in third, third
    assert "the next can start in 5 s" in third, third


@pytest.mark.parametrize(
    "looks,waits",
    [
        # (kills counted by the group, a fork still running) at each request, and the waits given
        ([(0, False), (1, False), (2, False)], [0, 0, 5]),  # the second end in a row: 5 s
        ([(0, False), (1, False), (2, False), (3, False)], [0, 0, 5, 10]),  # each after it doubles
        ([(0, False), (1, False), (1, False), (2, False)], [0, 0, 0, 0]),  # one ended on its own between
        ([(0, False), (0, True), (1, True), (2, False)], [0, 0, 0, 5]),  # two at once, both killed
    ],
)
def test_cooling_waits_after_two_ends_at_the_cap_in_a_row_and_doubles(looks, waits):
    from tutor.serve.forks import Cooling

    cooling, got, now = Cooling(), [], 0.0
    for kills, running in looks:
        wait = cooling.wait_s(kills, running, now)
        got.append(wait)
        if wait == 0:
            cooling.forked = True  # the server forks
        now += 100.0  # long after any wait: each look sees only what came before it
    assert [round(w) for w in got] == waits


def test_cooling_counts_down_and_ends_with_its_wait():
    from tutor.serve.forks import Cooling

    cooling = Cooling()
    for kills in (0, 1):
        assert cooling.wait_s(kills, False, 0.0) == 0
        cooling.forked = True
    assert cooling.wait_s(2, False, 0.0) == 5.0
    assert cooling.wait_s(2, False, 3.0) == 2.0  # still waiting; looks meanwhile change nothing
    assert cooling.wait_s(2, False, 5.0) == 0.0
