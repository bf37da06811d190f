"""clusterscout: compare and plan multi-node GPU cluster rentals, with sources."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clusterscout.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from clusterscout.library import Catalog as Catalog

__all__ = ["Catalog", "__version__"]


def __getattr__(name: str) -> Any:
    # Imported lazily so `import clusterscout` stays cheap for the CLI and the web workers.
    if name == "Catalog":
        from clusterscout.library import Catalog  # noqa: PLC0415

        return Catalog
    raise AttributeError(name)
