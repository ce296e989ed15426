"""The served class's door, attacked without a token: half-sent requests, floods from one address, a
server short of open files. A real `python -m tutor serve --roster` process each time; the attackers are
raw sockets from other loopback addresses (127.0.0.2 and on: the whole of 127/8 is this machine), the
learner a client from 127.0.0.1 (tests/serve_client.py)."""

from __future__ import annotations

import asyncio
import resource
import socket
import time

import pytest

from tests.serve_client import Learner, Served

ROSTER = "id,name,language\nana,Ana Lima,en\n"
HALF_SENT = b"GET /learn/ HTTP/1.1\r\nHost: tutor\r\nUser-Agent: slow"  # no end of the head, ever


def start(tmp_path, *options, open_files: int | None = None) -> Served:
    (tmp_path / "class.csv").write_text(ROSTER, encoding="utf-8")
    folder = tmp_path / "class"

    def few_files() -> None:  # the server's own hard limit: it can raise its soft limit no further
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    return Served(
        "--roster",
        str(tmp_path / "class.csv"),
        "--dir",
        str(folder),
        *options,
        folder=folder,
        preexec_fn=few_files if open_files else None,
    )


def attackers(server: Served, n: int, source: str, payload: bytes) -> list[socket.socket]:
    port = int(server.base.rsplit(":", 1)[1])
    out = []
    for _ in range(n):
        sock = socket.socket()
        sock.bind((source, 0))
        sock.setblocking(False)
        try:
            sock.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        out.append(sock)
    time.sleep(0.5)
    for sock in out:
        try:
            sock.send(payload)
        except OSError:
            pass
    return out


def closed_by_server(sock: socket.socket) -> bool:
    """The server ended this connection: an end of file, a reset, or its 503 and then the end."""
    sock.setblocking(True)
    sock.settimeout(0.2)
    try:
        data = sock.recv(4096)
    except TimeoutError:
        return False
    except OSError:
        return True
    return data == b"" or data.startswith(b"HTTP/1.1 503")


async def learner_gets_in(link: str) -> float:
    started = time.monotonic()
    async with Learner(link) as ana:
        await ana.open()
        await ana.wait_for("Multi-head attention", timeout=30)
    return time.monotonic() - started


@pytest.mark.slow  # 520 half-sent requests and their timeouts: 22 s
def test_half_sent_requests_from_one_address_cannot_keep_a_learner_out(tmp_path):
    """520 connections that never finish their head, against a server with 512 open files: the door
    lets a quarter of its connections be one address's, the rest are answered 503 at once, the header
    timeout ends the slow ones, and a learner from another address is in as quickly as ever."""
    server = start(tmp_path, "--max-sessions", "4", open_files=512)
    try:
        slow = attackers(server, 520, "127.0.0.2", HALF_SENT)
        took = asyncio.run(learner_gets_in(server.links()["ana"]))
        refused_at_once = sum(closed_by_server(sock) for sock in slow)
        time.sleep(11)  # the header timeout (10 s)
        ended = sum(closed_by_server(sock) for sock in slow)
        for sock in slow:
            sock.close()
    finally:
        said = server.stop()
    assert took < 15, f"the learner waited {took:.1f} s"
    assert refused_at_once >= 520 - 128  # at most a quarter of the room for one address
    assert ended == 520
    assert "Traceback" not in said and len(said) < 20_000, said[-3000:]


@pytest.mark.slow  # 6-10 s: over the default run's budget (docs/development.md); CI's slow run has it
def test_a_server_out_of_files_logs_its_accept_errors_once_per_interval(tmp_path):
    """So few open files that accept() itself fails (Too many open files): asyncio's error for each is
    held to one line per ten seconds, without a traceback, and the server serves again once the flood
    is gone."""
    server = start(tmp_path, "--max-sessions", "1", open_files=48)
    try:
        flood = attackers(server, 300, "127.0.0.3", b"GET / HTTP/1.1\r\nHost: tutor\r\n")
        time.sleep(3)
        for sock in flood:
            sock.close()
        time.sleep(1.5)
        took = asyncio.run(learner_gets_in(server.links()["ana"]))
    finally:
        said = server.stop()
    lines = [line for line in said.splitlines() if "accept" in line or "connection refused" in line]
    assert "Traceback" not in said, said[-3000:]
    assert 1 <= len(lines) <= 6, "\n".join(lines)
    assert took < 20
