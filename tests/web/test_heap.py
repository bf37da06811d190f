"""A served process hides its start-up heap from the cyclic garbage collector."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import gc
from clusterscout.web.app import app_from_env
app_from_env()
print(gc.get_freeze_count(), len(gc.get_objects()))
"""


def test_served_app_freezes_its_startup_heap(fixture_db_path: Path) -> None:
    # In a child process: freezing in the test process would hide the suite's own objects.
    env = {
        **os.environ,
        "CLUSTERSCOUT_DATABASE_URL": f"sqlite:///{fixture_db_path}",
        "CLUSTERSCOUT_PUBLIC_URL": "http://127.0.0.1:8000",
    }
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    frozen, tracked = (int(n) for n in out.stdout.split())
    # A full collection walks only the tracked objects: what the app built is not among them.
    assert frozen > 50_000
    assert tracked < frozen / 100
