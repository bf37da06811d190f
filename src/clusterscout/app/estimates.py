"""Estimates: the model on one scenario, its stored calibration, the check against measurements."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app.database import CatalogInvalidError
from clusterscout.catalog.calibration import CalibrationError, load_calibration, parse_calibration
from clusterscout.catalog.load import load_gpus
from clusterscout.catalog.problems import Problem, has_errors
from clusterscout.domain.errors import InputError
from clusterscout.model import checkinference
from clusterscout.model.calibration import Calibration
from clusterscout.model.checkmodel import CheckReport, ReferenceRatio, check, reference_ratios
from clusterscout.model.estimate import EstimateResult, estimate
from clusterscout.model.scenario import parse_scenario
from clusterscout.store import queries


def stored_calibration(conn: Connection) -> Calibration:
    """Calibration constants saved with the build.

    Raises:
        CalibrationError: when the database was built without them.
    """
    text = queries.meta_value(conn, "calibration_toml")
    if not text:
        msg = "the database has no calibration; rebuild it with clusterscout build-db"
        raise CalibrationError(msg)
    return queries.per_version(
        conn, "calibration", lambda: parse_calibration(text, "stored calibration")
    )


def require_finite(data: Any, field: str) -> None:
    """Refuse an answer holding NaN or an infinity (not JSON; never a real estimate).

    The validators bound every input, so this is a backstop: whatever combination slips
    through is reported as bad input naming ``field`` instead of producing invalid JSON.
    Dataclasses (typed results) are walked field by field.

    Raises:
        InputError: naming ``field`` and the output that is not finite.
    """
    # A plan holds thousands of values: walk without building paths, and name the path only
    # when something is wrong (the check used to cost as much as the plan's model answers).
    if not _all_finite(data):
        path = (_non_finite_path(data, "") or "result").removeprefix(".")
        msg = f"the model cannot evaluate these sizes ({path} is not finite)"
        raise InputError(field, msg)


_LEAVES: Final = frozenset({int, str, bool, type(None)})


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(kind: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type (kept per type), None for other types."""
    try:
        return _FIELD_NAMES[kind]
    except KeyError:
        names = None
        if dataclasses.is_dataclass(kind):
            names = tuple(f.name for f in dataclasses.fields(kind))
        _FIELD_NAMES[kind] = names
        return names


def _all_finite(data: Any) -> bool:
    kind = type(data)
    if kind is float:
        return math.isfinite(data)
    if kind in _LEAVES:
        return True
    names = _field_names(kind)
    if names is not None:
        return all(_all_finite(getattr(data, name)) for name in names)
    if isinstance(data, Mapping):
        return all(_all_finite(value) for value in data.values())
    if isinstance(data, list | tuple):
        return all(_all_finite(value) for value in data)
    return not isinstance(data, float) or math.isfinite(data)


def _non_finite_path(data: Any, path: str) -> str | None:
    """Where the first NaN or infinity sits, as ``options[3].time_hours``; None if nowhere."""
    if isinstance(data, float):
        return None if math.isfinite(data) else path
    kind = type(data)
    names = _field_names(kind)
    if names is not None:
        items: Any = ((f".{name}", getattr(data, name)) for name in names)
    elif isinstance(data, Mapping):
        items = ((f".{key}", value) for key, value in data.items())
    elif isinstance(data, list | tuple):
        items = ((f"[{i}]", value) for i, value in enumerate(data))
    else:
        return None
    for step, value in items:
        found = _non_finite_path(value, f"{path}{step}")
        if found is not None:
            return found
    return None


def run_estimate(conn: Connection, body: Any) -> EstimateResult:
    """Validate a scenario (docs/design.md §4) and run the model on the stored catalog's GPU.

    Raises:
        InputError: naming the field at fault.
        CalibrationError: when the database has no calibration.
    """
    if not isinstance(body, Mapping):
        raise InputError("scenario", "must be a JSON object")
    scenario = parse_scenario(body)
    gpu = queries.gpu_index(conn).require(scenario.cluster.gpu, "cluster.gpu")
    result = estimate(scenario, gpu, stored_calibration(conn))
    require_finite(result.result, "scenario")
    return result


def check_model(points: Sequence[Any], data_dir: Path) -> tuple[CheckReport, Calibration]:
    """Predicted vs measured for every point, with the catalog's GPUs and calibration.

    Returns:
        The report and the calibration used (for its held-out error figures).

    Raises:
        CatalogInvalidError: when ``data_dir`` has no usable GPU figures.
        CalibrationError: when ``data_dir`` has no usable calibration.
    """
    problems: list[Problem] = []
    gpus = load_gpus(data_dir, problems)
    if has_errors(problems) or not gpus:
        raise CatalogInvalidError(
            [*problems, Problem(f"{data_dir}/gpus.toml", "", "cannot load GPU figures")]
        )
    calibration = load_calibration(data_dir)
    return check(points, gpus, calibration), calibration


def check_references(data_dir: Path) -> tuple[ReferenceRatio, ...]:
    """The model's cross-GPU ratios on the reference jobs, with the catalog's GPUs.

    Raises:
        CatalogInvalidError: when ``data_dir`` has no usable GPU figures.
        CalibrationError: when ``data_dir`` has no usable calibration.
    """
    problems: list[Problem] = []
    gpus = load_gpus(data_dir, problems)
    if has_errors(problems) or not gpus:
        raise CatalogInvalidError(
            [*problems, Problem(f"{data_dir}/gpus.toml", "", "cannot load GPU figures")]
        )
    return reference_ratios(gpus, load_calibration(data_dir))


def check_serving(
    points: Sequence[Any], data_dir: Path
) -> tuple[checkinference.ServingCheck, Calibration]:
    """Predicted vs measured for the inference points (the serving model), like check_model.

    Raises:
        CatalogInvalidError: when ``data_dir`` has no usable GPU figures.
        CalibrationError: when ``data_dir`` has no calibration, or one without inference.
    """
    problems: list[Problem] = []
    gpus = load_gpus(data_dir, problems)
    if has_errors(problems) or not gpus:
        raise CatalogInvalidError(
            [*problems, Problem(f"{data_dir}/gpus.toml", "", "cannot load GPU figures")]
        )
    calibration = load_calibration(data_dir)
    if calibration.inference is None:
        msg = f"{data_dir}/calibration.toml: no [inference] table"
        raise CalibrationError(msg)
    return checkinference.check(points, gpus, calibration), calibration
