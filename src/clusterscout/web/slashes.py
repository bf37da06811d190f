"""The trailing-slash redirect, with a relative ``Location`` that no request header can change.

Why: Starlette's own redirect builds an absolute URL from the request's Host and scheme, so
with ``allowed_hosts = *`` a crafted Host header sent a visitor to another site (an open
redirect). Ours names only the path and query of this site.
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.routing import Match, Router
from starlette.types import Scope

_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def _routed(router: Router, scope: Scope) -> bool:
    return any(route.matches(scope)[0] is Match.FULL for route in router.routes)


def slash_location(router: Router, scope: Scope) -> str | None:
    """The relative URL of the route that matches the path with its trailing slash added or
    removed, or None when none does (or the path could read as another host: ``//x``)."""
    path: str = scope.get("path", "")
    if path in {"", "/"} or path.startswith("//") or "\\" in path:
        return None
    if _routed(router, scope):
        return None  # a route answered 404 itself: the slash is not the problem
    other = path[:-1] if path.endswith("/") else path + "/"
    if not _routed(router, {**scope, "path": other}):
        return None
    query = scope.get("query_string", b"").decode("latin-1")
    return quote(other, safe=_PATH_SAFE) + (f"?{query}" if query else "")
