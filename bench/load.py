"""Load benchmark: clusterscout and Datasette on the same SQLite file, one worker each, loopback.

Usage: ``.venv/bin/python bench/load.py [--seconds 8] [--concurrency 16] [--soak 60]
[--datasette PATH] [--client wrk|python]``

Starts servers on free ports over the database ``make build-db`` wrote: clusterscout with its
response cache (the *cached* figures: the same URL again and again), clusterscout with the
cache off (*uncached*: every answer rendered, as when users vary filters), and Datasette (a
bench-only tool, installed by ``make bench`` in a venv of its own), one worker each; then the
uncached cases again with one clusterscout worker per core, as it would be deployed. It prints
req/s, p50 and p99 for each case side by side, the compressed sizes, and then a mixed soak
(pages, API, plans, estimates) with the server's resident memory sampled every second.

Every case, the soak included, is driven by ``wrk`` when it is installed (``make bench`` installs
Debian's package when it can): a Python client on the same two cores took about as much CPU as
the server and added its own pauses to the tail, so its p99 was not the server's.
``--client python`` uses the Python client instead and splits the soak's figures by kind.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

ROOT = Path(__file__).resolve().parents[1]
DB = ROOT / "build" / "clusterscout.sqlite3"
API = "/api/v1/offers?fabric=infiniband&rdma=true&limit=50"
PAGE = "/en/offers/?fabric=infiniband&rdma=true"
# The same 50 rows, by the same order, as Datasette SQL JSON (the review's comparison).
DS_SQL = (
    "select record_json from offers where fabric = 'infiniband' and gpudirect_rdma = 1 "
    "order by from_usd_per_gpu_hour is null, from_usd_per_gpu_hour, id limit 50"
)
DS_API = (
    "/clusterscout.json?"
    + httpx.QueryParams({"sql": DS_SQL, "_shape": "array", "_json": "record_json"}).__str__()
)
DS_PAGE = "/clusterscout/offers?fabric=infiniband&gpudirect_rdma=1&_size=50"
CODE_HOME = ROOT / "src"
CLIENTS: Final = {
    "wrk": "wrk, one thread (C; it takes little of the 2 cores the server also runs on)",
    "python": "httpx asyncio in this process (it shares the cores: tails are the client's too)",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server(cmd: list[str], env: dict[str, str], health: str) -> Iterator[tuple[str, int]]:
    """Run ``cmd`` (``{port}`` filled in); yield its base URL and pid; stop it after."""
    port = _free_port()
    argv = [a.replace("{port}", str(port)) for a in cmd]
    proc = subprocess.Popen(
        argv, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + health, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode()[-2000:] if proc.stderr else ""
                raise SystemExit(f"{argv[0]} did not start:\n{err}")
            time.sleep(0.2)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@dataclass
class Result:
    """Rate, latency quantiles (s), failures and the server's CPU seconds of one timed run."""

    count: int
    errors: int
    seconds: float
    p50: float
    p99: float
    cpu_s: float = 0.0
    kinds: dict[str, Result] = field(default_factory=dict)
    """The same figures per kind of request (page, API, plan, estimate) of a mixed run."""

    @classmethod
    def of(cls, latencies: list[float], errors: int, seconds: float) -> Result:
        """From each request's latency, as the Python client measures them."""
        q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
        return cls(len(latencies), errors, seconds, q[49], q[98])

    def line(self, name: str) -> str:
        """One row of the table."""
        # The server's CPU is read per run, not per kind of request: no figure for a kind.
        cpu = f"{self.cpu_s * 1000 / max(self.count, 1):7.2f}" if self.cpu_s else f"{'-':>7}"
        return (
            f"| {name:<44} | {self.rate:8.0f} | {self.p50 * 1000:7.1f} | {self.p99 * 1000:7.1f} "
            f"| {cpu} | {self.errors:6d} |"
        )

    @property
    def rate(self) -> float:
        """Requests per second."""
        return self.count / self.seconds


Request = tuple[str, str, dict[str, object] | None]  # method, path, JSON body


