"""A real JupyterHub on this machine, for tests and benchmarks: the one-machine recipe
(docs/hub/jupyterhub_config.py) loaded as it is, with only what a test machine cannot have overridden.

    hub = Hub(tmp_path, users=("ana", "bo"))    # jupyterhub + configurable-http-proxy, on free ports
    page = hub.login(context, "ana")            # a Playwright page, logged in: the server spawns
    hub.stop()

The overrides (the recipe's lines they replace are "untested here" in docs/hub/README.md):
- **Logins:** DummyAuthenticator with one password, for the listed users only (the recipe: LTI 1.3).
- **Spawner:** SimpleLocalProcessSpawner: every learner's server runs as the hub's user, with a home of
  its own under `ROOT/homes` (the recipe: SystemdSpawner with a uid, memory and CPU per learner). So
  the hub keeps learners apart here by its logins and its proxy only; the uid that guards the tutor's
  socket folder is tested by asking another user to connect (tests/test_hub.py).
- **Addresses:** the proxy, its API and the hub on free ports of 127.0.0.1, `public_url` the proxy's.
- **The culler** ends a server after `cull_s` seconds idle (the recipe: an hour).

configurable-http-proxy comes from npm: `.hub-node/node_modules/.bin` in the checkout (`npm install
--prefix .hub-node configurable-http-proxy`, as .ci/run does), else the PATH's.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.conftest import ROOT

RECIPE = ROOT / "docs/hub/jupyterhub_config.py"
PASSWORD = "tutor-hub-test"
CHP = ROOT / ".hub-node/node_modules/.bin/configurable-http-proxy"


def chp() -> str | None:
    return str(CHP) if CHP.exists() else shutil.which("configurable-http-proxy")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    def __init__(
        self,
        root: Path,
        users: tuple[str, ...],
        cull_s: int = 3600,
        environment: dict[str, str] | None = None,
    ) -> None:
        self.root, self.users = root, users
        root.mkdir(parents=True, exist_ok=True)
        port, hub_port, api_port = free_port(), free_port(), free_port()
        self.base = f"http://127.0.0.1:{port}"
        singleuser = Path(sys.executable).with_name("jupyterhub-singleuser")
        config = root / "jupyterhub_config.py"
        config.write_text(
            f"""
c = get_config()
load_subconfig({str(RECIPE)!r})
c.JupyterHub.bind_url = {self.base!r}
c.JupyterHub.public_url = {self.base!r}
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{chp()!r}]
c.ConfigurableHTTPProxy.pid_file = {str(root / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{root / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(root / "cookie_secret")!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allow_all = False
c.Authenticator.allowed_users = {set(users)!r}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(root / "homes")!r} + "/{{username}}"
c.Spawner.cmd = [{str(singleuser)!r}]
c.Spawner.args = ["--ServerApp.allow_root=True"] if {os.geteuid() == 0!r} else []
c.Spawner.environment = {{**c.Spawner.environment, **{dict(environment or {})!r}}}
c.JupyterHub.last_activity_interval = 5
c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] = "5"
c.JupyterHub.services[0]["command"] = [{sys.executable!r}, "-m", "jupyterhub_idle_culler",
                                       "--timeout={cull_s}", "--cull-every=5"]
""",
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TUTOR_", "JUPYTER"))}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        self.log = (root / "hub.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=root,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("the hub stopped:\n" + self.log_text())
            try:
                with urllib.request.urlopen(self.base + "/hub/health", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise AssertionError("the hub did not answer within 60 s:\n" + self.log_text())

    def home(self, user: str) -> Path:
        """The single-user server's home (HOME): the tutor keeps its progress below it."""
        return self.root / "homes" / user

    def log_text(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return (self.root / "hub.log").read_text(encoding="utf-8", errors="replace")

    def login(self, context, user: str, then: str = "/hub/home"):
        """A page of `context` logged in as `user` (the hub spawns their server on the way)."""
        page = context.new_page()
        page.goto(self.base + "/hub/login")
        page.fill("#username_input", user)
        page.fill("#password_input", PASSWORD)
        page.click("#login_submit")
        page.wait_for_url(lambda url: "/hub/login" not in url, timeout=60_000)
        return page

    def stop(self) -> None:
        """The hub, its proxy and every server it spawned (its process group and theirs)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # the hub stops its servers (cleanup_servers)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
