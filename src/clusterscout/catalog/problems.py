"""A problem found in the catalog, reported as ``file: key.path: message``."""

from __future__ import annotations

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

    def __str__(self) -> str:
        prefix = "warning: " if self.severity is Severity.WARNING else ""
        return f"{self.file}: {self.path or '(file)'}: {prefix}{self.message}"


def has_errors(problems: list[Problem]) -> bool:
    """True when any problem is an error."""
    return any(p.severity is Severity.ERROR for p in problems)
