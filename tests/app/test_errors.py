"""One mapping from exceptions to what the API and the CLI report."""

from __future__ import annotations

import pytest

from clusterscout.app.database import CatalogInvalidError, DatabaseURLError
from clusterscout.app.errors import FailureKind, Operation, failure_of
from clusterscout.catalog.calibration import CalibrationError
from clusterscout.catalog.problems import Problem
from clusterscout.domain.errors import InputError


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (InputError("colour", "unknown filter (known: gpu)"), "unknown_filter"),
        (InputError("rdma", "'maybe' is not a boolean"), "invalid_filter"),
        (InputError("limit", "must be between 1 and 1000"), "invalid_parameter"),
        (InputError("sort", "'x' is not one of: price"), "invalid_filter"),
    ],
)
def test_bad_listing_input_is_a_400_with_the_filter_code(exc: InputError, code: str) -> None:
    failure = failure_of(exc)
    assert failure is not None
    assert (failure.kind, failure.code, failure.field) == (FailureKind.BAD_INPUT, code, exc.field)
    assert (failure.http_status, failure.exit_code) == (400, 2)
    assert failure.message == str(exc)


def test_bad_model_input_is_an_invalid_scenario() -> None:
    failure = failure_of(InputError("cluster.gpu", "unknown GPU 'x'"), Operation.MODEL)
    assert failure is not None and failure.code == "invalid_scenario"
    broken = failure_of(ZeroDivisionError("float division by zero"), Operation.MODEL)
    assert broken is not None
    assert (broken.code, broken.field, broken.http_status) == ("invalid_scenario", None, 400)
    assert broken.message == "cannot evaluate: float division by zero"


def test_failures_of_the_installation_are_not_bad_input() -> None:
    model = failure_of(CalibrationError("no calibration"))
    assert model is not None
    assert (model.http_status, model.exit_code, model.code) == (503, 1, "model_unavailable")
    url = failure_of(DatabaseURLError("unsupported database backend 'mysql'"))
    assert url is not None and (url.field, url.exit_code) == ("database_url", 2)
    problems = [Problem("data/gpus.toml", "", "missing")]
    catalog = failure_of(CatalogInvalidError(problems))
    assert catalog is not None
    assert (catalog.exit_code, catalog.problems) == (1, tuple(problems))


def test_bugs_are_not_classified() -> None:
    # A plain error outside the model is a bug: surfaces re-raise it (500, traceback).
    assert failure_of(ValueError("oops")) is None
    assert failure_of(KeyError("x"), Operation.MODEL) is None
