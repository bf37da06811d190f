"""Edges of requests: control characters, body type, size and timeout, and the Allow header."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send
from web_support import TestClient

from clusterscout.web.middleware import RequestBodyMiddleware

MODEL_PATHS = ("/api/v1/plan", "/api/v1/estimate")


@pytest.mark.parametrize("value", ["%00x", "us%00", "a%0Ab", "%7F"])
def test_control_characters_in_a_text_filter_are_refused(client: TestClient, value: str) -> None:
    # A NUL cut SQLite's LIKE pattern short, so "\x00x" matched every offer.
    r = client.get(f"/api/v1/offers?region={value}")
    assert r.status_code == 400
    assert r.json()["error"]["field"] == "region"
    assert client.get(f"/en/offers/?region={value}").status_code == 400


@pytest.mark.parametrize("path", MODEL_PATHS)
@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_body_that_is_not_json_is_415(client: TestClient, path: str, kind: str | None) -> None:
    headers = {"content-type": kind} if kind else {}
    r = client.post(path, content=b'{"model": "70B"}', headers=headers)
    assert r.status_code == 415
    assert r.json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.parametrize("path", MODEL_PATHS)
def test_a_huge_body_is_413(client: TestClient, path: str) -> None:
    body = json.dumps({"model": "x" * 1_100_000}).encode()
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "payload_too_large"


def test_json_with_a_charset_or_a_json_suffix_is_read(client: TestClient) -> None:
    for kind in ("application/json; charset=utf-8", "application/merge-patch+json"):
        r = client.post("/api/v1/plan", content=b"{}", headers={"content-type": kind})
        assert r.status_code == 400
        assert r.json()["error"]["code"] == "invalid_scenario"


def test_a_declared_body_that_never_comes_is_408() -> None:
    reached: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append((await receive())["body"])

    paths = {"/api/v1/plan"}
    middleware = RequestBodyMiddleware(app, paths=lambda: paths, timeout_s=0.05, max_bytes=1000)
    sent: list[Message] = []

    async def never() -> Message:
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/v1/plan",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"10")],
    }
    # In a thread of its own: the worker may already run an event loop (Playwright's).
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(anyio.run, middleware, scope, never, send).result()
    assert sent[0]["status"] == 408
    assert json.loads(sent[1]["body"])["error"]["code"] == "request_timeout"
    assert not reached


def test_a_post_where_only_get_is_allowed_is_405_whatever_its_body(client: TestClient) -> None:
    for headers in ({}, {"content-type": "text/plain"}):
        assert client.post("/api/v1/offers", content=b"x", headers=headers).status_code == 405


def test_allow_lists_head_wherever_get_is_allowed(client: TestClient) -> None:
    r = client.delete("/api/v1/offers")
    assert r.status_code == 405
    assert [m.strip() for m in r.headers["allow"].split(",")] == ["GET", "HEAD"]
    assert client.head("/api/v1/offers").status_code == 200


def test_an_error_page_outside_the_middleware_opens_no_connection(
    fixture_db_path: object, fixture_data_dir: object
) -> None:
    # A bug's 500 page is rendered by the outermost layer, after the request's snapshot was
    # closed; it must not open one that nobody closes (the pool would run dry).
    from fastapi import APIRouter

    from clusterscout.settings import Settings
    from clusterscout.web.app import create_app

    settings = Settings(
        database_url=f"sqlite:///{fixture_db_path}",
        data_dir=fixture_data_dir,  # type: ignore[arg-type]
        public_url="http://testserver",
    )
    app = create_app(settings)
    router = APIRouter()

    @router.get("/en/boom/")
    def boom() -> None:
        raise RuntimeError("a bug")

    app.include_router(router)
    engine = app.state.cs.engine
    with TestClient(app, raise_server_exceptions=False) as c:
        for _ in range(3):
            r = c.get("/en/boom/")
            assert r.status_code == 500
            assert "<html" in r.text
    assert engine.pool.checkedout() == 0
    engine.dispose()
