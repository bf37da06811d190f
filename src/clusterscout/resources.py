"""Files shipped inside the package: the bundled catalog (``data/``) and the guides and FAQ.

The repository keeps them once, at its root (``data/``, ``content/``); the build maps them into
the package as ``clusterscout.data`` and ``clusterscout.content`` (pyproject ``package-dir``),
so an editable install reads the repository's files and a wheel carries its own copy.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Final

CATALOG_PACKAGE: Final = "clusterscout.data"
CONTENT_PACKAGE: Final = "clusterscout.content"


class MissingResourceError(RuntimeError):
    """The installation lacks a directory the package ships (a broken or partial install)."""


def _package_dir(name: str) -> Path:
    # find_spec locates the package without running it, so no bytecode lands in data/.
    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        msg = f"{name} is not installed; reinstall clusterscout (pip install .)"
        raise MissingResourceError(msg)
    return Path(locations[0])


def bundled_catalog_dir() -> Path:
    """The catalog shipped with the package (the repository's ``data/`` in a checkout)."""
    return _package_dir(CATALOG_PACKAGE)


def content_dir() -> Path:
    """The guides and FAQ shipped with the package (``content/{lang}/{kind}/{slug}.md``)."""
    return _package_dir(CONTENT_PACKAGE)
