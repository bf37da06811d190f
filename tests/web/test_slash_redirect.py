"""The trailing-slash redirect names a path of this site only: no Host or X-Forwarded-*
header can send a visitor elsewhere (an open redirect with ``allowed_hosts = *``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from web_support import TestClient

from clusterscout.settings import Settings
from clusterscout.web.app import create_app

HOSTILE = {
    "host": "evil.example",
    "x-forwarded-proto": "javascript",
    "x-forwarded-host": "evil.example",
}


@pytest.fixture(scope="module")
def any_host(fixture_settings: Settings) -> Iterator[TestClient]:
    app = create_app(fixture_settings.model_copy(update={"allowed_hosts": ["*"]}))
    with TestClient(app, follow_redirects=False) as client:
        yield client


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/en/offers", "/en/offers/"),
        ("/en/offers?fabric=infiniband", "/en/offers/?fabric=infiniband"),
        ("/api/v1/offers/", "/api/v1/offers"),
        ("/en/plan", "/en/plan/"),
    ],
)
def test_the_slash_redirect_is_relative(any_host: TestClient, path: str, location: str) -> None:
    r = any_host.get(path, headers=HOSTILE)
    assert r.status_code == 307
    assert r.headers["location"] == location


@pytest.mark.parametrize("path", ["//evil.example", "//evil.example/", "/\\evil.example/"])
def test_a_path_that_reads_as_another_host_is_not_redirected(
    any_host: TestClient, path: str
) -> None:
    # A full URL, so the client sends the path as it is (not as a host).
    r = any_host.get(f"http://testserver{path}", headers=HOSTILE)
    assert r.status_code in {400, 404}
    assert "location" not in r.headers


def test_a_route_that_answers_404_itself_is_not_redirected(client: TestClient) -> None:
    r = client.get("/en/providers/no-such-provider/")
    assert r.status_code == 404
    assert "location" not in r.headers
