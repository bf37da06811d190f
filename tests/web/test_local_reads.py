"""API reads on SQLite run on the event loop; with a networked database, in worker threads."""

from __future__ import annotations

import threading
from pathlib import Path

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, Response
from web_support import TestClient

from clusterscout.settings import Settings
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
