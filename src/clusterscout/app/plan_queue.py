"""A bounded queue of plans: admission per server and per client, and a deadline per plan.

Why: a plan is seconds of CPU at worst, and before this queue every plan request waited for
the single plan worker while holding a database connection and a server thread. Sixty heavy
plans at once used up the connection pool, and a cheap page then waited half a minute for a
connection on the event loop. Now a plan is admitted only while fewer than ``capacity`` are
in flight (else the caller is told to come back: 503 with ``Retry-After``), one client may
have at most ``per_client`` in flight (else 429), nobody holds a connection while waiting,
and nobody waits longer than ``deadline_s``. ADR 0022.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Final, Protocol

from clusterscout.app.errors import ClassifiedError, Failure, FailureKind
from clusterscout.app.inputs import check_json_shape
from clusterscout.model.planner.results import PlanResult

Outcome = tuple[str, PlanResult | Failure]
"""What a plan runner answers: the data version it read, and the plan or the failure."""
FIRST_GUESS_S: Final = 2.0
"""The time a plan is assumed to take before one has finished (for ``Retry-After``)."""
MAX_RETRY_AFTER_S: Final = 120


class PlanRunner(Protocol):
    """Something that computes plans away from the event loop (worker processes, threads)."""

    slots: int
    """How many plans it computes at once."""

    def submit(self, body: Any) -> Future[Outcome]:
        """Start the plan of ``body``; its future holds the outcome."""


def busy(kind: FailureKind, detail: str, retry_after_s: int) -> ClassifiedError:
    """The error a caller turned away meets (503 or 429, with when to come back)."""
    code = "busy" if kind is FailureKind.BUSY else "too_many_requests"
    return ClassifiedError(Failure(kind, code, detail, retry_after_s=retry_after_s))


@dataclass(frozen=True, slots=True)
class Admission:
    """One admitted plan: its future and when its deadline passes (``time.monotonic``)."""

    future: Future[Outcome]
    deadline: float


class PlanQueue:
    """Admits plans up to a bound, runs them on ``runner`` and waits at most a deadline."""

    def __init__(
        self, runner: PlanRunner, *, capacity: int, per_client: int, deadline_s: float
    ) -> None:
        self.runner = runner
        self.capacity = capacity
        self.per_client = per_client
        self.deadline_s = deadline_s
        self._lock = threading.Lock()
        self._in_flight = 0
        self._by_client: dict[str, int] = {}
        self._mean_s = FIRST_GUESS_S

    @property
    def in_flight(self) -> int:
        """Plans admitted and not yet finished (waiting or running)."""
        return self._in_flight

    def retry_after_s(self) -> int:
        """Seconds until the plans in flight are likely done: the hint in ``Retry-After``."""
        rounds = math.ceil(max(self._in_flight, 1) / max(self.runner.slots, 1))
        return max(1, min(MAX_RETRY_AFTER_S, math.ceil(rounds * self._mean_s)))

    def _expected_wait_s(self) -> float:
        """How long a plan admitted now would likely take, waiting included."""
        rounds = math.ceil((self._in_flight + 1) / max(self.runner.slots, 1))
        return rounds * self._mean_s

    def refusal(self, client: str) -> ClassifiedError | None:
        """The error ``start`` would raise for ``client`` now (None: it would admit), so a
        caller can turn a plan away before any other work on it."""
        with self._lock:
            return self._refusal(client)

    def _refusal(self, client: str) -> ClassifiedError | None:
        if self._in_flight >= self.capacity:
            detail = "the server is computing as many plans as it can; try again shortly"
            return busy(FailureKind.BUSY, detail, self.retry_after_s())
        if self._in_flight >= self.runner.slots and self._expected_wait_s() > self.deadline_s:
            # Load shedding: a plan that would likely miss its deadline waiting is refused
            # now, not after the deadline.
            detail = "the plans already queued would take longer than this plan may wait"
            return busy(FailureKind.BUSY, detail, self.retry_after_s())
        if self.per_client and self._by_client.get(client, 0) >= self.per_client:
            detail = f"at most {self.per_client} plans per client at a time"
            return busy(FailureKind.RATE_LIMITED, detail, self.retry_after_s())
        return None

    def start(self, body: Any, client: str) -> Admission:
        """Admit the plan of ``body`` for ``client`` and start it; never waits.

        Raises:
            InputError: on ``body`` nested too deeply or too large to copy to a worker.
            ClassifiedError: BUSY when ``capacity`` plans are in flight or the ones queued
                would likely keep this one past its deadline, RATE_LIMITED when ``client``
                already has ``per_client`` (each with a ``retry_after_s``).
        """
        check_json_shape(body)  # before it is pickled to a worker process
        with self._lock:
            refused = self._refusal(client)
            if refused is not None:
                raise refused
            mine = self._by_client.get(client, 0)
            self._in_flight += 1
            self._by_client[client] = mine + 1
        started = time.monotonic()
        try:
            future = self.runner.submit(body)
        except BaseException:
            self._release(client, None)
            raise
        # The slot is held until the plan really ends, even when its caller gave up at the
        # deadline: the bound is on work, not on waiting callers.
        future.add_done_callback(lambda _f: self._release(client, time.monotonic() - started))
        return Admission(future, started + self.deadline_s)

    def _release(self, client: str, took_s: float | None) -> None:
        with self._lock:
            self._in_flight -= 1
            left = self._by_client.get(client, 1) - 1
            if left > 0:
                self._by_client[client] = left
            else:
                self._by_client.pop(client, None)
            if took_s is not None:
                # A moving mean: recent plans say most about the ones waiting now.
                self._mean_s = 0.8 * self._mean_s + 0.2 * took_s

    def _late(self, admission: Admission) -> ClassifiedError:
        admission.future.cancel()  # still queued: it never runs
        detail = f"the plan did not finish within {self.deadline_s:g} s; try again later"
        return busy(FailureKind.BUSY, detail, self.retry_after_s())

    def wait(self, admission: Admission) -> Outcome:
        """Block until the plan ends or its deadline passes (for synchronous callers).

        Raises:
            ClassifiedError: BUSY when the deadline passed first.
        """
        left = max(admission.deadline - time.monotonic(), 0.0)
        try:
            return admission.future.result(timeout=left)
        except FutureTimeout:
            raise self._late(admission) from None

    async def wait_async(self, admission: Admission) -> Outcome:
        """Wait on the event loop (no thread held) until the plan ends or its deadline.

        Raises:
            ClassifiedError: BUSY when the deadline passed first.
        """
        left = max(admission.deadline - time.monotonic(), 0.0)
        try:
            # shield: a timeout must not cancel the future under the done callback's feet;
            # ``_late`` cancels it only if it has not started.
            return await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(admission.future)), left
            )
        except TimeoutError:
            raise self._late(admission) from None


def result_of(outcome: Outcome) -> PlanResult:
    """The plan of an outcome.

    Raises:
        ClassifiedError: the failure the runner classified (bad input, no calibration).
    """
    _version, found = outcome
    if isinstance(found, Failure):
        raise ClassifiedError(found)
    return found


def run_sync(queue: PlanQueue, body: Any, client: str) -> PlanResult:
    """Admit, run and wait for the plan of ``body`` (for callers on a thread of their own)."""
    return result_of(queue.wait(queue.start(body, client)))