async def _drive(
    base: str, pick: Callable[[], Request], seconds: float, concurrency: int
) -> Result:
    latencies: dict[str, list[float]] = {}
    errors = 0
    stop = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Accept-Encoding": "gzip"}
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30, headers=headers) as c:

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop:
                method, path, body = pick()
                start = time.perf_counter()
                try:
                    r = await c.request(method, path, json=body)
                    ok = r.status_code == 200
                except httpx.HTTPError:
                    ok = False
                latencies.setdefault(_kind(method, path), []).append(time.perf_counter() - start)
                errors += not ok

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    result = Result.of([x for xs in latencies.values() for x in xs], errors, seconds)
    if len(latencies) > 1:
        result.kinds = {k: Result.of(xs, 0, seconds) for k, xs in sorted(latencies.items())}
    return result


def _kind(method: str, path: str) -> str:
    if method == "POST":
        return path.rsplit("/", 1)[-1]  # plan, estimate
    return "api" if path.startswith("/api/") else "page"


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds so far of a server and its live child processes (plan
    workers), from /proc."""
    ticks = 0
    for one in _family(pid):
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended between the listing and the read
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _wrk(
    base: str, path: str, seconds: float, concurrency: int, extra: Sequence[str] = ()
) -> Result:
    """One timed run of ``wrk`` (C, one thread): it leaves the cores to the server."""
    argv = [
        # A request still unanswered after 30 s counts as an error, as with the Python client.
        "wrk", "-t1", f"-c{concurrency}", f"-d{max(1, round(seconds))}s", "--timeout", "30s",
        "--latency",
        "-H", "Accept-Encoding: gzip", *extra, base + path,
    ]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return _parse_wrk(out)


WRK_UNITS: Final = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def _wrk_time(text: str) -> float:
    """Seconds from a wrk duration: ``812.50us``, ``35.44ms``, ``10.01s``, ``1.00m``."""
    number = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if number is None:
        raise SystemExit(f"could not read wrk's duration {text!r}")
    return float(number[1]) * WRK_UNITS[number[2]]


def _parse_wrk(out: str) -> Result:
    """Count, errors and p50/p99 from ``wrk --latency`` output."""
    quantiles: dict[str, float] = {}
    count, seconds, errors = 0, 1.0, 0
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in ("50%", "99%"):
            quantiles[words[0]] = _wrk_time(words[1])
        elif " requests in " in line:
            count, seconds = int(words[0]), _wrk_time(words[3].rstrip(","))
        elif line.strip().startswith("Non-2xx or 3xx responses:"):
            errors += int(words[-1])
        elif line.strip().startswith("Socket errors:"):
            errors += sum(int(n) for n in re.findall(r"\d+", line))
    if count == 0 or len(quantiles) != 2:
        raise SystemExit(f"could not read wrk's output:\n{out}")
    return Result(count, errors, seconds, quantiles["50%"], quantiles["99%"])


def _run(base: str, path: str, seconds: float, concurrency: int, pid: int, wrk: bool) -> Result:
    """Warm up for a second, then one timed run of the same URL, with the server's CPU time."""
    # One request alone first: it pays the cold costs (templates, kept rows) a second of
    # 16 concurrent cold requests might not get through.
    httpx.get(base + path, timeout=60)
    if wrk:
        _wrk(base, path, 1.0, concurrency)
    else:
        asyncio.run(_drive(base, _same(path), 1.0, concurrency))
    before = _cpu_s(pid)
    if wrk:
        result = _wrk(base, path, seconds, concurrency)
    else:
        result = asyncio.run(_drive(base, _same(path), seconds, concurrency))
    # Server CPU per request does not depend on what else the machine runs; req/s does.
    result.cpu_s = _cpu_s(pid) - before
    return result


def _same(path: str) -> Callable[[], Request]:
    return lambda: ("GET", path, None)


def _rss_mib(pid: int) -> float:
    """Resident memory of the server and its child processes (plan workers), MiB."""
    total = 0.0
    for one in _family(pid):
        try:
            status = Path(f"/proc/{one}/status").read_text()
        except OSError:  # it ended between the listing and the read
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
    return total


