"""Browser fixtures: the app served by uvicorn on a free loopback port, and Debian Chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from clusterscout.settings import Settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def live_server(
    fixture_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Base URL of the app served over the fixture catalog by a uvicorn subprocess."""
    port = _free_port()
    env = {
        **os.environ,
        "CLUSTERSCOUT_DATABASE_URL": str(fixture_settings.database_url),
        "CLUSTERSCOUT_DATA_DIR": str(fixture_settings.data_dir),
    }
    log = (tmp_path_factory.mktemp("server") / "uvicorn.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "clusterscout.web.app:app_from_env", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    # Generous: on a loaded 2-core machine the first import and snapshot take tens of seconds.
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the app did not start; see {log.name}")
        time.sleep(0.1)
    yield base
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian Chromium through Playwright (skipped, with the reason, when it is not installed)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (make test installs it with apt as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where screenshots go (git-ignored)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
