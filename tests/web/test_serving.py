"""``clusterscout serve``'s protocol closes a connection whose request head never completes,
and still answers complete requests, one after another on one connection."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from clusterscout.web.serving import HeadDeadlineProtocol


class QuickDeadline(HeadDeadlineProtocol):
    head_timeout_s = 0.3


async def _hello(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    headers = [(b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"hi"})


@pytest.fixture
def server() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(
        _hello, host="127.0.0.1", port=port, http=QuickDeadline, log_level="error", lifespan="off"
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started
    yield port
    srv.should_exit = True
    thread.join(timeout=10)


def _closed(conn: socket.socket) -> bool:
    """True when the server closed the connection (reads end) within 10 s."""
    conn.settimeout(10)
    try:
        return conn.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_a_request_head_that_never_completes_is_closed(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # no blank line: the head goes on
        assert _closed(conn)


def test_a_silent_connection_is_closed(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        assert _closed(conn)


def test_complete_requests_are_answered_on_one_connection(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.settimeout(10)
        for _ in range(2):
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while not answer.endswith(b"hi"):
                chunk = conn.recv(1024)
                assert chunk, answer
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200")
        # Then the next head is due within the deadline too.
        conn.sendall(b"GET / HTTP/1.1\r\n")
        assert _closed(conn)