def _family(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc/PID/task/TID/children)."""
    found, todo = [], [pid]
    while todo:
        one = todo.pop()
        found.append(one)
        for tasks in Path(f"/proc/{one}/task").glob("*/children"):
            try:
                todo.extend(int(c) for c in tasks.read_text().split())
            except OSError:
                continue
    return found


def _mixed(rng: random.Random) -> Callable[[], Request]:
    fabrics = ("infiniband", "roce", "ethernet", "efa")
    pages = ("multi-node/", "offers/", "")

    def query() -> str:
        # In canonical (sorted) order: a page redirects other orders to this one.
        parts = [f"fabric={rng.choice(fabrics)}"]
        if rng.random() < 0.5:
            parts.append(f"min_gbps={rng.choice((400, 800, 1600, 3200))}")
        if rng.random() < 0.5:
            parts.append(f"rdma={rng.choice(('true', 'false'))}")
        return "&".join(parts)

    def pick() -> Request:
        roll = rng.random()
        if roll < 0.3:
            lang = rng.choice(("en", "de", "fr", "pt", "es"))
            return "GET", f"/{lang}/{rng.choice(pages)}?{query()}", None
        if roll < 0.7:
            return "GET", f"/api/v1/offers?{query()}&limit={rng.choice((20, 50, 100))}", None
        if roll < 0.9:
            body = {
                "model": rng.choice(("7B", "13B", "70B", "405B")),
                "tokens": rng.choice((1e10, 1e11, 1e12)),
                "max_nodes": rng.choice((4, 8, 16, 32)),
            }
            return "POST", "/api/v1/plan", body
        scenario = {
            "cluster": {
                "gpu": "H100-SXM-80GB",
                "gpus_per_node": 8,
                "nodes": rng.choice((2, 4, 8, 16)),
                "fabric": "infiniband",
                "per_node_gbps": rng.choice((1600, 3200)),
            },
            "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 1 << 30},
        }
        return "POST", "/api/v1/estimate", scenario

    return pick


def _sizes(base: str) -> list[str]:
    out = []
    for path in ("/en/multi-node/", "/api/v1/offers"):
        plain = httpx.get(base + path, headers={"Accept-Encoding": "identity"}).content
        row = [f"{path}: {len(plain):,} B"]
        for enc in ("gzip", "br"):
            with httpx.stream("GET", base + path, headers={"Accept-Encoding": enc}) as r:
                raw = b"".join(r.iter_raw())
                row.append(f"{r.headers.get('content-encoding')} {len(raw):,} B")
        out.append(", ".join(row))
    return out


def main() -> None:
    """Run every case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--soak", type=float, default=60.0, help="mixed soak seconds (0: skip)")
    parser.add_argument("--datasette", default=shutil.which("datasette") or "")
    parser.add_argument(
        "--client",
        choices=("wrk", "python"),
        default="wrk" if shutil.which("wrk") else "python",
        help="load generator (python: also splits the soak's latencies by kind of request)",
    )
    parser.add_argument(
        "--burst-only",
        action="store_true",
        help="run only the plan burst (60 heavy plans while probing cheap requests)",
    )
    parser.add_argument(
        "--database-url", default="", help="serve this database instead of the SQLite file"
    )
    args = parser.parse_args()
    wrk = args.client == "wrk"
    if args.burst_only:
        exe = str(Path(sys.executable).with_name("clusterscout"))
        serve = [exe, "serve", "--host", "127.0.0.1", "--port", "{port}", "--workers", "1"]
        env = {"CLUSTERSCOUT_SQLITE_PATH": str(DB)}
        if args.database_url:
            env["CLUSTERSCOUT_DATABASE_URL"] = args.database_url
        with _server(serve, env, "/healthz") as (b, _pid):
            _burst(b)
        return
    if not DB.is_file():
        raise SystemExit(f"{DB} is missing: run make build-db")
    exe = str(Path(sys.executable).with_name("clusterscout"))
    serve = [exe, "serve", "--host", "127.0.0.1", "--port", "{port}", "--workers", "1"]
    env = {"CLUSTERSCOUT_SQLITE_PATH": str(DB)}
    n, secs = args.concurrency, args.seconds
    print(f"one worker each, {n} connections, {secs:g} s per case, same file {DB.name}")
    print(f"client: {CLIENTS[args.client]}\n")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print(
        f"| {'case':<44} | {'req/s':>8} | {'p50 ms':>7} | {'p99 ms':>7} | {'CPU ms':>7} "
        f"| {'errors':>6} |"
    )
    print(f"|{'-' * 46}|{'-' * 10}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 8}|")
    uncached_env = {**env, "CLUSTERSCOUT_RESPONSE_CACHE_MB": "0"}
    with _server(serve, uncached_env, "/healthz") as (b, pid):
        uncached_api = _run(b, API, secs, n, pid, wrk)
        print(uncached_api.line("clusterscout API, uncached"), flush=True)
        uncached_page = _run(b, PAGE, secs, n, pid, wrk)
    ds_api = ds_page = None
    if args.datasette:
        ds = [args.datasette, "serve", str(DB), "--port", "{port}", "--host", "127.0.0.1",
              "--setting", "sql_time_limit_ms", "1000"]  # fmt: skip
        with _server(ds, {}, "/-/versions.json") as (b, pid):
            ds_api = _run(b, DS_API, secs, n, pid, wrk)
            print(ds_api.line("Datasette SQL JSON, same 50 rows"), flush=True)
            ds_page = _run(b, DS_PAGE, secs, n, pid, wrk)
    print(uncached_page.line("clusterscout HTML listing, uncached"))
    if ds_page is not None:
        print(ds_page.line("Datasette HTML table page"))
    cores = os.cpu_count() or 1
    if cores > 1:
        # How the app is meant to run on this machine: one worker process per core.
        per_core = [*serve[:-1], str(cores)]
        with _server(per_core, uncached_env, "/healthz") as (b, pid):
            label = f"{cores} workers"
            print(_run(b, API, secs, n, pid, wrk).line(f"clusterscout API, uncached, {label}"))
            print(_run(b, PAGE, secs, n, pid, wrk).line(f"clusterscout HTML, uncached, {label}"))
    with _server(serve, env, "/healthz") as (b, pid):
        cached = _run(b, API, secs, n, pid, wrk)
        print(cached.line("clusterscout API, response cache hit"))
        print(_run(b, PAGE, secs, n, pid, wrk).line("clusterscout HTML listing, cache hit"))
        print(
            "\nCPU ms: the server's CPU time per request, its plan worker included "
            "(independent of other load)."
        )
        if ds_api is not None:
            ratio = uncached_api.rate / ds_api.rate
            cpu = (ds_api.cpu_s / ds_api.count) / (uncached_api.cpu_s / uncached_api.count)
            print(f"uncached API / Datasette SQL JSON: {ratio:.2f}x req/s, {cpu:.2f}x per CPU")
        for line in _sizes(b):
            print(line)
        if args.soak > 0:
            _soak(b, pid, args.soak, n, wrk)
    with _server(serve, env, "/healthz") as (b, _pid):
        _burst(b)  # a fresh server: no plan of the soak in its caches


