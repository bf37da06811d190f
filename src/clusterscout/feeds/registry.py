"""Feeds by name: the ``--source`` values of ``clusterscout refresh``."""

from __future__ import annotations

from collections.abc import Callable

from clusterscout.feeds.base import Feed
from clusterscout.feeds.gpuhunt_catalog import GpuhuntFeed
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.skypilot import SkypilotCsvFeed

ALL = "all"

_FACTORIES: dict[str, Callable[[], Feed]] = {
    "gpuhunt": GpuhuntFeed,
    "skypilot-csv": SkypilotCsvFeed,
    "file": FileFeed,
}


def register(name: str, factory: Callable[[], Feed]) -> None:
    """Add (or replace) a feed under ``name``."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    """Registered feed names, sorted."""
    return sorted(_FACTORIES)


def get(name: str) -> Feed:
    """A new feed instance.

    Raises:
        KeyError: for an unknown name (the message lists the known ones).
    """
    try:
        factory = _FACTORIES[name]
    except KeyError:
        msg = f"unknown feed {name!r}; known: {', '.join([*names(), ALL])}"
        raise KeyError(msg) from None
    return factory()


def select_feeds(source: str, has_input: bool) -> list[Feed]:
    """The feeds ``--source`` names; ``all`` means every feed that needs no ``--input``.

    Raises:
        KeyError: for an unknown name.
        ValueError: for ``all`` together with an input, which only one feed can read.
    """
    source = source.strip().lower()
    if source == ALL:
        if has_input:
            msg = "--input needs a single --source (one of: " + ", ".join(names()) + ")"
            raise ValueError(msg)
        return [f for f in (get(n) for n in names()) if not f.needs_input]
    return [get(source)]
