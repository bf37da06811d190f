"""Identifier rules shared by the catalog, the URLs and the API."""

from __future__ import annotations

import re
from typing import Final

SLUG_PATTERN: Final = r"^[a-z0-9]+(-[a-z0-9]+)*$"
_SLUG_RE: Final = re.compile(SLUG_PATTERN)


def is_slug(value: str) -> bool:
    """Return True when ``value`` is a lowercase, dash-separated slug.

    >>> is_slug("voltage-park"), is_slug("Voltage Park"), is_slug("a--b")
    (True, False, False)
    """
    return bool(_SLUG_RE.match(value))


def offer_id(provider_slug: str, local_id: str) -> str:
    """Global offer id: the provider slug and the offer's id in its file.

    >>> offer_id("lambda", "h100-ib")
    'lambda-h100-ib'
    """
    return f"{provider_slug}-{local_id}"


def normalise_gpu_key(name: str) -> str:
    """Fold a GPU name for alias look-up: case, spaces, underscores and dashes are ignored.

    >>> normalise_gpu_key("H100 SXM_80gb") == normalise_gpu_key("h100-sxm-80GB")
    True
    """
    return re.sub(r"[\s_\-]+", "", name).lower()
