"""Fixtures for feed tests: a fresh database per test built from a small catalog, no network."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_socket
from sqlalchemy import Engine, func, select, text
from sqlalchemy.engine import make_url

from clusterscout.app.database import build
from clusterscout.store.db import make_engine
from clusterscout.store.tables import feed_runs, offers, price_observations

FEEDS_CATALOG = Path(__file__).parent / "catalog"
SKYPILOT_SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "skypilot"
POSTGRES_URL_ENV = "CLUSTERSCOUT_TEST_DATABASE_URL"


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    """Feed tests never reach the network: only loopback (PostgreSQL) and Unix sockets."""
    pytest_socket.socket_allow_hosts(["127.0.0.1", "::1", "localhost"], allow_unix_socket=True)
    yield
    pytest_socket.enable_socket()


@pytest.fixture
def skypilot_dir() -> Path:
    """Real rows of the public SkyPilot catalog, kept in tests/fixtures/skypilot."""
    return SKYPILOT_SAMPLES


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A database built from tests/feeds/catalog: SQLite always, PostgreSQL when configured."""
    if request.param == "sqlite":
        eng = make_engine(f"sqlite:///{tmp_path / 'feeds.sqlite3'}")
        build(eng, FEEDS_CATALOG)
        yield eng
        eng.dispose()
        return
    url = os.environ.get(POSTGRES_URL_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set; PostgreSQL tests skipped")
    schema = f"feeds_{uuid.uuid4().hex[:12]}"
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng = make_engine(
        make_url(url)
        .update_query_dict({"options": f"-csearch_path={schema}"})
        .render_as_string(hide_password=False)
    )
    try:
        build(eng, FEEDS_CATALOG)
        yield eng
    finally:
        eng.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def content_hash(engine: Engine) -> str:
    """Hash of every price observation and every offer's current prices."""
    digest = hashlib.sha256()
    with engine.connect() as conn:
        for row in conn.execute(select(price_observations).order_by(price_observations.c.id)):
            digest.update(repr(tuple(row)).encode())
        cols = (offers.c.id, offers.c.from_usd_per_gpu_hour, offers.c.record_json)
        for row in conn.execute(select(*cols).order_by(offers.c.id)):
            digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


def observation_count(engine: Engine, feed: str | None = None) -> int:
    """Number of price observations (of one feed)."""
    stmt = select(func.count()).select_from(price_observations)
    if feed is not None:
        stmt = stmt.where(price_observations.c.feed == feed)
    with engine.connect() as conn:
        return int(conn.execute(stmt).scalar_one())


def runs(engine: Engine) -> list[dict[str, object]]:
    """Rows of feed_runs, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(select(feed_runs).order_by(feed_runs.c.id)).mappings().all()
    return [dict(r) for r in rows]
