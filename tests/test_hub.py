"""The tutor as a JupyterHub app: a real hub on this machine (tests/hub_helpers.py: the one-machine recipe
docs/hub/jupyterhub_config.py, configurable-http-proxy from npm, jupyter-server-proxy starting the tutor
from its entry point), two learners in Debian's chromium, and the instructor's `class` over the exchange.

Run with `python -m pytest -q -m hub` (left out of the default run). It needs the hub extras
(`pip install ".[test,hub]"`), configurable-http-proxy (`npm install --prefix .hub-node
configurable-http-proxy`) and chromium (`apt-get install chromium fonts-wqy-microhei`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.browser_helpers import CHROMIUM, TerminalView, launch
from tests.conftest import PYTHON, ROOT, run_tutor_env
from tests.hub_helpers import Hub, chp
from tests.ui_helpers import right_answer

pytestmark = pytest.mark.hub

pytest.importorskip("jupyterhub")
server_proxy = pytest.importorskip("jupyter_server_proxy.config")
playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)
if chp() is None:
    pytest.skip(
        "configurable-http-proxy is not installed (npm install --prefix .hub-node ...)",
        allow_module_level=True,
    )

VIEWPORT = {"width": 1000, "height": 640}
SOLUTION = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads/solution.py"
LEARNERS = ("ana", "bo")


def test_the_hub_extra_registers_the_tutor_as_a_proxied_app_on_a_unix_socket():
    (tutor,) = [p for p in server_proxy.get_entrypoint_server_processes() if p.name == "tutor"]
    assert tutor.command[1:6] == ["-m", "tutor", "serve", "--unix-socket", "{unix_socket}"], tutor.command
    assert tutor.unix_socket is True and not tutor.port  # no TCP port any local user could reach
    assert tutor.launcher_entry.title == "Attention Tutor" and tutor.launcher_entry.path_info == "tutor/"
    assert Path(tutor.launcher_entry.icon_path).read_text(encoding="utf-8").startswith("<svg")
    assert tutor.absolute_url is False  # the tutor sees `/`: its page addresses everything relatively


def test_the_kubernetes_recipe_says_what_the_tested_one_machine_recipe_says():
    """config.yaml cannot run here (no cluster): its values are held to jupyterhub_config.py's, which the
    hub below runs."""
    import yaml
    from traitlets.config.loader import PyFileConfigLoader

    tested = PyFileConfigLoader("jupyterhub_config.py", str(ROOT / "docs/hub")).load_config()
    values = yaml.safe_load((ROOT / "docs/hub/config.yaml").read_text(encoding="utf-8"))
    user, lti = values["singleuser"], values["hub"]["config"]["LTI13Authenticator"]
    assert user["defaultUrl"] == tested.Spawner.default_url == "/tutor/"
    exchange = tested.Spawner.environment["TUTOR_EXCHANGE"]
    assert user["extraEnv"]["TUTOR_EXCHANGE"] == exchange
    (mount,) = user["storage"]["extraVolumeMounts"]
    assert (
        mount["mountPath"] == f"{exchange}/learners/{{username}}"
        and mount["subPath"] == "learners/{username}"
    )
    assert user["memory"]["limit"] == tested.SystemdSpawner.mem_limit
    assert user["cpu"]["limit"] == tested.SystemdSpawner.cpu_limit
    assert values["cull"]["enabled"] and values["cull"]["timeout"] == 3600
    assert "--timeout=3600" in tested.JupyterHub.services[0]["command"]
    for key in ("issuer", "authorize_url", "jwks_endpoint", "client_id", "username_key"):
        assert lti[key] == tested.LTI13Authenticator[key], key
    assert (
        values["hub"]["config"]["JupyterHub"]["authenticator_class"] == tested.JupyterHub.authenticator_class
    )


@pytest.fixture
def socket_server(tmp_path):
    """`serve --unix-socket` as jupyter-server-proxy starts it, in a 0700 folder of this user's."""
    folder = tmp_path / "sock"
    folder.mkdir(mode=0o700)
    path = folder / "socket"
    env = {**run_tutor_env(tmp_path / "home"), "JUPYTERHUB_PUBLIC_URL": "https://hub.example.org/user/ana/"}
    command = [
        PYTHON,
        "-m",
        "tutor",
        "serve",
        "--unix-socket",
        str(path),
        "--public-url",
        "https://hub.example.org/user/ana/",
    ]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert "behind the proxy" in first, first + proc.stderr.read()
    yield path
    proc.terminate()
    proc.wait(timeout=30)


