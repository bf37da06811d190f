"""A wheel carries everything: installed in a fresh virtualenv, it runs from any directory.

The wheel is built without network (no build isolation; setuptools comes with the dev extra),
installed without dependencies into a new virtualenv that borrows this environment's
site-packages for them, and then run from an unrelated directory: ``build-db`` reads the
bundled catalog, ``serve`` shows the guide and the FAQ, and the Python API plans.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = {"clusterscout.data": "data", "clusterscout.content": "content"}


def test_the_package_list_names_every_package_and_the_bundled_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert sorted(config["packages"]) == sorted([*find_packages(str(ROOT / "src")), *BUNDLED])
    assert {k: v for k, v in config["package-dir"].items() if k} == BUNDLED
    for directory in BUNDLED.values():
        # An editable install finds a mapped package only through its __init__.py.
        assert (ROOT / directory / "__init__.py").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv with the wheel of this tree installed; yields its bin directory."""
    tmp = tmp_path_factory.mktemp("wheel")
    tree = tmp / "tree"
    # A copy of what the build reads, so the repository's build/ and egg-info stay untouched.
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "data", "content", "src"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            shutil.copy2(source, tree / name)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-build-isolation", "--no-deps", "-w", str(dist), str(tree)],
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("clusterscout-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    # Dependencies come from this environment (added after the install, so pip never sees
    # the editable clusterscout here); .pth lines of that directory are not run.
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield venv / "bin"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLUSTERSCOUT_")}
    return {**env, "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}


def test_wheel_runs_from_an_unrelated_directory(installed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _env(tmp_path)
    where = subprocess.run(
        [str(installed / "python"), "-c", "import clusterscout; print(clusterscout.__file__)"],
        cwd=elsewhere,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert str(installed.parent) in where  # the installed copy, not the source tree

    built = subprocess.run(
        [str(installed / "clusterscout"), "build-db"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("built ")

    plan = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "from clusterscout import Catalog; c = Catalog.open(); "
            "print(c.plan(model='70B', tokens=1e12, gpu='H100').options[0])",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.startswith("PlanOption(offer=PlanOffer(")

    port = _free_port()
    with subprocess.Popen(
        [str(installed / "clusterscout"), "serve", "--port", str(port)],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as server:
        try:
            page = _get_when_up(f"http://127.0.0.1:{port}/en/multi-node/", server)
        finally:
            server.terminate()
            server.wait(timeout=10)
    assert page.status_code == 200
    assert 'id="guide"' in page.text
    assert "Why the network is the product" in page.text
    assert 'id="faq"' in page.text
    assert "Which fabric should I look for?" in page.text


def _get_when_up(url: str, server: subprocess.Popen[bytes]) -> httpx.Response:
    # Polled, not timed: the loop ends as soon as the server answers or exits.
    for _ in range(300):
        if server.poll() is not None:
            stderr = server.stderr.read().decode() if server.stderr else ""
            pytest.fail(f"serve exited with {server.returncode}: {stderr}")
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail("serve did not answer")
