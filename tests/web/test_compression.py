"""Compression (br, gzip) of pages, JSON and CSV, and the byte-bounded response cache."""

from __future__ import annotations

import gzip
from pathlib import Path

import brotli
import pytest
from web_support import TestClient

from clusterscout.settings import Settings
from clusterscout.web.app import create_app
from clusterscout.web.middleware import Entry, ResponseCache, accepted_encoding

PATHS = ("/en/multi-node/", "/api/v1/offers", "/api/v1/offers.csv", "/sitemap.xml")


def _raw(client: TestClient, path: str, encoding: str) -> tuple[dict[str, str], bytes]:
    with client.stream("GET", path, headers={"Accept-Encoding": encoding}) as r:
        assert r.status_code == 200
        return dict(r.headers), b"".join(r.iter_raw())


@pytest.mark.parametrize("path", PATHS)
def test_answers_are_compressed_as_asked(client: TestClient, path: str) -> None:
    plain_headers, plain = _raw(client, path, "identity")
    assert "content-encoding" not in plain_headers
    for encoding, decode in (("gzip", gzip.decompress), ("br", brotli.decompress)):
        for _ in range(2):  # rendered, then from the cache
            headers, body = _raw(client, path, encoding)
            assert headers["content-encoding"] == encoding
            assert int(headers["content-length"]) == len(body) < len(plain)
            assert decode(body) == plain
            assert "Accept-Encoding" in headers["vary"]


def test_accept_encoding_is_read_with_its_weights() -> None:
    assert accepted_encoding("gzip, deflate, br") == "br"
    assert accepted_encoding("br;q=0, gzip") == "gzip"
    assert accepted_encoding("*") == "br"
    assert accepted_encoding("*;q=0") is None
    assert accepted_encoding("gzip;q=bogus") is None
    assert accepted_encoding("") is None


def test_the_cache_is_bounded_in_bytes() -> None:
    cache = ResponseCache(max_bytes=8_000)
    for i in range(50):
        cache.put(f"k{i}", Entry([], bytes(900)))
        assert cache.bytes <= 8_000
    assert cache.get("k0") is None
    assert cache.get("k49") is not None
    cache.put("big", Entry([], bytes(1_001)))  # over an eighth of the bound: never stored
    assert cache.get("big") is None
    entry = cache.get("k49")
    assert entry is not None
    cache.grow(entry, "gzip", bytes(100))
    assert cache.bytes == sum(e.size for e in cache._items.values())


def test_many_large_distinct_answers_keep_the_cache_within_its_bound(
    fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    settings = Settings(
        database_url=f"sqlite:///{fixture_db_path}",
        data_dir=fixture_data_dir,
        public_url="http://testserver",
        response_cache_mb=0.05,
    )
    app = create_app(settings)
    client = TestClient(app)
    for offset in range(300):
        assert client.get(f"/api/v1/offers?limit=2&offset={offset}").status_code == 200
    cache = next(m for m in _middlewares(app) if hasattr(m, "cache")).cache
    assert 0 < cache.bytes <= 0.05 * 1024 * 1024


def _middlewares(app: object) -> list[object]:
    found = []
    layer = app.middleware_stack  # type: ignore[attr-defined]
    while layer is not None:
        found.append(layer)
        layer = getattr(layer, "app", None)
    return found
