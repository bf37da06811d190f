"""The HTTP protocol ``clusterscout serve`` runs: uvicorn's, with a deadline on request heads.

Why: uvicorn bounds an idle keep-alive connection but not a request head that arrives one
byte at a time, so a slow client could hold a connection (and a file descriptor) for ever.
Here a connection whose request line and headers are not complete ``HEAD_TIMEOUT_S`` after
it opened, or after the previous answer, is closed. Bodies have their own deadline
(``RequestBodyMiddleware``). In front of the public internet a reverse proxy still belongs
(docs/serving.md): it buffers slow clients and holds many more connections than we can.
"""

from __future__ import annotations

import asyncio
from typing import Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEAD_TIMEOUT_S: Final = 10.0
PROTOCOL: Final = "clusterscout.web.serving:HeadDeadlineProtocol"
"""The import string ``uvicorn.run(http=...)`` takes (a string, so workers can import it)."""


class HeadDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing connections whose request head is too slow."""

    head_timeout_s: float = HEAD_TIMEOUT_S
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request's head."""
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        """The head arrived in time."""
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        """Start the clock for the next request's head on this connection."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        busy = self.cycle is not None and not self.cycle.response_complete
        # A request being answered (a pipelined one started) is not a slow head.
        if not busy and not self.transport.is_closing():
            self.transport.close()