BURST_PLANS: Final = 60
PROBES: Final = ("/healthz", "/en/multi-node/")


def _heavy_plan(i: int) -> dict[str, object]:
    """A plan that takes the planner seconds, distinct for each ``i`` (no cache hit)."""
    return {
        "model": "deepseek-v3",
        "tokens": (10 + i) * 10**12 + random.randrange(10**9),
        "max_nodes": 100_000,
        "seq_len": 512 << (i % 4),
        "batch_tokens": (1 << (i % 5)) * 1_048_576,
    }


def _burst(base: str) -> None:
    """60 concurrent distinct heavy plans while /healthz and a cached page are probed.

    Prints the probes' p50/p99, each plan status with its count, and how long the slowest
    refusal (503/429) took: the queue should turn surplus plans away at once.
    """

    async def run() -> tuple[dict[str, list[float]], list[tuple[int, float]]]:
        probes: dict[str, list[float]] = {p: [] for p in PROBES}
        plans: list[tuple[int, float]] = []
        limits = httpx.Limits(max_connections=BURST_PLANS + 10)
        async with httpx.AsyncClient(base_url=base, timeout=180, limits=limits) as c:
            for path in PROBES:
                await c.get(path)  # cached from here on

            async def plan(i: int) -> None:
                start = time.perf_counter()
                try:
                    status = (await c.post("/api/v1/plan", json=_heavy_plan(i))).status_code
                except httpx.HTTPError:
                    status = 0
                plans.append((status, time.perf_counter() - start))

            async def probe() -> None:
                while len(plans) < BURST_PLANS:
                    for path in PROBES:
                        start = time.perf_counter()
                        try:
                            ok = (await c.get(path)).status_code == 200
                        except httpx.HTTPError:
                            ok = False
                        probes[path].append(time.perf_counter() - start if ok else float("inf"))
                    await asyncio.sleep(0.1)

            await asyncio.gather(probe(), *(plan(i) for i in range(BURST_PLANS)))
        return probes, plans

    probes, plans = asyncio.run(run())
    print(f"\nplan burst: {BURST_PLANS} concurrent distinct heavy plans")
    for path, times in probes.items():
        q = statistics.quantiles(times, n=100) if len(times) > 1 else times * 99
        print(
            f"  probe {path:<18} {len(times):4d} requests, p50 {q[49] * 1000:7.1f} ms, "
            f"p99 {q[98] * 1000:7.1f} ms, failed {sum(t == float('inf') for t in times)}"
        )
    statuses = sorted({s for s, _ in plans})
    counts = ", ".join(
        f"{s or 'no answer'} x{sum(1 for x, _ in plans if x == s)}" for s in statuses
    )
    refused = [t for s, t in plans if s in {429, 503}]
    slowest = f"{max(refused) * 1000:.0f} ms" if refused else "-"
    print(f"  plans: {counts}; slowest refusal {slowest}")


