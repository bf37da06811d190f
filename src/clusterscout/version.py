"""The package version, in a module of its own so any layer can read it without a cycle."""

from __future__ import annotations

from typing import Final

__version__: Final = "0.1.0"
