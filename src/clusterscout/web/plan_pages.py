"""``/{lang}/plan/`` and its two charts: the planner on the catalog, as a shareable GET form."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeVar

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from clusterscout.app import insights, offers, plan_queue
from clusterscout.app.database import Snapshot
from clusterscout.app.errors import FailureKind, Operation, failure_of
from clusterscout.app.fields import FIELDS_BY_NAME
from clusterscout.model.planner.results import PlanResult
from clusterscout.web import charts, launch_view, plan_form, plan_view
from clusterscout.web.api_error import ApiError
from clusterscout.web.cells import JOB_LABELS, STACK_LABELS
from clusterscout.web.i18n import Formatter
from clusterscout.web.pages_common import Lang, base_context
from clusterscout.web.pages_common import known_lang as _lang
from clusterscout.web.pages_common import render_html as _html
from clusterscout.web.runtime import (
    AppState,
    client_of,
    plan_queue_of,
    snapshot_of,
    state_of,
)

router = APIRouter(include_in_schema=False)
T = TypeVar("T")
CHART_NAMES: Final = ("scaling", "cost-time", "step")


@dataclass(frozen=True, slots=True)
class PlanProblem:
    """Why no plan could be shown: the field at fault (or None), advice, the model's detail."""

    field: str | None
    advice: str
    detail: str
    status: int


def _memo(st: AppState, snap: Snapshot, kind: str, query: str, compute: Callable[[], T]) -> T:
    return st.memo.get((kind, snap.data_version, query), compute)


def _run(
    st: AppState, snap: Snapshot, kind: str, query: plan_form.PlanQuery, runner: Callable[..., T]
) -> T:
    def compute() -> T:
        return runner(snap.conn, query.body())

    return _memo(st, snap, kind, query.query_string(), compute)


def _solve(
    request: Request, lang: str, query: plan_form.PlanQuery
) -> tuple[PlanResult | None, list[insights.ScalingCurve], PlanProblem | None]:
    """Plan and scaling curves for the query, or the problem to show next to the form."""
    st = state_of(request)
    queue = plan_queue_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    try:
        snap = snapshot_of(request)
        result = _run(
            st,
            snap,
            "plan",
            query,
            lambda _conn, b: plan_queue.run_sync(queue, b, client_of(request)),
        )
        curves = _run(st, snap, "scaling", query, insights.scaling_curves)
    except Exception as exc:
        failure = failure_of(exc, Operation.MODEL)
        if failure is None:
            raise
        if failure.kind is FailureKind.MODEL_UNAVAILABLE:
            advice = fmt.gettext("The model is not available on this server.")
        elif failure.kind in {FailureKind.BUSY, FailureKind.RATE_LIMITED}:
            advice = fmt.gettext("The server is busy computing other plans. Try again in a minute.")
        elif failure.field is not None:
            advice = plan_view.field_error(fmt, failure.field)
        else:
            advice = fmt.gettext("These inputs cannot be evaluated. Try other values.")
        row = FIELDS_BY_NAME.get(failure.field or "")
        field = failure.field if row is not None and row.form is not None else None
        return None, [], PlanProblem(field, advice, failure.message, failure.http_status)
    return result, curves, None


def _choices(st: AppState, snap: Snapshot) -> dict[str, list[tuple[str, str]]]:
    """The form's values that come from the catalog: GPU models and providers."""

    def gpus() -> list[tuple[str, str]]:
        return [(n, n) for n in sorted(g.name for g in offers.gpu_specs(snap.conn))]

    providers = sorted(st.providers(snap).values(), key=lambda p: str(p["name"]).lower())
    return {
        "gpu": _memo(st, snap, "gpus", "", gpus),
        "provider": [(p["slug"], p["name"]) for p in providers],
    }


def _step_context(fmt: Formatter, result: PlanResult) -> dict[str, object]:
    """The step chart's caption data: the cheapest option's parts, its layout, the height."""
    if not result.options:
        return {"step_parts": [], "step_layout": "", "step_height": 0}
    top = result.options[0]
    parts = plan_view.step_parts(fmt, top)
    return {
        "step_parts": [(label, fmt.fixed(seconds, 2)) for label, seconds in parts],
        "step_layout": plan_view.layout_text(top.layout),
        "step_height": charts.step_height(len(parts)),
    }


