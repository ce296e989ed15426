"""The tutor as a JupyterHub app: jupyter-server-proxy starts it in each learner's single-user server.

    pip install "attention-tutor[hub]"     # jupyter-server-proxy, and this module's entry point
    https://HUB/user/NAME/tutor/           # the learner's tutor (and a tile in JupyterLab's launcher)

`setup_tutor()` is the entry point `tutor` of the group `jupyter_serverproxy_servers` (pyproject.toml).
jupyter-server-proxy calls it when the single-user server starts, and on the first request to
`/user/NAME/tutor/` runs its command as that server's user, with that server's environment:

    python -m tutor serve --unix-socket {unix_socket}

- **Who may reach it.** The single-user server lets only its owner (and whom the hub grants access)
  through to `/user/NAME/tutor/`; behind it, the tutor listens on a Unix socket in a folder that
  jupyter-server-proxy made with `mkdtemp` (mode 0700, the user's own), never on a TCP port, which every
  user of the host could reach. `bind_socket` refuses a socket whose folder another user could enter,
  so whoever reaches the socket is the learner the hub logged in, and the tutor takes them as its one
  learner without a link or cookie (tutor.serve.server, "behind a proxy").
- **The learner's home** is the tutor's usual one for the user the server runs as: `--home`, else
  `TUTOR_HOME`, else the platform's user-data folder under the single-user server's `HOME`
  (`~/.local/share/attention-tutor`). Their language: `TUTOR_LANG`, else the locale.
- **Origin.** The browser sends the hub's public origin with the websocket, and jupyter-server-proxy
  passes the request's `Origin` and `Host` on unchanged. Where the hub knows its public address
  (`c.JupyterHub.public_url`), it gives it to the single-user server as `JUPYTERHUB_PUBLIC_URL`, and the
  tutor accepts exactly that origin (`--public-url`); else the origin of the `Host` asked for
  (tutor.serve.server.same_origin). The single-user server checks the same before it proxies.
- **Idle.** Every proxied request and websocket message counts as the single-user server's activity
  (jupyter-server-proxy's `update_last_activity`), which the hub's culler reads. The tutor ends a
  session after 30 minutes without a key (`serve --idle-minutes`; the page says so), so a tab left
  open stops counting and the culler can end the server.
- **Bounds and the box** are `serve`'s: the app in the learner's bounds (cgroups where the tutor may make
  them, else rlimits; the single-user server's own limits from the spawner hold around all of it), and
  grades in the grading box at the level the container allows (docs/box.md: without user namespaces, as
  in most Kubernetes pods, "partial", and each grade says so).

**The exchange** (`TUTOR_EXCHANGE=DIR`, set by the hub for every server): the course folder the
instructor reads with `python -m tutor class DIR`, laid out as a served class (`class.json`, written by
the instructor, and `learners/ID/`). The tutor behind the hub publishes its learner's standing to
`DIR/learners/ID/` (ID: `JUPYTERHUB_USER`) whenever a session ends, and every PUBLISH_EVERY_S while one
runs: a snapshot of the progress store (SQLite's backup, so a half-written store is never seen) and the
current exercise files. It writes only there: an entry that is not a folder of this user's, or a name
outside the roster's alphabet, is left alone and the server's log says why. Who may read an entry is
the deployment's (docs/hub/README.md): each learner's server sees only its own entry (a volume's
`subPath` per user on Kubernetes), or entries are 0700 folders of each learner's uid that only the
instructor as root reads.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sqlite3
import stat
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

LOG = logging.getLogger("tutor.serve")
NAME = "tutor"
ICON = Path(__file__).with_name("hub-icon.svg")
READY_TIMEOUT_S = 60.0  # the first start on a cold host imports torch for the warm processes
PUBLISH_EVERY_S = 300.0  # while a session runs, its learner's entry in the exchange is renewed this often
MAX_PUBLISHED_FILE = 2**20  # a workspace file larger than this is not published (class --grade reads ≤ 1 MB)


def setup_tutor() -> dict[str, Any]:
    """jupyter-server-proxy's description of the tutor (its `ServerProcess` traits)."""
    from tutor.settings import env

    command = [sys.executable, "-m", "tutor", "serve", "--unix-socket", "{unix_socket}"]
    if public := env("JUPYTERHUB_PUBLIC_URL"):  # the user's server's public URL: its origin is the page's
        command += ["--public-url", public.replace("{", "{{").replace("}", "}}")]  # the proxy formats it
    return {
        "command": command,
        "unix_socket": True,  # a socket in a new 0700 folder of the user's: no TCP port at all
        "timeout": READY_TIMEOUT_S,
        "absolute_url": False,  # the tutor sees `/`, `/ws`, `/static/...`; its page addresses them relatively
        "new_browser_tab": True,  # the terminal wants every key, JupyterLab's shortcuts included
        "launcher_entry": {"title": "Attention Tutor", "icon_path": str(ICON), "category": "Other"},
    }


