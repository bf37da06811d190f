"""Web fixtures: one app over the fixture catalog per session and an in-process client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from tests.conftest import REAL_DATA_DIR
from web_support import TestClient

from clusterscout.app.database import build
from clusterscout.settings import Settings
from clusterscout.store.db import make_engine
from clusterscout.web.app import create_app


@pytest.fixture(scope="session")
def web_app(fixture_settings: Settings) -> FastAPI:
    """The app over the fixture catalog."""
    return create_app(fixture_settings)


@pytest.fixture(scope="session")
def client(web_app: FastAPI) -> Iterator[TestClient]:
    """An in-process client that does not follow redirects."""
    with TestClient(web_app, follow_redirects=False) as c:
        yield c


@pytest.fixture(scope="session")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """An in-process client of the app over the REAL catalog in data/ (built once)."""
    path = tmp_path_factory.mktemp("real") / "real.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    build(engine, REAL_DATA_DIR)
    engine.dispose()
    settings = Settings(
        database_url=f"sqlite:///{path}", data_dir=REAL_DATA_DIR, public_url="http://testserver"
    )
    with TestClient(create_app(settings), follow_redirects=False) as c:
        yield c