def _handshake(path: Path, origin: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(
            b"GET /ws HTTP/1.1\r\nHost: hub.example.org\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + f"Origin: {origin}\r\n\r\n".encode()
        )
        return s.recv(200)


def test_behind_the_hub_the_websocket_opens_for_the_hubs_origin_only(socket_server):
    """jupyter-server-proxy passes the browser's Origin on: the hub's public origin opens the app, a page
    of any other origin (another port, a sibling host) does not."""
    assert _handshake(socket_server, "https://hub.example.org").startswith(b"HTTP/1.1 101")
    for other in ("https://evil.example.org", "https://hub.example.org:8443", "http://hub.example.org.evil"):
        assert _handshake(socket_server, other).startswith(b"HTTP/1.1 403"), other


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to try the socket as another user")
def test_no_other_user_of_the_host_can_reach_a_learners_tutor(socket_server):
    """The socket's folder is its user's, mode 0700 (as jupyter-server-proxy's mkdtemp makes it): user
    nobody cannot connect, where a TCP port on 127.0.0.1 would have let them."""
    assert (socket_server.parent.stat().st_mode & 0o777) == 0o700
    pid = os.fork()  # the child becomes user nobody and tries to connect (no Python of /root to run)
    if pid == 0:
        code = 3
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(socket_server))
            code = 1
        except PermissionError:
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "user nobody reached the learner's tutor"
    with socket.socket(socket.AF_UNIX) as s:  # its own user does
        s.connect(str(socket_server))


