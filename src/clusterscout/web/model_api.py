"""POST /api/v1/estimate and /api/v1/plan: the model on a scenario, the planner on the catalog."""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import APIRouter, Body, Request
from starlette.responses import JSONResponse, Response

from clusterscout import planning
from clusterscout.catalog.calibration import CalibrationError
from clusterscout.model.scenario import ScenarioError
from clusterscout.web import api_docs
from clusterscout.web.errors import ApiError
from clusterscout.web.runtime import state_of
from clusterscout.web.schemas import ErrorOut

router = APIRouter(prefix="/api/v1", tags=["model"])

SCENARIO_EXAMPLE: Final = {
    "cluster": {
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "nodes": 4,
        "fabric": "infiniband",
        "per_node_gbps": 3200,
        "gpudirect_rdma": True,
    },
    "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 4294967296},
}
PLAN_EXAMPLE: Final = {"model": "70B", "tokens": 1e11, "precision": "bf16", "max_nodes": 16}
MODEL_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    **api_docs.BAD_INPUT,
    503: {"model": ErrorOut, "description": "The database has no model calibration."},
}
JsonBody = Annotated[Any, Body(description="A JSON object.")]


def _run(request: Request, runner: Any, body: Any) -> Any:
    try:
        with state_of(request).engine.connect() as conn:
            return runner(conn, body)
    except ScenarioError as exc:
        raise ApiError(400, "invalid_scenario", str(exc), exc.field) from None
    except CalibrationError as exc:
        raise ApiError(503, "model_unavailable", str(exc), None) from None
    except (ValueError, ArithmeticError) as exc:
        # Inputs the validators let through but the formulas cannot use are still bad input.
        raise ApiError(400, "invalid_scenario", f"cannot evaluate: {exc}", None) from None


@router.post(
    "/estimate",
    responses=MODEL_ERRORS,
    summary="Run the performance model on one scenario",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"type": "object"},
                    "example": SCENARIO_EXAMPLE,
                }
            },
        }
    },
)
def estimate(request: Request, body: JsonBody) -> Response:
    """Collective: ``time_s``, ``algbw_gbs``, ``busbw_gbs``; training: step time, MFU, memory,
    ``scaling_efficiency``, ``fits`` and ``breakdown_s``. Invalid scenarios name the field."""
    return JSONResponse(_run(request, planning.run_estimate, body))


@router.post(
    "/plan",
    responses=MODEL_ERRORS,
    summary="Do I need multi-node? Offers ranked by job cost and time",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"type": "object"}, "example": PLAN_EXAMPLE}
            },
        }
    },
)
def plan(request: Request, body: JsonBody) -> Response:
    """``needs_multi_node``, ``min_gpus_to_fit``, ``options`` and ``excluded`` (with reasons)."""
    result = _run(request, planning.run_plan, body)
    return JSONResponse(result.to_dict())
