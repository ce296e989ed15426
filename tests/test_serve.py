"""`python -m tutor serve`: the roster, the links, and the door, attacked through a real server process.

Each server here is the real command in a child process on a free port; requests are real HTTP and
websocket connections (aiohttp's client). Sessions that pass the door start the real app under
textual-serve's web driver. The browser itself is in tests/test_serve_browser.py.
"""

from __future__ import annotations

import asyncio
import csv
import json
import re
import stat
from pathlib import Path

import aiohttp
import pytest
from yarl import URL

from tests.conftest import ROOT, tutor_here
from tests.serve_client import Learner, Served, app_processes
from tutor.serve import roster

ROSTER = "id,name,language\nana,Ana Lima,de\nbo,Bo Li,zh\n"


@pytest.fixture
def klass(tmp_path):
    (tmp_path / "class.csv").write_text(ROSTER, encoding="utf-8")
    folder = tmp_path / "class"
    server = Served(
        "--roster",
        str(tmp_path / "class.csv"),
        "--dir",
        str(folder),
        "--idle-minutes",
        "0.02",
        "--max-sessions",
        "1",
        folder=folder,
    )
    yield server
    server.stop()


async def _get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as reply:
        return reply.status, (await reply.read()).decode("utf-8", "replace")


def get(url: str) -> tuple[int, str]:
    return asyncio.run(_get(url))


async def _enter(link: str) -> tuple[int, str]:
    async with Learner(link) as learner:
        return await learner.enter()


# --- the roster --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, says",
    [
        ("id,name\n../evil,E\n", "line 2: the id ../evil cannot name a learner's folder"),
        ("id,name\n.hidden,E\n", "line 2: the id .hidden cannot name"),
        ("id,name\na/b,E\n", "line 2: the id a/b cannot name"),
        ("id,name\n" + "x" * 65 + ",E\n", "cannot name a learner's folder"),
        ("id,name,language\nana,A,fr\n", "line 2: the language fr is not one of en, de, zh"),
        ("id,name\nana,A\nAna,B\n", "line 3: the id Ana is already on line 2"),
        ("name,mail\nA,a@x\n", "the first line must name the columns id,name[,language]"),
        ("id,name\nana\n", "line 2: expected 2 cells, as in the header, got 1"),
        ("id,name\n", "names no learner"),
    ],
)
def test_a_roster_that_could_name_a_wrong_folder_is_refused_at_its_line(tmp_path, text, says):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    done = tutor_here("serve", "--roster", str(path), "--dir", str(tmp_path / "class"))
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "class").exists()  # nothing made for a roster refused


