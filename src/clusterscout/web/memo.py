"""A small thread-safe LRU memo for results that depend only on the data version and the input.

Keys must include the catalog ``data_version`` so a rebuilt database never serves old answers.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Memo:
    """Least-recently-used memo of computed values by key."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value stored for ``key``, computing and storing it first when absent.

        Exceptions from ``compute`` propagate and nothing is stored.
        """
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                value: T = self._items[key]
                return value
        value = compute()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)
