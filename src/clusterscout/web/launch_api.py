"""``POST /api/v1/launch`` and ``GET /api/v1/launch/{offer_id}/{kind}``: launch files as JSON or
as one downloadable file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, TypeVar

from fastapi import APIRouter, Body, Path, Request
from starlette.responses import Response

from clusterscout.app import launch as launching
from clusterscout.app import plan_queue
from clusterscout.app.errors import ClassifiedError, FailureKind, Operation, failure_of
from clusterscout.domain.errors import InputError
from clusterscout.launch.request import LaunchAnswer
from clusterscout.model.inputs import Sharding
from clusterscout.model.planner.results import PlanOption, PlanResult
from clusterscout.web import api_docs
from clusterscout.web.api_error import ApiError, FastJSONResponse
from clusterscout.web.model_api import PLAN_ERRORS
from clusterscout.web.runtime import client_of, plan_queue_of, state_of
from clusterscout.web.schemas import ErrorOut, LaunchOut, launch_json

router = APIRouter(prefix="/api/v1", tags=["launch"])
T = TypeVar("T")

LAYOUT_PARAMS: Final = ("tp", "pp", "dp", "sharding", "micro_batch", "global_batch")
LAUNCH_EXAMPLE: Final = {"offer_id": "aws-p5-h100", "nodes": 2, "format": "skypilot"}
LAUNCH_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    **PLAN_ERRORS,  # a body, and with a plan option the planner (through the plan queue)
    404: {"model": ErrorOut, "description": "No offer with this id."},
    503: {"model": ErrorOut, "description": "The catalog or its calibration cannot be read."},
}
FILE_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    200: {
        "description": "The file, as an attachment (Content-Disposition names it).",
        "content": {
            "application/yaml": {"schema": {"type": "string"}},
            "text/x-shellscript": {"schema": {"type": "string"}},
        },
    },
    **api_docs.BAD_INPUT,
    404: LAUNCH_ERRORS[404],
    503: LAUNCH_ERRORS[503],
    422: {"model": ErrorOut, "description": "The tool cannot target this offer; says why."},
}
_COUNT: Final = {"type": "integer", "minimum": 1, "maximum": launching.COUNT_LIMIT}
_LAYOUT_DOC = {
    "tp": "Tensor-parallel size.",
    "pp": "Pipeline-parallel size.",
    "dp": "Data-parallel size (tp*pp*dp must be the cluster's GPUs).",
    "sharding": "none, zero1, zero2 or fsdp.",
    "micro_batch": "Sequences per micro-batch.",
    "global_batch": "Sequences per optimizer step.",
}


def _file_parameters() -> list[dict[str, Any]]:
    nodes = {
        "name": "nodes",
        "in": "query",
        "required": True,
        "schema": {"type": "integer", "minimum": 1, "maximum": launching.MAX_NODES},
        "description": "Nodes in the cluster.",
    }
    layout = [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": (
                {"type": "string", "enum": [s.value for s in Sharding]}
                if name == "sharding"
                else {"type": "integer", "minimum": 1, "maximum": launching.COUNT_LIMIT}
            ),
            "description": f"{text} Give all layout parameters or none.",
        }
        for name, text in _LAYOUT_DOC.items()
    ]
    return [nodes, *layout]


def _answer(request: Request, body: Any) -> LaunchAnswer:
    queue, client = plan_queue_of(request), client_of(request)

    def planner(plan: Any) -> PlanResult:
        # Through the plan queue like every plan: bounded, off this process's CPU.
        try:
            return plan_queue.run_sync(queue, plan, client)
        except ClassifiedError as exc:
            failure = exc.failure
            if failure.kind is FailureKind.BAD_INPUT:
                # Reported as a launch input (the code of this route), as before.
                raise InputError(failure.field or "plan", failure.detail) from None
            raise

    def option_of(plan: Any, k: Any) -> PlanOption:
        return launching.option_by_rank(planner, plan, k)

    data = launching.launch_data(state_of(request).settings.data_dir)
    return launching.run_launch(data, body, option_of)


def _classified(run: Callable[[], T]) -> T:
    try:
        return run()
    except Exception as exc:
        failure = failure_of(exc, Operation.LAUNCH)
        if failure is None:
            raise
        raise ApiError.of(failure) from None


@router.post(
    "/launch",
    response_model=LaunchOut,
    responses=LAUNCH_ERRORS,
    summary="Launch files (SkyPilot, dstack, Slurm) and a fabric check for an offer",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["offer_id"],
                        # null is the same as leaving a key out.
                        "properties": {
                            "offer_id": {"type": "string"},
                            "nodes": {
                                "type": ["integer", "null"],
                                "minimum": 1,
                                "maximum": launching.MAX_NODES,
                            },
                            "format": {
                                "type": ["string", "null"],
                                "enum": ["skypilot", "dstack", "slurm", None],
                            },
                            "layout": {
                                "type": ["object", "null"],
                                "properties": {
                                    name: (
                                        {"type": "string", "enum": [x.value for x in Sharding]}
                                        if name == "sharding"
                                        else _COUNT
                                    )
                                    for name in LAYOUT_PARAMS
                                },
                            },
                            "plan": {
                                "type": ["object", "null"],
                                "description": "a POST /plan body",
                            },
                            "plan_option": {**_COUNT, "type": ["integer", "null"]},
                        },
                    },
                    "example": LAUNCH_EXAMPLE,
                }
            },
        }
    },
)
def launch(request: Request, body: Annotated[Any, Body()]) -> Response:
    """``formats``: each with its ``files`` (and their ``download`` paths) or the ``reason``
    the tool cannot target the offer; ``check``: the nccl-tests script. With ``plan`` and
    ``plan_option`` K, the layout and nodes of option K (its rank by cost) are used."""
    answer = _classified(lambda: _answer(request, body))
    return FastJSONResponse(launch_json(answer))


@router.get(
    "/launch/{offer_id}/{kind}",
    responses=FILE_RESPONSES,
    summary="One launch file or the fabric check script, as a download",
    openapi_extra={"parameters": _file_parameters()},
)
def launch_file(
    request: Request,
    offer_id: Annotated[str, Path(max_length=200)],
    kind: Annotated[str, Path(max_length=40, description=", ".join(launching.FILE_KINDS))],
) -> Response:
    """``kind`` is ``skypilot``, ``dstack-fleet``, ``dstack-task``, ``slurm`` or ``check``."""
    query = request.query_params
    unknown = sorted(set(query) - {"nodes", *LAYOUT_PARAMS})
    body: dict[str, Any] = {"offer_id": offer_id, "nodes": query.get("nodes")}
    if any(name in query for name in LAYOUT_PARAMS):
        body["layout"] = {name: query[name] for name in LAYOUT_PARAMS if name in query}
    if kind in launching.FILE_KINDS and kind != launching.CHECK:
        body["format"] = kind.partition("-")[0]

    def run() -> Response:
        if unknown:
            raise InputError(unknown[0][:80], "unknown parameter")
        file = launching.file_of(_answer(request, body), kind)
        disposition = f'attachment; filename="{file.filename}"'
        return Response(
            file.content, media_type=file.media_type, headers={"Content-Disposition": disposition}
        )

    return _classified(run)
