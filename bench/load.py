"""Load benchmark: serve the app with several uvicorn workers on loopback and drive two URLs.

Usage: ``.venv/bin/python bench/load.py [--workers 4] [--seconds 10] [--concurrency 8]``

Builds the SQLite database from data/ if missing, starts ``clusterscout serve`` on a free port,
then runs an httpx async load generator per URL for a bounded time and prints requests/s, p50 and
p99 latency. Conditional requests (ETag) are not used: every request is a full render.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

URLS = ("/en/multi-node/?fabric=infiniband&rdma=true", "/api/v1/offers?multi_node=true")
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(port: int, workers: int) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).with_name("clusterscout")
    cmd = [str(exe), "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


async def _drive(base: str, path: str, seconds: float, concurrency: int) -> list[float]:
    latencies: list[float] = []
    errors = 0
    stop = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=10) as client:

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop:
                start = time.perf_counter()
                r = await client.get(path)
                latencies.append(time.perf_counter() - start)
                if r.status_code != 200:
                    errors += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    if errors:
        print(f"  {errors} non-200 answers")
    return latencies


def main() -> None:
    """Run the benchmark and print one line per URL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    port = _free_port()
    proc = _start(port, args.workers)
    base = f"http://127.0.0.1:{port}"
    try:
        asyncio.run(_drive(base, URLS[0], 1.0, 4))  # warm-up: templates, caches
        print(f"{args.workers} workers, {args.concurrency} connections, {args.seconds:g} s per URL")
        for path in URLS:
            lat = asyncio.run(_drive(base, path, args.seconds, args.concurrency))
            q = statistics.quantiles(lat, n=100)
            print(
                f"{path}\n  {len(lat) / args.seconds:8.0f} req/s   "
                f"p50 {q[49] * 1000:6.1f} ms   p99 {q[98] * 1000:6.1f} ms   ({len(lat)} requests)"
            )
    finally:
        proc.terminate()
        proc.wait(timeout=15)


if __name__ == "__main__":
    main()
