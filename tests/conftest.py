"""Shared fixtures: the small fixture catalog, built once into SQLite, and matching settings."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from clusterscout.app.database import build
from clusterscout.settings import Settings
from clusterscout.store.db import make_engine

FIXTURE_DATA_DIR = Path(__file__).parent / "fixtures" / "catalog"
REAL_DATA_DIR = Path(__file__).parent.parent / "data"
POSTGRES_URL_ENV = "CLUSTERSCOUT_TEST_DATABASE_URL"


@pytest.fixture(scope="session")
def fixture_data_dir() -> Path:
    """The hand-written fixture catalog (independent of the real data/)."""
    return FIXTURE_DATA_DIR


@pytest.fixture(scope="session")
def fixture_db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SQLite file built once per session from the fixture catalog."""
    path = tmp_path_factory.mktemp("db") / "fixture.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    build(engine, FIXTURE_DATA_DIR)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def fixture_settings(fixture_db_path: Path) -> Settings:
    """Settings pointing at the fixture database and catalog."""
    # The in-process client sends Host: testserver; links are built from this public URL.
    return Settings(
        database_url=f"sqlite:///{fixture_db_path}",
        data_dir=FIXTURE_DATA_DIR,
        public_url="http://testserver",
    )


@pytest.fixture(scope="session")
def fixture_engine(fixture_settings: Settings) -> Iterator[Engine]:
    """Read-only use: an engine over the session's fixture database."""
    engine = make_engine(fixture_settings.resolved_database_url())
    yield engine
    engine.dispose()


def postgres_url() -> str | None:
    """The PostgreSQL test URL, when CI provides one."""
    return os.environ.get(POSTGRES_URL_ENV) or None


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An empty database per test: SQLite always, PostgreSQL when the env var is set."""
    if request.param == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'fresh.sqlite3'}")
        yield engine
        engine.dispose()
        return
    url = postgres_url()
    if url is None:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set; PostgreSQL tests skipped")
    # A schema of its own per test, so parallel workers never see each other's tables.
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = make_engine(
        make_url(url)
        .update_query_dict({"options": f"-csearch_path={schema}"})
        .render_as_string(hide_password=False)
    )
    yield engine
    engine.dispose()
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()