def test_every_id_the_roster_takes_names_a_folder_directly_under_learners(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("id,name\nA-1,x\nb_2,y\n9,z\n", encoding="utf-8")
    for learner in roster.read_learners(path):
        home = learner.home(tmp_path).resolve()
        assert home.parent == (tmp_path / "learners").resolve() and home.name == learner.id


def test_links_carry_128_bit_tokens_kept_for_the_owner_only_and_again_after_a_restart(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    learners, fresh = roster.give_tokens(tmp_path, roster.read_learners(path), valid_days=30)
    assert len(fresh) == 2 and len({learner.token for learner in learners}) == 2
    assert all(len(learner.token) == 22 for learner in learners)  # 16 bytes, base64 without padding
    links = roster.write_links(tmp_path, learners, "http://h:1")
    assert stat.S_IMODE(links.stat().st_mode) == 0o600
    again, fresh = roster.give_tokens(tmp_path, roster.read_learners(path), valid_days=30)
    assert fresh == [] and [a.token for a in again] == [a.token for a in learners]
    renewed, fresh = roster.give_tokens(tmp_path, roster.read_learners(path), valid_days=30, renew=True)
    assert len(fresh) == 2 and not {a.token for a in renewed} & {a.token for a in learners}
    assert roster.token_owner(learners, learners[1].token) == learners[1]
    assert roster.token_owner(learners, learners[1].token[:-1] + "A") in (None, learners[1])
    assert roster.token_owner(learners, "") is None


# --- the door ----------------------------------------------------------------------------------------


def test_the_single_learner_server_lets_in_only_its_printed_link(tmp_path):
    server = Served(home=tmp_path / "home")
    try:
        assert server.single_link and server.single_link.startswith(server.base + "/learn/")
        status, page = asyncio.run(_enter(server.single_link))
        assert status == 200 and "textual.js" in page
        # everything the page loads comes from this server: no address of another host in it
        assert not re.search(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}", page), page
        for url in (
            server.base + "/",
            server.base + "/learn/",
            server.base + "/learn/" + "A" * 22,
            server.single_link[:-1],
            server.single_link + "x",
        ):
            status, text = get(url)
            assert status in (403, 404), (url, status)
            assert "textual.js" not in text
    finally:
        said = server.stop()
    token = server.single_link.rsplit("/", 1)[1]
    assert said.count(token) == 1  # printed once, never logged


def test_static_files_are_served_and_nothing_beside_them(klass):
    status, _ = get(klass.base + "/static/js/textual.js")
    assert status == 200
    status, _ = get(klass.base + "/static/fonts/RobotoMono-VariableFont_wght.ttf")
    assert status == 200
    secret = klass.links()["ana"].rsplit("/", 1)[1]
    for path in (
        "/static/../../links.csv",
        "/static/%2e%2e/%2e%2e/links.csv",
        "/static/..%2f..%2flinks.csv",
        "/learn/%2e%2e/links.csv",
        "/learners/ana/progress.db",
        "/links.csv",
        "/static/",
    ):
        status, text = get(klass.base + path)
        assert status in (403, 404), (path, status)
        assert secret not in text


async def _refused_ws(base: str, cookie: str | None = None) -> int:
    """The status a websocket to /learn/ws gets (with `cookie` as the learner's, if given)."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        if cookie is not None:
            http.cookie_jar.update_cookies({cookie_name(base): cookie}, URL(base + "/learn/"))
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(base.replace("http:", "ws:") + "/learn/ws")
        return refused.value.status


def cookie_name(base: str) -> str:
    return "tutor-" + base.rsplit(":", 1)[1]


def test_a_wrong_or_expired_token_opens_no_session(klass, tmp_path):
    assert asyncio.run(_refused_ws(klass.base)) == 403
    assert asyncio.run(_refused_ws(klass.base, "x" * 22)) == 403
    status, text = get(klass.base + "/learn/" + "x" * 22)
    assert status == 403 and "This link does not open the tutor" in text
    # a link past its end: the expired page, in the browser's language
    links = klass.folder / roster.LINKS_FILE
    rows = list(csv.DictReader(links.open(encoding="utf-8")))
    klass.stop()
    rows[0]["expires"] = "2020-01-01T00:00:00+00:00"
    with links.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    again = Served("--roster", str(tmp_path / "class.csv"), "--dir", str(klass.folder), folder=klass.folder)
    try:
        link = again.links()["ana"]
        assert link.rsplit("/", 1)[1] == rows[0]["link"].rsplit("/", 1)[1]  # the same link, still expired

        async def page_in_german() -> tuple[int, str]:
            async with aiohttp.ClientSession(headers={"Accept-Language": "de-DE,de;q=0.9"}) as http:
                async with http.get(link.replace(link.split("/learn/")[0], again.base)) as reply:
                    return reply.status, await reply.text()

        status, text = asyncio.run(page_in_german())
        assert status == 403 and "Dieser Link ist abgelaufen" in text
        assert asyncio.run(_refused_ws(again.base, rows[0]["token"])) == 403
    finally:
        again.stop()


async def _handshake(link: str, origin: str | None) -> int:
    """The status of a websocket handshake to /learn/ws by `link`'s learner (cookie set), sending
    `origin` as the page's Origin (None: none at all); 101 when it opened, closed again at once."""
    base = link.split("/learn/")[0]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(link, allow_redirects=False) as reply:
            assert reply.status == 200
        try:
            ws = await http.ws_connect(base.replace("http:", "ws:") + "/learn/ws", origin=origin)
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status
        await ws.close()
        return 101


def test_a_learners_websocket_opens_only_for_the_page_of_the_servers_own_origin(klass):
    """A page of any other origin holding the learner's cookie (another port of this host, another
    host name of the same site) cannot open, read or type into the learner's app."""
    link = klass.links()["ana"]
    port = int(klass.base.rsplit(":", 1)[1])
    for foreign in (
        f"http://127.0.0.1:{port + 1}",
        f"http://localhost:{port}",
        "https://evil.example",
        "null",
        None,
    ):
        assert asyncio.run(_handshake(link, foreign)) == 403, foreign
    assert asyncio.run(_handshake(link, klass.base)) == 101


def test_renew_revokes_every_old_link_and_the_links_it_prints_work(klass, tmp_path):
    old = klass.links()
    klass.stop()
    again = Served(
        "--roster", str(tmp_path / "class.csv"), "--dir", str(klass.folder), "--renew", folder=klass.folder
    )
    try:
        printed_lines = [again.proc.stdout.readline() for _ in range(3)]  # ana's link, bo's, where kept
        new = again.links()
        for learner in ("ana", "bo"):
            old_link = old[learner].replace(klass.base, again.base)
            assert new[learner] != old_link
            assert get(old_link)[0] == 403
            status, page = asyncio.run(_enter(new[learner]))
            assert status == 200 and "textual.js" in page
    finally:
        again.stop()
    printed = set(re.findall(r"http://\S+/learn/([\w-]+)", "".join(printed_lines)))
    assert printed == {link.rsplit("/", 1)[1] for link in new.values()}


def test_a_class_served_from_the_folder_that_holds_its_dir_starts(tmp_path):
    """`cd ~/course && python -m tutor serve --roster class.csv --dir class`: the working folder is not
    something a learner's app reads, so a class folder inside it is fine."""
    (tmp_path / "class.csv").write_text(ROSTER, encoding="utf-8")
    server = Served("--roster", "class.csv", "--dir", "class", folder=tmp_path / "class", cwd=tmp_path)
    try:
        status, page = asyncio.run(_enter(server.links()["bo"]))
        assert status == 200 and "textual.js" in page
    finally:
        server.stop()


def test_a_session_runs_the_app_ends_when_idle_and_the_cap_holds(klass):
    links = klass.links()

    async def scenario():
        async with Learner(links["ana"]) as ana, Learner(links["bo"]) as bo:
            await ana.open()

            async def working() -> None:  # keys she types: her session is not idle while bo knocks
                while True:
                    await ana.send("stdin", "\x1b[24~")  # F12, bound to nothing
                    await asyncio.sleep(0.2)

            typing = asyncio.create_task(working())
            await ana.wait_for("Mehrköpfige Attention")  # her app runs: the class (cap 1) is full
            status, text = await bo.enter()
            typing.cancel()
            assert status == 503 and "The class is full right now" in text
            code = await ana.wait_closed()  # idle for 0.02 min: the server ends the session
            for _ in range(100):  # a place is free again once ana's app has ended
                status, _ = await bo.enter()
                if status == 200:
                    break
                await asyncio.sleep(0.05)
            return code, ana.received, status

    code, received, status = asyncio.run(scenario())
    assert code == 4000 and received > 1000  # the app drew its screen before the session ended
    assert (klass.folder / "learners" / "ana").is_dir() and not (klass.folder / "learners" / "bo").exists()
    assert status == 200


# --- one learner, never another's home ----------------------------------------------------------------


def test_each_session_runs_with_its_learners_home_only(tmp_path, monkeypatch):
    """Two learners at once: each app process is bound to its own home (argument, working folder), and
    has no variable that could point it elsewhere or start an editor on the server."""
    monkeypatch.setenv("VISUAL", "vi")  # the server's own (tests start without them: conftest)
    monkeypatch.setenv("EDITOR", "nano")
    (tmp_path / "class.csv").write_text(ROSTER, encoding="utf-8")
    folder = tmp_path / "class"
    server = Served("--roster", str(tmp_path / "class.csv"), "--dir", str(folder), folder=folder)
    links = server.links()

    async def both_open():
        learners = [Learner(links[who]) for who in ("ana", "bo")]
        for learner in learners:
            await learner.__aenter__()
            await learner.open()
        seen: dict[str, dict] = {}
        for _ in range(400):
            await asyncio.sleep(0.05)
            for pid in app_processes(server.proc.pid):
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    cwd = Path(f"/proc/{pid}/cwd").resolve()
                    env = dict(
                        item.split(b"=", 1)
                        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                        if b"=" in item
                    )
                except OSError:
                    continue
                if b"tutor" in argv and b"--home" in argv:
                    home = Path(argv[argv.index(b"--home") + 1].decode())
                    seen[home.name] = {"home": home, "cwd": cwd, "env": env, "argv": argv}
            if len(seen) == 2:
                break
        for learner in learners:
            await learner.__aexit__()
        return seen

    try:
        seen = asyncio.run(both_open())
    finally:
        server.stop()
    assert set(seen) == {"ana", "bo"}
    for who, proc in seen.items():
        assert proc["home"] == folder / "learners" / who and proc["cwd"] == proc["home"].resolve()
        assert not {b"TUTOR_HOME", b"VISUAL", b"EDITOR", b"TUTOR_LANG"} & set(proc["env"])
        assert proc["env"][b"HOME"] == str(proc["home"]).encode()  # none of the server's variables
        lang = {"ana": b"de", "bo": b"zh"}[who]
        assert proc["argv"][proc["argv"].index(b"--lang") + 1] == lang


def test_a_grade_in_one_learners_home_cannot_read_or_change_anothers(tmp_path):
    """Ana's exercise file, graded in Ana's home, reaches for Bo's store and folder: the box has no such
    path, so Bo's files stay as they are and nothing of them comes back in Ana's grade."""
    folder = tmp_path / "class"
    bo = folder / "learners" / "bo"
    (bo / "workspace").mkdir(parents=True)
    (bo / "secret.txt").write_text("Bo's secret 4711", encoding="utf-8")
    before = {p: p.read_bytes() for p in bo.rglob("*") if p.is_file()}
    ana = folder / "learners" / "ana"
    ana.mkdir(parents=True)
    attack = ana / "attack.py"
    attack.write_text(
        "import os, pathlib\n"
        f"BO = pathlib.Path({str(bo)!r})\n"
        "found = []\n"
        "for step in (lambda: print((BO / 'secret.txt').read_text()),\n"
        "             lambda: (BO / 'workspace' / 'planted.py').write_text('x'),\n"
        "             lambda: (BO / 'secret.txt').write_text('changed'),\n"
        "             lambda: print(os.listdir(BO.parent))):\n"
        "    try:\n"
        "        step()\n"
        "    except OSError as err:\n"
        "        print('refused:', err.__class__.__name__)\n"
        + (ROOT / "tutor/lessons/01-multi-head/exercises/split-heads/solution.py").read_text(
            encoding="utf-8"
        ),
        encoding="utf-8",
    )
    done = tutor_here("grade", "split-heads", str(attack), "--json", "--home", str(ana))
    grade = json.loads(done.stdout)
    assert "4711" not in done.stdout
    assert grade["output"].count("refused:") == 4, grade["output"]
    assert {p: p.read_bytes() for p in bo.rglob("*") if p.is_file()} == before


# --- the served forms' caps ---------------------------------------------------------------------------


def test_a_served_run_is_held_to_its_learners_caps():
    """The experiments' own ranges stand; a served session's caps come on top: no more threads than its
    cores, no more memory than its cap less the app's margin, no training job of more than 40,000 steps."""
    from tutor.experiments.registry import get_spec
    from tutor.serve.budget import over_cap
    from tutor.serve.session import Served as Session

    served = Session(3, "ana", None, 1024 * 2**20, 1.0, 64 * 2**20)

    def said(name: str, **params) -> str | None:
        why = over_cap(name, get_spec(name).validate(params), served)
        return None if why is None else why.in_lang("en")

    for name in (
        "heads",
        "params",
        "dk-scaling",
        "rope-relative",
        "train-compare",
        "context-finetune",
        "context-scaling",
        "write",
    ):
        assert said(name) is None, name  # every experiment's defaults run
    assert (
        said("train-compare", threads=64)
        == "In this served session a run may use a CPU share of 1: threads may be at most 1."
    )
    assert "these settings need about 9,503 MiB" in said("dk-scaling", dims=[4096], samples=200000)
    assert "need about 1,588 MiB" in said("train-compare", batch=256)
    assert said("train-compare", steps=50000, heads=[1, 2, 4, 8, 16, 32, 64, 128], seeds=5) == (
        "In this served session a training job may take at most 40,000 steps in all (steps × settings × seeds); "
        "these settings ask for 2,000,000."
    )
    assert said("context-scaling", scale=16.0) is None  # 512 MiB: within a cap of 1 GiB
    # 8 bytes × (8192² + 4 × 8192 × 1024) = 768 MiB: just the room a cap of 1 GiB leaves (measured: 787)
    assert said("rope-relative", d=1024, max_pos=8192, dtype="float64") is None