def _soak(base: str, pid: int, seconds: float, concurrency: int, wrk: bool) -> None:
    """The mixed soak, with the server's resident memory sampled every second."""
    rss: list[float] = []
    pick = _mixed(random.Random(10))  # the same sequence every run

    async def sample(done: Callable[[], bool]) -> None:
        while not done():
            rss.append(_rss_mib(pid))
            await asyncio.sleep(1)

    async def both() -> Result:
        if wrk:
            load = asyncio.to_thread(_wrk_mixed, base, pick, seconds, concurrency)
        else:
            load = _drive(base, pick, seconds, concurrency)
        run = asyncio.create_task(load)
        await sample(run.done)
        return await run

    start, cpu = _rss_mib(pid), _cpu_s(pid)
    result = asyncio.run(both())
    result.cpu_s = _cpu_s(pid) - cpu
    half = rss[len(rss) // 2 :] or [start]
    print(f"\nmixed soak {seconds:g} s (30% pages, 40% API, 20% plan, 10% estimate):")
    print(result.line("mixed"))
    for kind, part in result.kinds.items():
        print(part.line(f"  {kind} ({part.count} requests)"))
    print(
        f"RSS MiB: start {start:.0f}, max {max(rss, default=start):.0f}, "
        f"second half {min(half):.0f}..{max(half):.0f}, end {rss[-1] if rss else start:.0f}"
    )


SOAK_REQUESTS: Final = 50_000
"""Requests drawn up front for wrk (more than a minute's worth; it starts over if it runs out)."""


def _wrk_mixed(base: str, pick: Callable[[], Request], seconds: float, concurrency: int) -> Result:
    """The mixed soak by wrk: the sequence ``pick`` draws, written out as a Lua table.

    The requests come from the same generator as the Python client's, so both clients send the
    same mix; wrk reports one latency distribution for all kinds.
    """
    entries = []
    for _ in range(SOAK_REQUESTS):
        method, path, body = pick()
        data = "nil" if body is None else _lua_string(json.dumps(body))
        entries.append(f"{{{_lua_string(method)},{_lua_string(path)},{data}}}")
    script = (
        "local reqs = {\n" + ",\n".join(entries) + "\n}\n"
        "local json = {['Content-Type'] = 'application/json'}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i % #reqs + 1\n"
        "  local r = reqs[i]\n"
        "  if r[3] then return wrk.format(r[1], r[2], json, r[3]) end\n"
        "  return wrk.format(r[1], r[2])\n"
        "end\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", encoding="utf-8") as lua:
        lua.write(script)
        lua.flush()
        return _wrk(base, "/", seconds, concurrency, ["-s", lua.name])


def _lua_string(text: str) -> str:
    """``text`` as a Lua long string literal (no escapes to get wrong)."""
    level = "="
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"


if __name__ == "__main__":
    main()
