"""POST /api/v1/estimate and /api/v1/plan: the model on a scenario, the planner on the catalog."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any, Final, TypeVar

from fastapi import APIRouter, Body, Request
from sqlalchemy import Connection, Engine
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from clusterscout.app import database, estimates
from clusterscout.app.errors import Operation, failure_of
from clusterscout.app.inputs import check_json_shape
from clusterscout.app.plan_queue import Outcome, result_of
from clusterscout.web import api_docs
from clusterscout.web.api_error import ApiError, FastJSONResponse
from clusterscout.web.middleware import Entry
from clusterscout.web.runtime import client_of, plan_queue_of, reading, snapshot_of, state_of
from clusterscout.web.schemas import ErrorOut, EstimateOut, PlanOut, estimate_json, plan_json

router = APIRouter(prefix="/api/v1", tags=["model"])
T = TypeVar("T")

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
    408: {"model": ErrorOut, "description": "The body did not arrive in time."},
    413: {"model": ErrorOut, "description": "The body is too large."},
    415: {"model": ErrorOut, "description": "The body is not application/json."},
    503: {"model": ErrorOut, "description": "The database has no model calibration."},
}
PLAN_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    **MODEL_ERRORS,
    429: {
        "model": ErrorOut,
        "description": "This client has as many plans in flight as one client may; "
        "the Retry-After header says when to try again.",
    },
    503: {
        "model": ErrorOut,
        "description": "No calibration, or the server is at its bound of plans in flight "
        "or the plan missed its deadline (then with a Retry-After header).",
    },
}
JsonBody = Annotated[Any, Body(description="A JSON object.")]


def _run(request: Request, runner: Callable[[Connection, Any], T], body: Any) -> T:
    try:
        with reading(request) as conn:
            return runner(conn, body)
    except Exception as exc:
        failure = failure_of(exc, Operation.MODEL)
        if failure is None:
            raise
        raise ApiError.of(failure) from None


def _canonical(body: Any) -> str | None:
    try:
        return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None  # not plain JSON: computed (and refused) every time


def _answer(
    request: Request,
    kind: str,
    runner: Callable[[Connection, Any], T],
    to_json: Callable[[T], dict[str, Any]],
    body: Any,
) -> Response:
    """The JSON answer for ``body``: computed once per data version, then from the cache.

    The key is a digest of the body in canonical form, so key order and spacing do not
    count, and no client can make the key itself large.
    """
    st = state_of(request)
    canonical = _canonical(body)
    key = None
    if canonical is not None:
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        key = f"{kind}|{snapshot_of(request).data_version}|{digest}"
        hit = st.answers.get(key)
        if hit is not None:
            return Response(hit.body, media_type="application/json")

    def render() -> bytes:
        return bytes(FastJSONResponse(to_json(_run(request, runner, body))).body)

    if key is None:
        return Response(render(), media_type="application/json")

    def compute() -> bytes:
        found = render()
        st.answers.put(key, Entry([], found))
        return found

    # Identical requests that arrive while the first is computed wait for its answer.
    return Response(st.flights.run(key, compute), media_type="application/json")


@router.post(
    "/estimate",
    response_model=EstimateOut,
    responses=MODEL_ERRORS,
    summary="Run the performance model on one scenario",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": api_docs.ESTIMATE_BODY,
                    "example": SCENARIO_EXAMPLE,
                }
            },
        }
    },
)
def estimate(request: Request, body: JsonBody) -> Response:
    """Collective: ``time_s``, ``algbw_gbs``, ``busbw_gbs``; training: step time, MFU, memory,
    ``scaling_efficiency``, ``fits`` and ``breakdown_s``. Invalid scenarios name the field."""
    return _answer(request, "estimate", estimates.run_estimate, estimate_json, body)


def _data_version(engine: Engine) -> str:
    snap = database.open_snapshot(engine)
    try:
        return snap.data_version
    finally:
        snap.close()


def _render_plan(outcome: Outcome) -> bytes:
    return bytes(FastJSONResponse(plan_json(result_of(outcome))).body)


def _api_error(exc: Exception) -> Exception:
    failure = failure_of(exc, Operation.MODEL)
    return exc if failure is None else ApiError.of(failure)


@router.post(
    "/plan",
    response_model=PlanOut,
    responses=PLAN_ERRORS,
    summary="Do I need multi-node? Offers ranked by job cost and time",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": api_docs.plan_body_schema(),
                    "example": PLAN_EXAMPLE,
                }
            },
        }
    },
)
async def plan(request: Request, body: JsonBody) -> Response:
    """``needs_multi_node``, ``min_gpus_to_fit``, ``options`` and ``excluded`` (with reasons).

    Runs on the event loop and holds neither a thread nor a database connection while the
    plan waits in the bounded queue (``app.plan_queue``): 503 or 429 with ``Retry-After``
    when the queue or this client's share of it is full.
    """
    try:
        check_json_shape(body)  # before the body is copied to a worker
    except Exception as exc:
        raise _api_error(exc) from None
    st = state_of(request)
    queue, client = plan_queue_of(request), client_of(request)
    canonical = _canonical(body)
    key = None
    if canonical is not None:
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        refused = queue.refusal(client)
        last = f"plan|{st.plan_version}|{digest}"
        if refused is not None and st.answers.get(last) is None and last not in st.plan_flights:
            # Turned away before any database read: under a burst, refusals must cost
            # little. No answer (or computation) under the last version read means none
            # under a newer one either: the request that first reads a newer version
            # records it before it computes or caches anything.
            raise _api_error(refused) from None
        version = await run_in_threadpool(_data_version, st.engine)
        st.plan_version = version
        key = f"plan|{version}|{digest}"
        hit = st.answers.get(key)
        if hit is not None:
            return Response(hit.body, media_type="application/json")
        running = st.plan_flights.get(key)
        if running is not None:
            # The same plan is being computed: its answer (or its error) is this one too.
            return Response(await asyncio.shield(running), media_type="application/json")
    mine: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
    if key is not None:
        st.plan_flights[key] = mine
    try:
        admission = queue.start(body, client)
        outcome = await queue.wait_async(admission)
        # Rendered in a thread: a large plan's JSON takes long enough to stall the loop.
        found = await run_in_threadpool(_render_plan, outcome)
        if key is not None and outcome[0] == version:
            # A plan read at another version (a refresh in between) is answered, not kept.
            st.answers.put(key, Entry([], found))
        mine.set_result(found)
    except Exception as exc:
        error = _api_error(exc)
        mine.set_exception(error)
        mine.exception()  # retrieved: no warning when nobody else waited
        raise error from None
    finally:
        if key is not None:
            st.plan_flights.pop(key, None)
    return Response(found, media_type="application/json")
