"""Web fixtures: one app over the fixture catalog per session and an in-process client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from web_support import TestClient

from clusterscout.settings import Settings
from clusterscout.web.app import create_app


@pytest.fixture(scope="session")
def web_app(fixture_settings: Settings) -> FastAPI:
    """The app over the fixture catalog."""
    return create_app(fixture_settings)


@pytest.fixture(scope="session")
def client(web_app: FastAPI) -> Iterator[TestClient]:
    """An in-process client that does not follow redirects."""
    with TestClient(web_app, follow_redirects=False) as c:
        yield c
