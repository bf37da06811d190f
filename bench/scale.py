"""Scale check: the catalog copied 10x (synthetic slugs), built into SQLite, queried and rendered.

Usage: ``.venv/bin/python bench/scale.py [--factor 10] [--repeat 200]``

Prints the time per filtered offer query (the one query path) and per rendered multi-node page
for today's catalog and for ``factor`` copies of it, plus the query plan, so we can see that
filters hit indexes. Nothing here is committed data: the copies live in a temporary folder.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

with warnings.catch_warnings():
    # Starlette's TestClient warns about its httpx backend on import; harmless here.
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient
from sqlalchemy import text

from clusterscout.app import texts
from clusterscout.app.database import build
from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.domain.models import FabricKind
from clusterscout.settings import Settings
from clusterscout.store import queries
from clusterscout.store.db import make_engine
from clusterscout.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
FILTERS = {
    "all multi-node": OfferFilter(multi_node=True),
    "infiniband + rdma": OfferFilter(fabric=(FabricKind.INFINIBAND,), rdma=True),
    "min 1600 Gb/s, max $5": OfferFilter(min_gbps=1600.0, max_price=5.0),
}
PAGE = "/en/multi-node/?fabric=infiniband&rdma=true"


def _copy_catalog(target: Path, factor: int) -> None:
    shutil.copytree(ROOT / "data", target)
    providers = sorted((target / "providers").glob("*.toml"))
    for n in range(1, factor):
        for path in providers:
            slug = f"{path.stem}-x{n}"
            body = re.sub(r'^slug = ".*"$', f'slug = "{slug}"', path.read_text(), flags=re.M)
            (path.parent / f"{slug}.toml").write_text(body)
    # The copies' texts are the originals', from new files: the template names its sources.
    texts.update_files(target)


def _time_ms(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def measure(factor: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        _copy_catalog(data, factor)
        db = Path(tmp) / "db.sqlite3"
        engine = make_engine(f"sqlite:///{db}")
        start = time.perf_counter()
        stats, _ = build(engine, data)
        built_s = time.perf_counter() - start
        print(
            f"x{factor}: {stats.providers} providers, {stats.offers} offers, "
            f"built in {built_s:.1f} s"
        )
        with engine.connect() as conn:
            for name, f in FILTERS.items():
                p50, p99 = _time_ms(
                    lambda f=f: queries.list_offers(conn, f, SortKey.PRICE, 100), repeat
                )
                print(f"  query {name:24} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms")
            plan = conn.execute(
                text(
                    "EXPLAIN QUERY PLAN SELECT id FROM offers WHERE fabric = 'infiniband' "
                    "AND gpudirect_rdma = 1 ORDER BY from_usd_per_gpu_hour"
                )
            ).all()
            print("  plan:", "; ".join(str(r[-1]) for r in plan))
        settings = Settings(
            database_url=f"sqlite:///{db}", data_dir=data, public_url="http://testserver"
        )
        with TestClient(create_app(settings)) as client:
            # A fresh query string per request defeats the page cache: every render is real.
            counter = iter(range(10**9))
            p50, p99 = _time_ms(
                lambda: client.get(
                    f"{PAGE}&max_price={100 + next(counter)}", follow_redirects=True
                ),
                max(20, repeat // 10),
            )
            print(f"  page {PAGE} (uncached) p50 {p50:6.1f} ms  p99 {p99:6.1f} ms")
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factor", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    measure(1, args.repeat)
    measure(args.factor, args.repeat)


if __name__ == "__main__":
    main()
