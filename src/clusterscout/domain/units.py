"""Unit conversions in one place, so no other module writes 1e9 or 8 by hand."""

from __future__ import annotations

from typing import Final

BITS_PER_BYTE: Final = 8
GIB: Final = 2**30
SECONDS_PER_HOUR: Final = 3600.0


def gbps_to_gbytes_per_s(gbps: float) -> float:
    """Gigabits per second to gigabytes per second (decimal units).

    >>> gbps_to_gbytes_per_s(400)
    50.0
    """
    return gbps / BITS_PER_BYTE


def bytes_to_gib(n_bytes: float) -> float:
    """Bytes to GiB.

    >>> bytes_to_gib(2**31)
    2.0
    """
    return n_bytes / GIB