def bind_socket(path: Path) -> socket.socket:
    """A listening Unix socket at `path`, readable and writable by this user only, in a folder that is
    this user's and that no one else may enter (TutorError naming the folder otherwise). A socket left
    at `path` by an earlier run is replaced; any other file there is refused."""
    from tutor.errors import TutorError

    folder = path.parent
    try:
        seen = folder.stat()
    except OSError as error:
        raise TutorError(
            "err.serve.socket_folder", folder=str(folder), why=error.strerror or str(error)
        ) from None
    if seen.st_uid != os.getuid() or seen.st_mode & 0o077 or not stat.S_ISDIR(seen.st_mode):
        why = f"mode {stat.S_IMODE(seen.st_mode):04o}, owner {seen.st_uid}"
        raise TutorError("err.serve.socket_folder", folder=str(folder), why=why)
    try:
        if stat.S_ISSOCK(path.lstat().st_mode):
            path.unlink()
    except FileNotFoundError:
        pass
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listening.bind(str(path))
    except OSError as error:
        listening.close()
        raise TutorError(
            "err.serve.socket_folder", folder=str(folder), why=error.strerror or str(error)
        ) from None
    finally:
        os.umask(old)
    listening.listen(512)
    return listening


def publish(home: Path, exchange: Path, learner_id: str) -> bool:
    """The learner's standing into their own entry `exchange/learners/ID`: the progress store's snapshot
    and the workspace's exercise files, each replaced whole. False (and a log line) where it may not."""
    from tutor.progress.schema import FILE_NAME
    from tutor.serve.roster import ID_PATTERN, LEARNERS_FOLDER

    if not ID_PATTERN.fullmatch(learner_id):
        LOG.warning("not published to the exchange: the user name %r is no learner id", learner_id[:80])
        return False
    entry = exchange / LEARNERS_FOLDER / learner_id
    old = os.umask(0o077)
    try:
        try:
            entry.mkdir(mode=0o700)
        except FileExistsError:
            pass
        seen = entry.lstat()
        if not stat.S_ISDIR(seen.st_mode) or seen.st_uid != os.getuid():
            LOG.warning("not published to the exchange: %s is not a folder of this user's", entry)
            return False
        store = home / FILE_NAME
        if store.is_file():
            fresh = entry / f".{FILE_NAME}.new"
            fresh.unlink(missing_ok=True)
            with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as source:
                with closing(sqlite3.connect(fresh)) as copy:
                    source.backup(copy)
            os.replace(fresh, entry / FILE_NAME)
        _publish_workspace(home / "workspace", entry / "workspace")
    except (OSError, sqlite3.Error) as error:
        LOG.warning("not published to the exchange %s: %s", exchange, error)
        return False
    finally:
        os.umask(old)
    return True


def _publish_workspace(workspace: Path, published: Path) -> None:
    """Each `workspace/EXERCISE/FILE` that is a regular file (no link followed) of at most
    MAX_PUBLISHED_FILE bytes, copied to `published/EXERCISE/FILE` through a temporary file."""
    if not workspace.is_dir() or workspace.is_symlink():
        return
    for exercise in sorted(workspace.iterdir()):
        if exercise.is_symlink() or not exercise.is_dir():
            continue
        for file in sorted(exercise.iterdir()):
            seen = file.lstat()
            if (
                not stat.S_ISREG(seen.st_mode)
                or seen.st_size > MAX_PUBLISHED_FILE
                or file.name.startswith(".")
            ):
                continue
            target = published / exercise.name
            target.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = target / f".{file.name}.new"
            with open(file, "rb") as source, open(fresh, "wb") as copy:
                shutil.copyfileobj(source, copy)
            os.replace(fresh, target / file.name)
