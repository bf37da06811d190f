"""A real server for tests: ``clusterscout serve`` in a subprocess on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(env: Mapping[str, str], log: Path, *, workers: int = 1) -> Iterator[str]:
    """Run the server with ``env`` added to ours; yields its base URL, stops it after."""
    port = free_port()
    cmd = [sys.executable, "-m", "clusterscout", "serve", "--host", "127.0.0.1",
           "--port", str(port), "--workers", str(workers)]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=out, stderr=out)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    msg = f"the server did not start:\n{log.read_text()[-2000:]}"
                    raise RuntimeError(msg)
                time.sleep(0.1)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