@router.get("/{lang}/plan/")
def plan_page(request: Request, lang: Lang) -> Response:
    """The planner: do I need multi-node, and which offer finishes my job cheapest or fastest?"""
    lang = _lang(lang)
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    query = plan_form.parse(request.query_params.multi_items())
    canonical = query.query_string()
    if query.submitted and "?" + request.url.query != canonical:
        return RedirectResponse(f"/{lang}/plan/{canonical}", status_code=302)
    ctx = base_context(request, lang, "plan/", canonical, section="plan")
    ctx.update(
        form=query,
        fieldsets=plan_form.fieldsets(fmt, query, _choices(st, snapshot_of(request))),
        problem=None,
        result=None,
        serving=None,
    )
    if query.submitted:
        result, curves, problem = _solve(request, lang, query)
        ctx["problem"] = problem
        if result is not None and result.serving is not None:
            title, text = plan_view.serving_verdict(fmt, result)
            ctx.update(
                result=result,
                serving=result.serving,
                verdict_title=title,
                verdict_text=text,
                memory=plan_view.serving_facts(fmt, result.serving),
                serving_rows=plan_view.serving_rows(fmt, result.serving),
                serving_notices=plan_view.serving_notices(fmt, result.serving),
                assumptions=plan_view.assumption_texts(fmt, result),
                error_band=fmt.percent(result.error_band_pct / 100),
                job_params=fmt.compact(result.model.params),
                api_body=query.body(),
            )
        elif result is not None:
            providers = st.providers(snapshot_of(request))
            title, text = plan_view.verdict(fmt, result)
            launch_rows = launch_view.plan_rows(fmt, st, result.options, providers)
            ctx.update(
                result=result,
                verdict_title=title,
                verdict_text=text,
                memory=plan_view.memory_facts(fmt, result),
                gpu_rows=plan_view.gpu_rows(fmt, result.per_gpu),
                options=plan_view.option_rows(fmt, result.options, providers, result.steps),
                reliability_note=plan_view.reliability_note(fmt, result.reliability),
                reliability=result.reliability,
                launch_rows=launch_rows,
                launch_anchors={r.anchor for r in launch_rows},
                excluded=plan_view.excluded_rows(fmt, result.excluded, providers),
                on_request=plan_view.on_request_rows(fmt, result, providers),
                assumptions=plan_view.assumption_texts(fmt, result),
                error_band=fmt.percent(result.error_band_pct / 100),
                job_tokens=fmt.compact(result.tokens),
                job_label=fmt.gettext(JOB_LABELS[result.job.value]),
                job_steps=fmt.number(result.steps),
                job_params=fmt.compact(result.model.params),
                stack_label=STACK_LABELS[result.stack.value],
                scaling=plan_view.scaling_table(fmt, curves, providers),
                front=plan_view.front_summary(fmt, result.options, providers),
                chart_hrefs={n: f"/{lang}/plan/chart/{n}.svg{canonical}" for n in CHART_NAMES},
                **_step_context(fmt, result),
                api_body=query.body(),
            )
    response = _html(request, lang, "pages/plan.html", ctx)
    if ctx["problem"] is not None:
        response.status_code = ctx["problem"].status
    return response


@router.get("/{lang}/plan/chart/{name}.svg")
def plan_chart(request: Request, lang: Lang, name: str) -> Response:
    """A chart of the plan for the same query as the page, as a standalone SVG image."""
    lang = _lang(lang)
    if name not in CHART_NAMES:
        raise ApiError(404, "not_found", "unknown chart", "name")
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    query = plan_form.parse(request.query_params.multi_items())
    result, curves, problem = _solve(request, lang, query)
    if result is not None and result.serving is not None:
        raise ApiError(404, "not_found", "inference plans have no charts", "name")
    if result is None or problem is not None:
        status = problem.status if problem else 400
        raise ApiError(status, "invalid_scenario", problem.advice if problem else "", None)
    providers = st.providers(snapshot_of(request))
    if name == "scaling":
        counts, lines = plan_view.scaling_lines(fmt, curves, providers)
        body = charts.scaling_svg(fmt, counts, lines)
    elif name == "step":
        top = result.options[0] if result.options else None
        parts = plan_view.step_parts(fmt, top) if top is not None else []
        body = charts.step_svg(fmt, fmt.gettext("Seconds per step"), parts)
    else:
        front, others = plan_view.cost_points(fmt, result.options, providers)
        body = charts.cost_time_svg(fmt, front, others)
    return charts.svg_response(body)
