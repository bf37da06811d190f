"""Plans computed in a worker process beside the server, each on its own consistent read.

Why: a plan is tens to hundreds of milliseconds of pure-Python CPU. In the server's process
it holds the interpreter lock, and every other request then waits for the lock at each
database read and socket write; under a mixed load a burst of new plans made every kind of
request slow (``make bench``'s soak). In a process of its own a plan runs on another core and
the server only waits for its answer. ADR 0021.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, Final

from sqlalchemy import Engine

from clusterscout.app import plans
from clusterscout.app.database import engine_for_url, open_snapshot
from clusterscout.app.errors import Operation, failure_of
from clusterscout.app.plan_queue import Outcome

STARTUP_TIMEOUT_S: Final = 120.0
_engine: Engine | None = None
"""The worker process's engine (set by ``_start``; the server's own is not inherited)."""


WORKER_NICENESS: Final = 10
"""How much lower the plan workers' CPU priority is than the server's."""


def _start(database_url: str) -> None:
    global _engine  # noqa: PLW0603 - one engine per worker process, made when it starts
    # A plan is batch work: when the cores are busy, the server's cheap answers go first.
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.nice(WORKER_NICENESS)
    _engine = engine_for_url(database_url)


def _ready() -> bool:
    return _engine is not None


def _plan(body: Any) -> Outcome:
    """In the worker: the plan of ``body`` (or the failure a user sees) and its data version."""
    if _engine is None:  # pragma: no cover - the pool's initializer always ran first
        msg = "the model worker has no database"
        raise RuntimeError(msg)
    return plan_on(_engine, body)


def plan_on(engine: Engine, body: Any) -> Outcome:
    """The plan of ``body`` on its own consistent read of ``engine`` (opened and closed here,
    so no connection is held while the plan waits its turn)."""
    snap = open_snapshot(engine)
    try:
        try:
            return snap.data_version, plans.run_plan(snap.conn, body)
        except Exception as exc:
            failure = failure_of(exc, Operation.MODEL)
            if failure is None:
                raise
            return snap.data_version, failure
    finally:
        snap.close()


class PlanWorkers:
    """Worker processes that compute plans over the same database as the server."""

    def __init__(self, database_url: str, processes: int) -> None:
        self.slots = processes
        # spawn, not fork: forking a process that runs threads and an event loop is unsafe.
        self._executor = ProcessPoolExecutor(
            max_workers=processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(database_url,),
        )
        # Start a worker now and wait for it: a spawn imports the package (about a second of
        # CPU), which would otherwise land on the first plan and on whatever runs beside it.
        self._executor.submit(_ready).result(timeout=STARTUP_TIMEOUT_S)

    def submit(self, body: Any) -> Future[Outcome]:
        """Start the plan of ``body`` in a worker."""
        return self._executor.submit(_plan, body)

    def close(self) -> None:
        """Stop the workers (waiting plans are cancelled)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


class LocalPlanner:
    """Plans in threads of this process (no worker processes configured): still off the
    event loop and off the server's request threads, so the queue's bounds hold."""

    def __init__(self, engine: Engine, threads: int) -> None:
        self.slots = threads
        self._engine = engine
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    def submit(self, body: Any) -> Future[Outcome]:
        """Start the plan of ``body`` in a thread (the threads start on first use, again
        after ``close``: an app's lifespan may run more than once, as under test clients)."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.slots, thread_name_prefix="plan")
            return self._executor.submit(plan_on, self._engine, body)

    def close(self) -> None:
        """Stop the threads (waiting plans are cancelled)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
