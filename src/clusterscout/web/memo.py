"""A small thread-safe LRU memo for results that depend only on the data version and the input.

Keys must include the catalog ``data_version`` so a rebuilt database never serves old answers.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class Memo:
    """Least-recently-used memo of computed values by key."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._flights = SingleFlight()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value stored for ``key``, computing and storing it first when absent.

        Exceptions from ``compute`` propagate and nothing is stored.
        """
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                value: T = self._items[key]
                return value

        def store() -> T:
            value = compute()
            with self._lock:
                self._items[key] = value
                self._items.move_to_end(key)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
            return value

        # Callers missing the same key together share one computation.
        return self._flights.run(key, store)

    def __len__(self) -> int:
        return len(self._items)


class SingleFlight:
    """At most one computation per key at a time: callers asking for a key that is being
    computed wait for that result (or its exception) instead of computing it again.

    Why: a burst of identical plan requests arrived before the first answer was cached, and
    each computed the same plan again (hundreds of milliseconds of CPU apiece).
    """

    def __init__(self) -> None:
        self._running: dict[Hashable, Future[Any]] = {}
        self._lock = threading.Lock()

    def run(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, or the result of the call already computing ``key``."""
        with self._lock:
            running = self._running.get(key)
            if running is None:
                mine: Future[Any] = Future()
                self._running[key] = mine
        if running is not None:
            found: T = running.result()
            return found
        try:
            value = compute()
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        else:
            mine.set_result(value)
            return value
        finally:
            with self._lock:
                del self._running[key]
