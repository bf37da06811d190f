"""Cache poisoning: no request header changes what a later visitor of the same URL gets."""

from __future__ import annotations

from pathlib import Path

import pytest
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from web_support import TestClient

from clusterscout.settings import Settings
from clusterscout.web.app import create_app

PUBLIC = "https://clusterscout.example"
EVIL = "evil.example"
# The three places absolute links appear: robots.txt, the sitemap, canonical/hreflang links.
VECTORS = ("/robots.txt", "/sitemap.xml", "/en/multi-node/?rdma=true")


def _client(db: Path, data: Path, allowed: list[str], *, proxied: bool = False) -> TestClient:
    settings = Settings(
        database_url=f"sqlite:///{db}", data_dir=data, public_url=PUBLIC, allowed_hosts=allowed
    )
    app = create_app(settings)
    # As behind a reverse proxy that uvicorn trusts: X-Forwarded-* rewrite scheme and client.
    asgi = ProxyHeadersMiddleware(app, trusted_hosts="*") if proxied else app
    return TestClient(asgi, base_url=f"http://{allowed[0]}", follow_redirects=False)


@pytest.mark.parametrize("path", VECTORS)
def test_an_unknown_host_is_refused_and_changes_nothing(
    path: str, fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    client = _client(fixture_db_path, fixture_data_dir, ["clusterscout.example"])
    before = client.get(path)
    evil = client.get(path, headers={"Host": EVIL})
    assert evil.status_code == 400
    after = client.get(path)
    assert after.status_code == 200
    assert after.text == before.text
    assert f"{PUBLIC}/" in after.text
    assert EVIL not in after.text


@pytest.mark.parametrize("path", VECTORS)
def test_even_with_any_host_allowed_links_come_from_the_public_url(
    path: str, fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    # The worst configuration: every Host accepted, proxy headers trusted from anyone.
    client = _client(fixture_db_path, fixture_data_dir, ["*"], proxied=True)
    hostile = {
        "Host": EVIL,
        "X-Forwarded-Host": EVIL,
        "X-Forwarded-Proto": "gopher",
        "X-Forwarded-For": "203.0.113.9",
        "Forwarded": f"host={EVIL};proto=http",
    }
    first = client.get(path, headers=hostile)
    assert first.status_code == 200
    assert EVIL not in first.text
    assert "gopher" not in first.text
    later = client.get(path)
    assert later.text == first.text
    assert later.headers["etag"] == first.headers["etag"]
    if path == "/robots.txt":
        assert f"Sitemap: {PUBLIC}/sitemap.xml" in later.text


def test_headers_the_page_does_not_depend_on_do_not_split_or_steer_the_cache(
    fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    client = _client(fixture_db_path, fixture_data_dir, ["clusterscout.example"])
    path = "/en/multi-node/?fabric=infiniband"
    plain = client.get(path)
    steered = client.get(
        path,
        headers={"Accept-Language": "de", "Cookie": "x=1", "User-Agent": "evil", "Accept": "*/*"},
    )
    assert steered.headers["etag"] == plain.headers["etag"]
    assert steered.text == plain.text
    assert 'lang="en"' in steered.text


def test_a_fragment_request_never_answers_a_full_page_request(
    fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    # HX-Request does change the answer (a fragment), so it is part of the key and of Vary.
    client = _client(fixture_db_path, fixture_data_dir, ["clusterscout.example"])
    path = "/en/multi-node/?fabric=infiniband"
    fragment = client.get(path, headers={"HX-Request": "true"})
    full = client.get(path)
    assert "<html" not in fragment.text
    assert "<html" in full.text
    assert fragment.headers["etag"] != full.headers["etag"]
    assert "HX-Request" in full.headers["vary"]


def test_public_url_setting_is_checked() -> None:
    assert Settings(public_url="HTTPS://Site.Example/").site_url() == "https://site.example"
    for bad in ("ftp://x.example", "https://", "https://x.example/sub", "https://x.example/?a=1"):
        with pytest.raises(ValueError, match="public_url"):
            Settings(public_url=bad)
    hosts = Settings(public_url="https://site.example").trusted_hosts()
    assert hosts[0] == "site.example"
    assert "127.0.0.1" in hosts
    assert Settings(public_url="http://[::1]:8000").trusted_hosts()[0] == "[::1]"
    assert Settings(allowed_hosts="a.example, B.example").trusted_hosts() == [
        "a.example",
        "b.example",
    ]


def test_the_api_language_is_part_of_the_key_but_the_raw_header_is_not(
    fixture_db_path: Path, fixture_data_dir: Path
) -> None:
    # The API's free text follows Accept-Language: a German answer must never reach an
    # English reader, and spellings of the same choice must not each take a cache entry.
    client = _client(fixture_db_path, fixture_data_dir, ["clusterscout.example"])
    path = "/api/v1/offers"
    german = client.get(path, headers={"Accept-Language": "de"})
    assert german.headers["content-language"] == "de"
    plain = client.get(path)
    assert plain.headers["content-language"] == "en"
    assert plain.headers["etag"] != german.headers["etag"]
    assert "Accept-Language" in plain.headers["vary"]
    for spelling in ("de-DE", "de;q=0.9, xx;q=0.1", "DE"):
        same = client.get(path, headers={"Accept-Language": spelling})
        assert same.headers["etag"] == german.headers["etag"], spelling
