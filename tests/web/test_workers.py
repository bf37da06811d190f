"""Past one machine: several server processes over one PostgreSQL database stay in step."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from live import serving
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from clusterscout.app.database import build
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed
from clusterscout.store.db import make_engine

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
PRICES = "/api/v1/offers/alpha-h100-ib/prices"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose tables live in a schema of their own (dropped after)."""
    url = os.environ.get("CLUSTERSCOUT_TEST_DATABASE_URL")
    if not url:
        pytest.skip("CLUSTERSCOUT_TEST_DATABASE_URL is not set; PostgreSQL tests skipped")
    schema = f"w_{uuid.uuid4().hex[:12]}"
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    yield (
        make_url(url)
        .update_query_dict({"options": f"-csearch_path={schema}"})
        .render_as_string(hide_password=False)
    )
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def _current(base: str) -> tuple[str, float]:
    body = httpx.get(base + PRICES, timeout=30).json()
    price = next(p for p in body["current"] if p["tier"] == "on_demand")["usd_per_gpu_hour"]
    return body["meta"]["data_version"], float(price)


def test_processes_on_one_database_all_serve_a_refresh_at_once(pg_url: str, tmp_path: Path) -> None:
    engine: Engine = make_engine(pg_url)
    build(engine, FIXTURE)
    env = {"CLUSTERSCOUT_DATABASE_URL": pg_url, "CLUSTERSCOUT_DATA_DIR": str(FIXTURE)}
    with ExitStack() as stack:
        # Two servers as on two machines, plus one with two worker processes of its own.
        bases = [
            stack.enter_context(serving(env, tmp_path / f"server{i}.log", workers=workers))
            for i, workers in enumerate((1, 1, 2))
        ]
        before = {_current(b) for b in bases}
        assert len(before) == 1
        (old_version, old_price) = before.pop()
        new_price = round(old_price + 0.25, 2)
        path = tmp_path / "prices.csv"
        path.write_text(
            "offer_id,tier,usd_per_gpu_hour,as_of,source_url\n"
            f"alpha-h100-ib,on_demand,{new_price},{datetime.now(UTC).date()},"
            "https://alpha.example/prices\n",
            encoding="utf-8",
        )
        assert run_feed(engine, FileFeed(), path).ok
        # The next request to any process, and to each worker behind one port, is new.
        for base in bases:
            for _ in range(4):
                version, price = _current(base)
                assert price == new_price
                assert version != old_version
    engine.dispose()
