"""Engines from a URL: SQLite (embedded default, WAL, time limit) or PostgreSQL."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a PostgreSQL server before giving up (libpq ``connect_timeout``)."""
THREADS_PER_PROCESS: Final = 40
"""Starlette runs sync handlers on anyio's pool of 40 threads: the pool never needs more."""
SQLITE_SPARE_CONNECTIONS: Final = 8
"""Connections past the request slots and threads (plan threads, start-up reads)."""


class DatabaseURLError(ValueError):
    """The database URL cannot be used."""


def sqlite_file(url: str) -> Path | None:
    """The file behind a SQLite URL, or None for in-memory or non-SQLite databases."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    if parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def make_engine(
    url: str, *, query_time_limit_ms: int | None = None, pool_size: int | None = None
) -> Engine:
    """Create an engine for ``url``.

    SQLite gets foreign keys, WAL (readers never block a rebuild) and, when a limit is given, a
    progress handler that aborts statements running past it (datasette's sql_time_limit_ms).
    ``pool_size`` connections are kept open (a server sets it; connections past it are opened
    per use, up to the server's thread count).

    Raises:
        DatabaseURLError: when the URL is malformed, names an unsupported backend, or the
            database cannot be opened (server unreachable within ``CONNECT_TIMEOUT_S``, file
            not a database, directory not creatable).
    """
    try:
        parsed = make_url(url)
    except Exception as exc:
        msg = f"invalid database URL {url!r}: {exc}"
        raise DatabaseURLError(msg) from exc
    backend = parsed.get_backend_name()
    if backend not in {"sqlite", "postgresql"}:
        msg = f"unsupported database backend {backend!r} (use sqlite or postgresql)"
        raise DatabaseURLError(msg)
    shown = parsed.render_as_string(hide_password=True)
    pool: dict[str, Any] = {}
    if pool_size is not None and parsed.database not in {None, "", ":memory:"}:
        holders = THREADS_PER_PROCESS
        if backend == "sqlite":
            # SQLite reads open on the event loop (up to one per request slot) besides the
            # worker threads: room for both, so a checkout on the loop never waits for a
            # connection. A SQLite connection is a file handle, not a server process.
            holders = 2 * THREADS_PER_PROCESS + SQLITE_SPARE_CONNECTIONS
        overflow = max(holders - pool_size, 0)
        pool = {"pool_size": pool_size, "max_overflow": overflow}
    if backend == "sqlite":
        path = sqlite_file(url)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                msg = f"cannot create the directory of {shown}: {exc.strerror or exc}"
                raise DatabaseURLError(msg) from exc
        engine = create_engine(url, connect_args={"check_same_thread": False}, **pool)
        _install_sqlite_pragmas(engine, query_time_limit_ms)
    else:
        connect_args: dict[str, Any] = {}
        if "connect_timeout" not in parsed.query:
            connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
        engine = create_engine(url, pool_pre_ping=True, connect_args=connect_args, **pool)
    _probe(engine, shown)
    return engine


def _probe(engine: Engine, shown: str) -> None:
    """Connect once, so an unreachable server or an unusable file fails here, clearly."""
    try:
        with engine.connect():
            pass
    except SQLAlchemyError as exc:
        engine.dispose()
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        msg = f"cannot open {shown}: {reason[0] if reason else type(exc).__name__}"
        raise DatabaseURLError(msg) from exc


def _install_sqlite_pragmas(engine: Engine, limit_ms: int | None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=5000")
        cursor.close()
        if limit_ms is not None:
            _set_time_limit(dbapi_conn, limit_ms)


def _set_time_limit(dbapi_conn: Any, limit_ms: int) -> None:
    state = {"deadline": 0.0}

    def handler() -> int:
        # Non-zero aborts the running statement with "interrupted".
        return 1 if state["deadline"] and time.monotonic() > state["deadline"] else 0

    dbapi_conn.set_progress_handler(handler, 10_000)

    # The trace callback runs as each statement starts, so it re-arms the deadline per statement.
    def _arm(*_: Any) -> None:
        state["deadline"] = time.monotonic() + limit_ms / 1000

    dbapi_conn.set_trace_callback(_arm)


def snapshot_connection(engine: Engine) -> Connection:
    """A connection in a read transaction: every statement on it sees one committed state.

    Without it, each statement sees the newest commit, so a request could read its version
    before a refresh and its prices after. SQLite's driver only opens a transaction before
    a write, so we open one ourselves (in WAL mode the snapshot starts at the first read);
    PostgreSQL gets REPEATABLE READ. The caller closes the connection, which ends it.
    """
    conn = engine.connect()
    try:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN")
        else:
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
            conn.begin()
    except Exception:
        conn.close()
        raise
    return conn