def test_a_socket_in_a_folder_others_may_enter_is_refused(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    done = subprocess.run(
        [PYTHON, "-m", "tutor", "serve", "--unix-socket", str(folder / "s")],
        env=run_tutor_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"cannot listen in {folder}" in done.stderr and "mode 0755" in done.stderr
    assert "Traceback" not in done.stderr and not (folder / "s").exists()


def test_a_user_name_that_is_no_learner_id_publishes_nothing_and_says_so(tmp_path):
    folder = tmp_path / "sock"
    folder.mkdir(mode=0o700)
    env = {
        **run_tutor_env(tmp_path / "home"),
        "JUPYTERHUB_USER": "ana@uni.example",
        "TUTOR_EXCHANGE": str(tmp_path),
    }
    proc = subprocess.Popen(
        [PYTHON, "-m", "tutor", "serve", "--unix-socket", str(folder / "socket")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert "behind the proxy" in first and "published" not in first
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"The user name ana@uni.example cannot name an entry of the exchange {tmp_path}" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give the entry to another user")
def test_publish_writes_only_into_the_learners_own_entry(tmp_path):
    from tutor.serve.hub import publish

    home, exchange = tmp_path / "home", tmp_path / "exchange"
    (home / "workspace/split-heads").mkdir(parents=True)
    (home / "workspace/split-heads/split_heads.py").write_text("x = 1\n")
    (home / "workspace/split-heads/link.py").symlink_to("/etc/passwd")
    (exchange / "learners/bo").mkdir(parents=True)
    os.chown(exchange / "learners/bo", 65534, 65534)  # someone else made bo's entry first
    assert publish(home, exchange, "bo") is False and list((exchange / "learners/bo").iterdir()) == []
    assert publish(home, exchange, "ana") is True
    entry = exchange / "learners/ana"
    assert (entry.stat().st_mode & 0o777) == 0o700
    assert (entry / "workspace/split-heads/split_heads.py").read_text() == "x = 1\n"
    assert not (entry / "workspace/split-heads/link.py").exists()  # a link is never followed
    assert publish(home, exchange, "../ana") is False


# --- a real hub --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    exchange = root / "exchange"  # the instructor's course folder: their roster, and a place per learner
    (exchange / "learners").mkdir(parents=True)
    (exchange / "learners").chmod(0o1733)  # learners may add their own entry; none may list the others
    roster = [{"id": name, "name": name.title(), "language": "en"} for name in LEARNERS]
    (exchange / "class.json").write_text(json.dumps({"learners": roster}), encoding="utf-8")
    started = Hub(root, LEARNERS, environment={"TUTOR_EXCHANGE": str(exchange)})
    started.exchange = exchange
    yield started
    started.stop()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


def _lesson():
    from tutor.course import open_course

    return next(
        lesson for lesson in open_course(ROOT / "tutor" / "lessons").lessons if lesson.id == "multi-head"
    )


def _answer(view: TerminalView, question) -> None:
    view.wait_for(question.prompt["en"].replace("`", "")[:40], timeout=60)  # its Markdown shown
    view.type(right_answer(question))
    view.press("Enter")
    view.page.wait_for_timeout(300)
    view.press("Enter")  # on, past the feedback


def _open_tutor(hub: Hub, browser, user: str) -> TerminalView:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    view = TerminalView(page)
    page.goto(hub.base + "/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", "tutor-hub-test")
    page.click("#login_submit")  # the hub spawns the server, which opens on its default_url: the tutor
    view.wait_for("Attention Tutor", "Multi-head attention", timeout=120)
    assert page.url == f"{hub.base}/user/{user}/tutor/"
    return view


def _answer_and_grade(view: TerminalView, home: Path) -> None:
    """The learner opens the lesson's exercise, answers its two predictions, saves the solution (as an
    editor in the single-user server would) and the tutor grades it; then answers the lesson's first
    quiz question."""
    lesson = _lesson()
    view.press("x")
    for question in next(ex for ex in lesson.exercises if ex.id == "split-heads").predict:
        _answer(view, question)
    view.wait_for("e: edit here", timeout=60)
    (home / "workspace/split-heads/split_heads.py").write_text(SOLUTION.read_text(encoding="utf-8"))
    view.wait_for("All checks pass (6/6)", timeout=120)
    view.press("F1")
    view.wait_for("Attention Tutor", "Exercises", timeout=30)
    view.press("q")
    view.wait_for("Quiz: Multi-head attention", timeout=30)
    _answer(view, lesson.quiz[0])
    view.wait_for("2/17", timeout=30)


def test_two_learners_each_answer_and_grade_in_their_own_tutor_and_the_instructor_sees_both(hub, browser):
    views = {user: _open_tutor(hub, browser, user) for user in LEARNERS}
    homes = {user: hub.home(user) / ".local/share/attention-tutor" for user in LEARNERS}
    for user, view in views.items():
        _answer_and_grade(view, homes[user])
    for view in views.values():
        view.page.context.close()  # the sessions end: each tutor publishes its learner's entry
    entries = {user: hub.exchange / "learners" / user / "progress.sqlite3" for user in LEARNERS}
    deadline = time.monotonic() + 60
    while not all(e.exists() for e in entries.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
    done = subprocess.run(
        [PYTHON, "-m", "tutor", "class", str(hub.exchange), "--json"],
        env=run_tutor_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    standing = {row["id"]: row for row in json.loads(done.stdout)["learners"]}
    for user in LEARNERS:
        assert standing[user]["state"] == "ok", standing[user]
        assert standing[user]["quiz"]["answered"] == 1 and standing[user]["quiz"]["correct"] == 1
        assert standing[user]["exercises"]["split-heads"]["passed"] is True
    graded = subprocess.run(
        [PYTHON, "-m", "tutor", "class", str(hub.exchange), "--grade", "--jobs", "1"],
        env=run_tutor_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert graded.returncode == 0, graded.stderr
    assert "ana/split_heads.py" in graded.stdout and "bo/split_heads.py" in graded.stdout


def test_a_learner_is_refused_at_the_other_learners_tutor(hub, browser):
    """Bo's tutor runs; Ana, logged in, gets the hub's 403 for his page and cannot open his websocket."""
    _open_tutor(hub, browser, "bo").page.context.close()
    context = browser.new_context(viewport=VIEWPORT)
    page = hub.login(context, "ana")
    reply = page.goto(f"{hub.base}/user/bo/tutor/")
    assert (
        reply.status == 403
        and "You do not have permission to access Server at /user/bo/" in page.inner_text("body")
    )
    assert page.locator(".xterm-helper-textarea").count() == 0
    outcome = page.evaluate(
        """(url) => new Promise((done) => {
            const socket = new WebSocket(url);
            socket.onopen = () => done("open");
            socket.onerror = () => done("refused");
        })""",
        hub.base.replace("http:", "ws:") + "/user/bo/tutor/ws",
    )
    assert outcome == "refused"
    context.close()


def test_the_tutors_keys_keep_the_server_from_the_culler_and_it_is_culled_once_they_stop(tmp_path, browser):
    """jupyterhub-idle-culler (the recipe's service) at 15 s: 30 s of keys in the tutor keep the server,
    which the culler ends within a minute once the tab is closed."""
    hub = Hub(tmp_path / "hub", ("ana",), cull_s=15)
    try:
        view = _open_tutor(hub, browser, "ana")
        for _ in range(10):  # ~30 s, twice the timeout, a key every ~3 s
            view.press("ArrowDown" if _ % 2 else "ArrowUp")
            view.page.wait_for_timeout(3000)
        assert "Culling server ana" not in hub.log_text()
        view.press("ArrowDown")
        view.wait_for("Attention Tutor")
        view.page.context.close()
        deadline = time.monotonic() + 90
        while "Culling server ana" not in hub.log_text() and time.monotonic() < deadline:
            time.sleep(1)
        assert "Culling server ana" in hub.log_text(), hub.log_text()[-3000:]
    finally:
        hub.stop()
