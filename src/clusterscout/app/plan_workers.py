"""Plans computed in a worker process beside the server, each on its own consistent read.

Why: a plan is tens to hundreds of milliseconds of pure-Python CPU. In the server's process
it holds the interpreter lock, and every other request then waits for the lock at each
database read and socket write; under a mixed load a burst of new plans made every kind of
request slow (``make bench``'s soak). In a process of its own a plan runs on another core and
the server only waits for its answer. ADR 0021.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Final

from sqlalchemy import Engine

from clusterscout.app import plans
from clusterscout.app.database import Snapshot, engine_for_url, open_snapshot
from clusterscout.app.errors import ClassifiedError, Failure, Operation, failure_of
from clusterscout.model.planner.results import PlanResult

STARTUP_TIMEOUT_S: Final = 120.0
_engine: Engine | None = None
"""The worker process's engine (set by ``_start``; the server's own is not inherited)."""


def _start(database_url: str) -> None:
    global _engine  # noqa: PLW0603 - one engine per worker process, made when it starts
    _engine = engine_for_url(database_url)


def _ready() -> bool:
    return _engine is not None


def _plan(body: Any) -> tuple[str, PlanResult | Failure]:
    """In the worker: the plan of ``body`` (or the failure a user sees) and its data version."""
    if _engine is None:  # pragma: no cover - the pool's initializer always ran first
        msg = "the model worker has no database"
        raise RuntimeError(msg)
    snap = open_snapshot(_engine)
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

    def plan(self, body: Any, data_version: str) -> PlanResult | None:
        """The plan of ``body`` read at ``data_version``; None when the worker read another
        version (a refresh in between): the caller then plans on its own read, so an answer
        never carries a version it was not computed from.

        Raises:
            ClassifiedError: the failure a user sees (bad input, no calibration), as
                ``failure_of`` classified it in the worker.
        """
        version, outcome = self._executor.submit(_plan, body).result()
        if version != data_version:
            return None
        if isinstance(outcome, Failure):
            raise ClassifiedError(outcome)
        return outcome

    def close(self) -> None:
        """Stop the workers (waiting plans are cancelled)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def run_plan(workers: PlanWorkers | None, snap: Snapshot, body: Any) -> PlanResult:
    """The plan of ``body`` on the snapshot's data: by a worker when there are workers (and it
    read the same version), else in this process (``plans.run_plan``)."""
    if workers is not None:
        result = workers.plan(body, snap.data_version)
        if result is not None:
            return result
    return plans.run_plan(snap.conn, body)
