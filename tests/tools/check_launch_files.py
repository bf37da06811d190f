"""Load generated launch files with SkyPilot's and dstack's own code (runs in .venv-tools).

Usage: check_launch_files.py DIR. Prints one JSON object: file name -> "ok" or the tool's error.
SkyPilot: ``sky.Task.from_yaml`` (its schema), then every cloud's own feature check (multi-node,
network tier) for the task's resources. dstack: ``parse_apply_configuration`` (its pydantic
configuration models), then whether the fleet's backend implements multi-node provisioning and
whether the GPU name is one dstack's catalog (gpuhunt) knows.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import yaml


def _check_skypilot(path: Path) -> None:
    import sky

    task = sky.Task.from_yaml(str(path))
    for resources in task.resources:
        if resources.cloud is None:
            continue
        features = task.get_required_cloud_features() | resources.get_required_cloud_features()
        resources.cloud.check_features_are_supported(resources, features)


def _multinode_backends() -> set[str]:
    """Backends whose Compute class lists ComputeWithMultinodeSupport, read from dstack's source.

    Importing the backends needs each cloud's SDK; reading their class bases does not.
    """
    from dstack._internal.core import backends

    root = Path(backends.__file__).parent
    found: set[str] = set()
    for compute in root.glob("*/compute.py"):
        tree = ast.parse(compute.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Compute"):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if "ComputeWithMultinodeSupport" in bases:
                    found.add(compute.parent.name)
    return found


_BACKEND_DIRS = {"lambda": "lambdalabs", "hotaisle": "hotaisle"}


def _check_dstack(path: Path, multinode: set[str]) -> None:
    import gpuhunt
    from dstack._internal.core.models.configurations import (
        parse_apply_configuration,
    )

    data = yaml.safe_load(path.read_text())
    conf = parse_apply_configuration(data)
    known = {g.name.lower() for g in (*gpuhunt.KNOWN_NVIDIA_GPUS, *gpuhunt.KNOWN_AMD_GPUS)}
    gpu = conf.resources.gpu
    for name in gpu.name or []:
        if name.lower() not in known:
            msg = f"GPU {name!r} is not in dstack's GPU catalog"
            raise ValueError(msg)
    if data["type"] == "fleet" and (conf.nodes.min or 1) > 1:
        for backend in conf.backends or []:
            folder = _BACKEND_DIRS.get(backend.value, backend.value)
            if folder not in multinode:
                msg = f"dstack backend {backend.value!r} has no multi-node support"
                raise ValueError(msg)


def main() -> int:
    folder = Path(sys.argv[1])
    multinode = _multinode_backends()
    results: dict[str, str] = {}
    for path in sorted(folder.iterdir()):
        try:
            if path.name.endswith(".sky.yaml"):
                _check_skypilot(path)
            elif path.name.endswith(".dstack.yml"):
                _check_dstack(path, multinode)
            else:
                continue
            results[path.name] = "ok"
        except Exception as exc:
            results[path.name] = f"{type(exc).__name__}: {exc}"
    sys.stdout.write(json.dumps(results) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
