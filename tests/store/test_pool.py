"""A server's SQLite pool has room for every request slot and every worker thread at once, so
a read opened on the event loop never waits for a connection."""

from __future__ import annotations

from pathlib import Path

from clusterscout.store.db import SQLITE_SPARE_CONNECTIONS, THREADS_PER_PROCESS, make_engine


def test_every_holder_gets_a_sqlite_connection_at_once(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pool.sqlite3'}", pool_size=16)
    engine.pool._timeout = 0.01  # type: ignore[attr-defined]  # waiting would be the failure
    holders = 2 * THREADS_PER_PROCESS + SQLITE_SPARE_CONNECTIONS
    conns = [engine.connect() for _ in range(holders)]
    try:
        assert engine.pool.checkedout() == holders  # type: ignore[attr-defined]
    finally:
        for conn in conns:
            conn.close()
        engine.dispose()
