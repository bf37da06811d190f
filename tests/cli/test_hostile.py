"""Hostile CLI input: every bad value is a one-line ``error:`` naming it, exit 2, no traceback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterscout.cli import app
from clusterscout.settings import Settings
from clusterscout.store import db as store_db

runner = CliRunner()

COLLECTIVE = {
    "cluster": {
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "nodes": 2,
        "fabric": "infiniband",
        "per_node_gbps": 3200,
    },
    "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 1e9},
}


@pytest.fixture
def db(fixture_settings: Settings) -> list[str]:
    return ["--database-url", fixture_settings.resolved_database_url()]


def _one_line_error(result: object, needle: str) -> None:
    stderr = getattr(result, "stderr", "")
    assert getattr(result, "exit_code", None) == 2, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error:"), stderr
    assert needle in lines[0], stderr


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "nested too deeply"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"", "invalid JSON"),
    ],
)
def test_estimate_unreadable_json_is_one_line(
    tmp_path: Path, db: list[str], content: bytes, needle: str
) -> None:
    path = tmp_path / "scenario.json"
    path.write_bytes(content)
    _one_line_error(runner.invoke(app, ["estimate", str(path), *db]), needle)


def test_estimate_empty_path_is_named(db: list[str]) -> None:
    _one_line_error(runner.invoke(app, ["estimate", "", *db]), "file name is empty")


def test_check_model_unreadable_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(b"[" * 100_000)
    _one_line_error(runner.invoke(app, ["check-model", str(path)]), "nested too deeply")


def test_check_model_skips_points_that_are_not_objects(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"points": [1, "x", None, {"id": "p", "value": 0}]}))
    result = runner.invoke(app, ["check-model", str(path), "--data-dir", str(fixture_data_dir)])
    assert result.exit_code == 0, result.output
    assert "not a JSON object: 1" in result.stdout
    assert "expressed 0 of 4 points" in result.stdout


@pytest.mark.parametrize(
    ("workload", "needle"),
    [
        ({"kind": "batch", "gpu_hours": 5e-324}, "workload.gpu_hours: must be at least"),
        (
            {"kind": "hpc", "step_time_one_node_s": 5e-324, "message_bytes": 1e6},
            "workload.step_time_one_node_s: must be at least",
        ),
    ],
)
def test_estimate_vanishing_values_are_rejected_not_crashed(
    tmp_path: Path, db: list[str], workload: dict[str, object], needle: str
) -> None:
    scenario = {**COLLECTIVE, "workload": workload}
    scenario["cluster"] = {**COLLECTIVE["cluster"], "gpus_per_node": 72, "nodes": 100_000}  # type: ignore[dict-item]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    _one_line_error(runner.invoke(app, ["estimate", str(path), *db]), needle)


def test_estimate_huge_model_shape_is_rejected(tmp_path: Path, db: list[str]) -> None:
    scenario = {
        "cluster": COLLECTIVE["cluster"],
        "workload": {
            "kind": "training",
            "model": {"params": 7e9, "layers": 1e308},
            "seq_len": 4096,
            "global_batch": 16,
        },
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    _one_line_error(
        runner.invoke(app, ["estimate", str(path), *db]), "workload.model.layers: must be at most"
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "7B", "--tokens", "1e9", "--gpu", "TPU"], "--gpu: unknown GPU 'TPU'"),
        (["--model", "7B", "--tokens", "1e9", "--max-nodes", "100001"], "--max-nodes: must be"),
        (["--model", "7B", "--tokens", "1e9", "--limit", "-1"], "--limit: must be at least 0"),
        (["--model", "7B", "--tokens", "1e9", "--max-nodes", "abc"], "--max-nodes: 'abc' is not"),
        # The API's rules: 1e3 steps is a whole number (accepted), 2.5 is not.
        (["--model", "7B", "--steps", "2.5"], "--steps: must be a whole number"),
        (["--model", "7B", "--tokens", "1e9", "--fabric", "pigeon"], "--fabric: 'pigeon' is not"),
        (["--model", "7B", "--tokens", "1e9", "--rdma", "maybe"], "--rdma: 'maybe' is not a bool"),
    ],
)
def test_plan_bad_flags_are_one_line_naming_the_flag(
    db: list[str], args: list[str], needle: str
) -> None:
    _one_line_error(runner.invoke(app, ["plan", *args, *db]), needle)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["stale", "--days", "-1"], "'--days'"),
        (["offers", "--bogus"], "No such option '--bogus'"),
        (["no-such-command"], "No such command"),
        (["compare"], "Missing argument"),
        (["offers", "--min-nodes", "99999999999999999999999"], "--min-nodes: "),
        (["offers", "--min-gbps", "1e308"], "--min-gbps: '1e308' must be at most"),
    ],
)
def test_usage_errors_are_one_line(db: list[str], args: list[str], needle: str) -> None:
    _one_line_error(runner.invoke(app, [*args, *db]), needle)


def test_help_still_exits_0() -> None:
    result = runner.invoke(app, ["plan", "--help"])
    assert result.exit_code == 0
    assert "--max-nodes" in result.stdout


def test_validate_on_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "data.toml"
    path.write_text("")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert "is a file, not a directory" in result.stdout


@pytest.mark.parametrize("kind", ["directory", "not-a-database", "parent-is-a-file"])
def test_unusable_sqlite_file_is_one_line(tmp_path: Path, kind: str) -> None:
    if kind == "directory":
        target = tmp_path
    elif kind == "not-a-database":
        target = tmp_path / "x.db"
        target.write_text("this is not sqlite " * 100)
    else:
        (tmp_path / "file").write_text("x")
        target = tmp_path / "file" / "sub" / "x.db"
    for command in ("providers", "build-db"):
        result = runner.invoke(app, [command, "--database-url", f"sqlite:///{target}"])
        _one_line_error(result, "--database-url: cannot")


def test_closed_postgres_port_fails_fast_with_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends
    url = f"postgresql+psycopg://u:secret@127.0.0.1:{port}/db"
    for command in ("providers", "build-db"):
        result = runner.invoke(app, [command, "--database-url", url])
        _one_line_error(result, "--database-url: cannot open")
        assert "secret" not in result.stderr


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (a hung database server)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_silent_postgres_server_times_out(
    silent_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_db, "CONNECT_TIMEOUT_S", 2)
    url = f"postgresql+psycopg://u@127.0.0.1:{silent_server}/db"
    started = time.monotonic()
    result = runner.invoke(app, ["providers", "--database-url", url])
    assert time.monotonic() - started < 15
    _one_line_error(result, "--database-url: cannot open")
