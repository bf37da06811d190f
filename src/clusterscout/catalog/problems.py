"""A problem found in the catalog, reported as ``file: key.path: message``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """Errors fail validation and block a database build; warnings are reported only."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One finding, located by file and key path."""

    file: str
    path: str
    message: str
    severity: Severity = Severity.ERROR
    kind: str = ""
    """For warnings: one of ``WARNING_KINDS``, so a summary can count them by what they mean."""

    def __str__(self) -> str:
        prefix = "warning: " if self.severity is Severity.WARNING else ""
        return f"{self.file}: {self.path or '(file)'}: {prefix}{self.message}"


def has_errors(problems: list[Problem]) -> bool:
    """True when any problem is an error."""
    return any(p.severity is Severity.ERROR for p in problems)


@dataclass(frozen=True, slots=True)
class WarningKind:
    """What a kind of warning means and whether it changes what users see."""

    label: str
    meaning: str
    matters: str


WARNING_KINDS: dict[str, WarningKind] = {
    "stale-source": WarningKind(
        "stale source",
        "a source page was last read more than 180 days ago",
        "its facts may have changed; re-read the page and update checked_on",
    ),
    "stale-price": WarningKind(
        "stale price",
        "a price observation is more than 180 days old",
        "pages show it with its date; look for a newer published price",
    ),
    "fabric-unstated": WarningKind(
        "fabric unstated",
        "a provider sells multi-node clusters but no offer states its fabric",
        "its offers cannot be compared on the network",
    ),
    "launch-target": WarningKind(
        "no launch target",
        "a multi-node provider has no SkyPilot or dstack entry in launch.toml",
        "launch files for that tool are refused with a reason",
    ),
    "unused-source": WarningKind(
        "unused source", "a source is listed but never cited", "harmless; tidy the file"
    ),
    "untranslated": WarningKind(
        "untranslated catalog text",
        "catalog texts lack a translation",
        "those texts show in English on that language's pages",
    ),
}
"""Every kind a warning can have; a warning without a known kind is counted as "other"."""


@dataclass(frozen=True, slots=True)
class WarningGroup:
    """How many warnings of one kind, and what they mean."""

    kind: str
    count: int
    label: str
    meaning: str
    matters: str


def warning_summary(problems: list[Problem]) -> list[WarningGroup]:
    """Warnings counted by kind, most frequent first (kinds in ``WARNING_KINDS`` order on ties)."""
    counts = Counter(p.kind for p in problems if p.severity is Severity.WARNING)
    order = list(WARNING_KINDS)
    groups = []
    for kind, count in counts.items():
        known = WARNING_KINDS.get(kind)
        info = known or WarningKind("other", "a warning of no listed kind", "read it in the list")
        groups.append(WarningGroup(kind or "other", count, info.label, info.meaning, info.matters))
    rank = {k: i for i, k in enumerate(order)}
    return sorted(groups, key=lambda g: (-g.count, rank.get(g.kind, len(order))))
