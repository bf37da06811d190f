"""SingleFlight and Memo: concurrent callers of one key share one computation."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from clusterscout.web.memo import Memo, SingleFlight


def test_callers_of_a_key_being_computed_wait_for_that_computation() -> None:
    flights, started, release = SingleFlight(), threading.Event(), threading.Event()
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        started.set()
        release.wait(5)
        return "answer"

    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(flights.run, "k", compute)
        assert started.wait(5)
        others = [pool.submit(flights.run, "k", compute) for _ in range(5)]
        release.set()
        results = [first.result(5), *(f.result(5) for f in others)]
    assert results == ["answer"] * 6
    assert len(calls) == 1
    # Once it is done, the next caller computes again (the flight only joins concurrent calls).
    assert flights.run("k", lambda: "again") == "again"


def test_an_exception_reaches_every_waiting_caller_and_nothing_is_kept() -> None:
    flights, started, release = SingleFlight(), threading.Event(), threading.Event()

    def fail() -> str:
        started.set()
        release.wait(5)
        raise ValueError("bad input")

    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(flights.run, "k", fail)
        assert started.wait(5)
        second = pool.submit(flights.run, "k", fail)
        release.set()
        for f in (first, second):
            with pytest.raises(ValueError, match="bad input"):
                f.result(5)
    assert flights.run("k", lambda: "fine") == "fine"


def test_memo_computes_a_missing_key_once_for_concurrent_callers() -> None:
    memo, started, release = Memo(4), threading.Event(), threading.Event()
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        started.set()
        release.wait(5)
        return 42

    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(memo.get, "k", compute)
        assert started.wait(5)
        others = [pool.submit(memo.get, "k", compute) for _ in range(3)]
        release.set()
        assert [first.result(5), *(f.result(5) for f in others)] == [42] * 4
    assert len(calls) == 1
    assert memo.get("k", lambda: 0) == 42  # kept
