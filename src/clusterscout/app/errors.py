"""The one place that turns an exception into what every surface reports: HTTP error or CLI exit.

Services raise plain exceptions (``InputError`` for bad input, ``CalibrationError`` when the
model has no constants, ...). ``failure_of`` classifies them once; the web layer renders a
``Failure`` as ``{"error": {code, message, field}}`` with ``http_status``, the CLI as one line
``error: ...`` with ``exit_code``, the plan page as advice next to the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from clusterscout.app.database import CatalogInvalidError, DatabaseURLError
from clusterscout.app.fields import OFFER_FILTER_NAMES
from clusterscout.app.launch import UnknownOfferError
from clusterscout.catalog.calibration import CalibrationError
from clusterscout.catalog.problems import Problem
from clusterscout.domain.errors import InputError
from clusterscout.launch.nccllog import NcclLogError
from clusterscout.launch.request import UnsupportedError
from clusterscout.launch.verdict import ComparisonError

PAGING_PARAMS: Final = frozenset({"limit", "offset"})
_LISTING_PARAMS: Final = frozenset({*OFFER_FILTER_NAMES, "sort", *PAGING_PARAMS})


class Operation(StrEnum):
    """What the caller was doing; it picks the API's error code for bad input."""

    LISTING = "listing"
    """Offer and provider queries: filters, sort and paging."""
    MODEL = "model"
    """The model on a scenario (estimate) or the planner on the catalog (plan)."""
    LAUNCH = "launch"
    """Launch files, the fabric check and nccl-tests logs for an offer."""


class FailureKind(StrEnum):
    """The kinds of failure a user can meet, each with one HTTP status and one exit code."""

    BAD_INPUT = "bad_input"
    MODEL_UNAVAILABLE = "model_unavailable"
    BAD_DATABASE = "bad_database"
    INVALID_CATALOG = "invalid_catalog"
    NOT_FOUND = "not_found"
    UNSUPPORTED = "unsupported"
    BUSY = "busy"
    """The server is at its bound of work in flight (plans); come back later."""
    RATE_LIMITED = "rate_limited"
    """This client has as much work in flight as one client may."""


_HTTP_STATUS: Final = {
    FailureKind.BAD_INPUT: 400,
    FailureKind.MODEL_UNAVAILABLE: 503,
    FailureKind.BAD_DATABASE: 503,
    FailureKind.INVALID_CATALOG: 503,
    FailureKind.NOT_FOUND: 404,
    FailureKind.UNSUPPORTED: 422,
    FailureKind.BUSY: 503,
    FailureKind.RATE_LIMITED: 429,
}
# Exit codes: 2 for input the user can correct, 1 for a failure of the installation or data.
_EXIT_CODE: Final = {
    FailureKind.BAD_INPUT: 2,
    FailureKind.MODEL_UNAVAILABLE: 1,
    FailureKind.BAD_DATABASE: 2,
    FailureKind.INVALID_CATALOG: 1,
    FailureKind.NOT_FOUND: 2,
    FailureKind.UNSUPPORTED: 1,
    FailureKind.BUSY: 1,
    FailureKind.RATE_LIMITED: 1,
}


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified failure.

    Attributes:
        kind: what went wrong.
        code: the API's machine code (``invalid_filter``, ``invalid_scenario``, ...).
        detail: what is wrong, without the field name.
        field: the input at fault, or None.
        problems: every catalog problem, for an invalid catalog.
        retry_after_s: when to try again (seconds), for BUSY and RATE_LIMITED.
    """

    kind: FailureKind
    code: str
    detail: str
    field: str | None = None
    problems: tuple[Problem, ...] = ()
    retry_after_s: int | None = None

    @property
    def message(self) -> str:
        """``field: detail`` (the API's message), or the detail alone."""
        return f"{self.field}: {self.detail}" if self.field else self.detail

    @property
    def http_status(self) -> int:
        """The HTTP status of this failure."""
        return _HTTP_STATUS[self.kind]

    @property
    def exit_code(self) -> int:
        """The CLI exit code of this failure."""
        return _EXIT_CODE[self.kind]


def _listing_code(exc: InputError) -> str:
    if exc.field not in _LISTING_PARAMS or exc.message.startswith(
        ("unknown filter", "unknown param")
    ):
        return "unknown_filter"
    if exc.field in PAGING_PARAMS:
        return "invalid_parameter"
    return "invalid_filter"


class ClassifiedError(Exception):
    """A failure classified in another process (a plan worker), raised again in this one."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def failure_of(exc: BaseException, operation: Operation = Operation.LISTING) -> Failure | None:
    """Classify ``exc``; None when it is not a failure a user should see (a bug: re-raise it).

    In a ``MODEL`` or ``LAUNCH`` operation, a ``ValueError`` or ``ArithmeticError`` that the
    validators let through (inputs the formulas cannot use) is still bad input, not a server
    error.
    """
    if isinstance(exc, ClassifiedError):
        return exc.failure
    if isinstance(exc, UnknownOfferError):
        return Failure(FailureKind.NOT_FOUND, "not_found", exc.message, exc.field)
    if isinstance(exc, UnsupportedError):
        # The tool cannot target the offer: a fact about the offer, not a mistake in the input.
        return Failure(FailureKind.UNSUPPORTED, "unsupported", exc.reason)
    if isinstance(exc, NcclLogError | ComparisonError):
        return Failure(FailureKind.BAD_INPUT, "invalid_log", str(exc))
    if isinstance(exc, InputError) and operation is Operation.LAUNCH:
        return Failure(FailureKind.BAD_INPUT, "invalid_launch", exc.message, exc.field)
    if isinstance(exc, InputError):
        code = "invalid_scenario" if operation is Operation.MODEL else _listing_code(exc)
        return Failure(FailureKind.BAD_INPUT, code, exc.message, exc.field)
    if isinstance(exc, CalibrationError):
        return Failure(FailureKind.MODEL_UNAVAILABLE, "model_unavailable", str(exc))
    if isinstance(exc, DatabaseURLError):
        return Failure(FailureKind.BAD_DATABASE, "database_unavailable", str(exc), "database_url")
    if isinstance(exc, CatalogInvalidError):
        problems = tuple(exc.problems)
        return Failure(FailureKind.INVALID_CATALOG, "invalid_catalog", str(exc), None, problems)
    if operation is not Operation.LISTING and isinstance(exc, ValueError | ArithmeticError):
        # A launch with a plan option runs the planner too.
        code = "invalid_scenario" if operation is Operation.MODEL else "invalid_launch"
        return Failure(FailureKind.BAD_INPUT, code, f"cannot evaluate: {exc}")
    return None
