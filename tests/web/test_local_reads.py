"""API reads on SQLite run on the event loop; with a networked database, in worker threads."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, Response
from web_support import TestClient

from clusterscout.settings import Settings
from clusterscout.web import pages
from clusterscout.web.app import create_app
from clusterscout.web.runtime import reads_local_db


def test_reads_run_on_the_loop_only_for_a_local_database(
    fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    settings = Settings(
        database_url=f"sqlite:///{fixture_db_path}",
        data_dir=fixture_data_dir,
        public_url="http://testserver",
    )
    app = create_app(settings)
    router = APIRouter()

    @router.get("/t/loop")
    async def loop_thread() -> Response:
        return JSONResponse(threading.get_ident())

    @router.get("/t/read/{name}")
    @reads_local_db
    def read(request: Request, name: str) -> Response:
        return JSONResponse([threading.get_ident(), name])

    app.include_router(router)
    with TestClient(app) as client:
        loop = client.get("/t/loop").json()
        ident, name = client.get("/t/read/x").json()
        assert (ident, name) == (loop, "x")  # the path parameter still reaches the endpoint
        app.state.cs.inline_reads = False  # as on PostgreSQL
        ident, _ = client.get("/t/read/y").json()
        assert ident != loop
    app.state.cs.engine.dispose()


def test_catalog_pages_render_on_the_loop_on_sqlite(
    fixture_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Why it matters: rendered in worker threads, 16 concurrent pages spent a fifth (listings)
    # to twice (a provider) more CPU each, contending for the interpreter lock with the loop.
    app = create_app(fixture_settings.model_copy(update={"response_cache_mb": 0}))
    seen: list[int] = []
    render = pages._html

    def recorded(*args: Any, **kwargs: Any) -> Response:
        seen.append(threading.get_ident())
        return render(*args, **kwargs)

    monkeypatch.setattr(pages, "_html", recorded)
    router = APIRouter()

    @router.get("/t/loop")
    async def loop_thread() -> Response:
        return JSONResponse(threading.get_ident())

    app.include_router(router)
    with TestClient(app) as client:
        loop = client.get("/t/loop").json()
        paths = (
            "/en/",
            "/en/multi-node/",
            "/de/offers/?fabric=infiniband",
            "/fr/providers/alpha/",
            "/es/compare/?p=alpha&p=beta",
        )
        for path in paths:
            assert client.get(path).status_code == 200
        assert seen == [loop] * len(paths)
        app.state.cs.inline_reads = False  # as on PostgreSQL
        assert client.get("/fr/multi-node/").status_code == 200
        assert seen[-1] != loop
    app.state.cs.engine.dispose()
