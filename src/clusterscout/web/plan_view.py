"""Planner answers to page rows: the verdict, the ranked options, exclusions and chart data.

Reasons and assumptions are enums of the model, translated by ``web.reasons``; field advice
comes from the fields table. So the model stays free of Babel and the pages fully translated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final

from clusterscout.app.fields import FIELDS_BY_NAME
from clusterscout.app.insights import ScalingCurve
from clusterscout.model.allin import EGRESS_PRICE, STORAGE_PRICE
from clusterscout.model.goodput import Reliability
from clusterscout.model.planner.results import (
    MIN_SERVING_POINTS,
    Exclusion,
    GpuVerdict,
    Layout,
    PlanOffer,
    PlanOption,
    PlanResult,
    ServingPlan,
)
from clusterscout.web import charts, fabric_view
from clusterscout.web.cells import FABRIC_LABELS, TIER_LABELS
from clusterscout.web.i18n import N_, Formatter
from clusterscout.web.reasons import assumption_text, reason_text

SHARDING_LABELS: Final = {"none": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "fsdp": "FSDP"}


def field_error(fmt: Formatter, field: str | None) -> str:
    """The translated advice for a field the planner rejected (the fields table's ``advice``)."""
    row = FIELDS_BY_NAME.get(field or "")
    advice = row.form.advice if row is not None and row.form is not None else ""
    return fmt.gettext(advice or N_("This value cannot be used."))


def duration(fmt: Formatter, hours: float | None) -> str:
    """``5.2 hours`` or ``12.3 days`` (days beyond 48 hours)."""
    if hours is None:
        return fmt.gettext("unknown")
    if hours > 48:
        days = hours / 24
        return fmt.ngettext("%(num)s day", "%(num)s days", round(days)) % {
            "num": fmt.fixed(days, 1)
        }
    return fmt.ngettext("%(num)s hour", "%(num)s hours", round(hours)) % {
        "num": fmt.fixed(hours, 1)
    }


def layout_text(layout: Layout) -> str:
    """``TP 8 · PP 4 · EP 8 · DP 2 · ZeRO-1`` (parallelism names are not translated)."""
    parts = [f"TP {layout.tp}", f"PP {layout.pp}"]
    if layout.vp > 1:
        parts.append(f"VP {layout.vp}")
    if layout.ep > 1:
        parts.append(f"EP {layout.ep}")
    parts.append(f"DP {layout.dp}")
    parts.append(SHARDING_LABELS.get(layout.sharding.value, layout.sharding.value))
    if layout.recompute.value != "none":
        parts.append(f"recompute {layout.recompute.value}")
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class OfferLink:
    """An offer named for people, linked to its row on the provider page."""

    provider_name: str
    href: str
    gpu: str
    fabric: str


def offer_link(fmt: Formatter, offer: PlanOffer, providers: Mapping[str, Any]) -> OfferLink:
    """Provider name, link to the offer on the provider page, GPU and fabric labels."""
    record = providers.get(offer.provider) or {}
    fabric = FABRIC_LABELS.get(offer.fabric.value, "") if offer.fabric else ""
    return OfferLink(
        provider_name=str(record.get("name", offer.provider)),
        href=f"/{fmt.lang}/providers/{offer.provider}/#offer-{offer.offer_id}",
        gpu=offer.gpu,
        fabric=fabric or fmt.gettext("unknown"),
    )


@dataclass(frozen=True, slots=True)
class OptionRow:
    """One ranked option."""

    offer: OfferLink
    nodes: str
    gpus: str
    layout: str
    time: str
    cost: str
    efficiency: str
    effective: str
    price: str
    tier: str
    pareto: bool
    rank_by_cost: int
    rank_by_time: int
    batch_note: str = ""
    calibrated: bool = True
    assumed: str = ""
    """What the option rests on ("assumed 800-3200 Gbit/s"), empty when every fact is known."""
    stale: str = ""
    """The stale badge ("price 165 days old"), empty for a price under 31 days old."""
    buyer: bool = False
    billing: str = ""
    """Says when a billing minimum or term sets the cost, or that the billing is unknown."""
    goodput: str = ""
    interruptions: str = ""
    added_time: str = ""
    added_cost: str = ""
    all_in: str = ""
    network_note: str = ""
    """Says when the network figure comes from a published run on the offer, else ''."""
    network_source: str = ""
    """The public page of that run."""
    offer_id: str = ""
    node_count: int = 0
    launch_href: str = ""
    """The offer's launch files on its provider page, written for this option's node count."""


STALE_DAYS: Final = 30
"""A price older than this gets a stale badge (the API's ``price_stale``)."""


def assumed_text(fmt: Formatter, offer: PlanOffer) -> str:
    """What an offer's option rests on, translated; empty when nothing is assumed."""
    parts = []
    a = offer.assumed
    if a is not None:
        lo, hi = a.low.per_node_gbps, a.high.per_node_gbps
        if lo == hi:
            parts.append(fmt.gettext("assumed %(gbps)s Gbit/s") % {"gbps": fmt.number(lo)})
        else:
            parts.append(
                fmt.gettext("assumed %(low)s-%(high)s Gbit/s")
                % {"low": fmt.number(lo), "high": fmt.number(hi)}
            )
        if "fabric" in a.fields:
            low = FABRIC_LABELS.get(a.low.fabric.value, a.low.fabric.value)
            high = FABRIC_LABELS.get(a.high.fabric.value, a.high.fabric.value)
            parts.append(
                fmt.gettext("fabric %(kind)s") % {"kind": low}
                if low == high
                else fmt.gettext("fabric %(low)s or %(high)s") % {"low": low, "high": high}
            )
        if "gpudirect_rdma" in a.fields and a.low.gpudirect_rdma != a.high.gpudirect_rdma:
            parts.append(fmt.gettext("GPUDirect RDMA with and without"))
    if offer.gpus_per_node_assumed:
        parts.append(
            fmt.gettext("assumed %(num)s GPUs per node")
            % {"num": fmt.number(offer.gpus_per_node or 0)}
        )
    return "; ".join(parts)


def stale_text(fmt: Formatter, offer: PlanOffer, today: date) -> str:
    """``price 165 days old`` for a published price over ``STALE_DAYS`` old, else ''."""
    if offer.price_as_of is None:
        return ""
    age = (today - date.fromisoformat(offer.price_as_of)).days
    if age <= STALE_DAYS:
        return ""
    return fmt.ngettext("price %(num)s day old", "price %(num)s days old", age) % {
        "num": fmt.number(age)
    }


def billing_text(fmt: Formatter, option: PlanOption) -> str:
    """Says when the billing minimum or term sets the cost, or that billing is unknown."""
    minimum = option.offer.minimum_hours
    if minimum and minimum > option.time_hours:
        return fmt.gettext("pays the minimum of %(time)s") % {"time": duration(fmt, minimum)}
    if not option.offer.billing_known:
        return fmt.gettext("billing minimum unknown")
    return ""


def _spread(best: str | None, worst: str) -> str:
    return worst if best is None or best == worst else f"{best} – {worst}"


UNKNOWN_PRICES: Final = {
    STORAGE_PRICE: N_("storage price unknown"),
    EGRESS_PRICE: N_("egress price unknown"),
}


def all_in_text(fmt: Formatter, option: PlanOption) -> str:
    """The all-in total, or which price the catalog does not know ('' without one)."""
    a = option.all_in
    if a is None:
        return ""
    if a.total_usd is None:
        return "; ".join(fmt.gettext(UNKNOWN_PRICES[u]) for u in a.unknown)
    return fmt.usd_whole(a.total_usd)


def goodput_cells(fmt: Formatter, option: PlanOption) -> dict[str, str]:
    """Goodput, expected interruptions and the time and cost they add ('' without figures)."""
    g = option.goodput
    if g is None:
        return {}
    if g.time_hours is None or g.added_hours is None or g.added_usd is None:
        never = fmt.gettext("never finishes")
        return {"goodput": fmt.percent(0.0), "interruptions": never}
    return {
        "goodput": fmt.percent(g.goodput, digits=1),
        "interruptions": fmt.fixed(g.expected_interruptions or 0.0, 1),
        "added_time": duration(fmt, g.added_hours),
        "added_cost": fmt.usd_whole(g.added_usd),
    }


def reliability_note(fmt: Formatter, reliability: Reliability | None) -> str:
    """What the goodput columns assume, in the page's language ('' without figures)."""
    if reliability is None:
        return ""
    text = fmt.gettext(
        "Goodput is the share of the run's hours that train. It assumes %(rate)s unplanned "
        "interruptions per million GPU-hours, a "
        "checkpoint every %(checkpoint)s minutes, of which half is lost on average at each "
        "interruption, and %(restart)s minutes to restart. Time and cost in the other columns "
        "are without interruptions; the last two columns are what interruptions add."
    ) % {
        "rate": fmt.fixed(reliability.failures_per_million_gpu_hours, 1),
        "checkpoint": fmt.number(reliability.checkpoint_minutes),
        "restart": fmt.number(reliability.restart_minutes),
    }
    text += " " + fmt.gettext(
        "The default failure rate is the one Meta reported for its Llama 3 training run."
    )
    if reliability.restart_assumed and "restart_minutes" not in reliability.given:
        text += " " + fmt.gettext(
            "No published restart time was found: the restart time is our assumption; "
            "enter your own in the form."
        )
    if reliability.given:
        text += " " + fmt.gettext("Figures you entered replace the defaults.")
    return text


def network_note(fmt: Formatter, offer: PlanOffer) -> str:
    """The published run behind the option's network figure, in words, else ''."""
    m = offer.measured
    if m is None or offer.advertised_gbps is None:
        return ""
    run = {
        "collective": m.collective,
        "nodes": m.nodes,
        "gpus_per_node": m.gpus_per_node,
        "message_bytes": m.message_bytes,
    }
    return fmt.gettext(
        "network from a published run (%(run)s): measured %(measured)s, model %(model)s; "
        "the plan uses %(share)s of the advertised %(gbps)s Gbit/s"
    ) % {
        "run": fabric_view.run_text(fmt, run),
        "measured": fabric_view.gbs(fmt, m.busbw_gbs),
        "model": fabric_view.gbs(fmt, m.predicted_busbw_gbs),
        "share": fmt.percent(m.factor, digits=0),
        "gbps": fmt.number(offer.advertised_gbps),
    }


def batch_note(fmt: Formatter, option: PlanOption, job_steps: int) -> str:
    """Says when a layout trains the job with a larger batch (and so fewer steps), else ''."""
    if option.steps in (0, job_steps):
        return ""
    return fmt.gettext("batch of %(batch)s sequences, %(steps)s steps") % {
        "batch": fmt.number(option.layout.global_batch),
        "steps": fmt.number(option.steps),
    }


def option_rows(
    fmt: Formatter,
    options: Sequence[PlanOption],
    providers: Mapping[str, Any],
    job_steps: int = 0,
    today: date | None = None,
) -> list[OptionRow]:
    """Options in the planner's order (cheapest first); ranges where a network is assumed."""
    today = today or datetime.now(UTC).date()
    rows = []
    for o in options:
        price = o.offer.usd_per_gpu_hour
        best_time = duration(fmt, o.time_hours_best) if o.time_hours_best is not None else None
        best_cost = fmt.usd_whole(o.cost_usd_best) if o.cost_usd_best is not None else None
        rows.append(
            OptionRow(
                offer=offer_link(fmt, o.offer, providers),
                nodes=fmt.number(o.nodes),
                gpus=fmt.number(o.nodes * (o.offer.gpus_per_node or 0)),
                layout=layout_text(o.layout),
                batch_note=batch_note(fmt, o, job_steps),
                time=_spread(best_time, duration(fmt, o.time_hours)),
                cost=_spread(best_cost, fmt.usd_whole(o.cost_usd)),
                efficiency=fmt.percent(o.scaling_efficiency, digits=1),
                effective=fmt.usd(o.effective_usd_per_gpu_hour),
                price=fmt.usd(price) if price is not None else fmt.gettext("unknown"),
                tier=fmt.gettext("your price")
                if o.offer.price_source == "buyer"
                else fmt.gettext(TIER_LABELS.get(o.offer.price_tier or "", "unknown")),
                pareto=o.pareto,
                rank_by_cost=o.rank_by_cost,
                rank_by_time=o.rank_by_time,
                calibrated=o.calibrated,
                assumed=assumed_text(fmt, o.offer),
                stale=stale_text(fmt, o.offer, today),
                buyer=o.offer.price_source == "buyer",
                billing=billing_text(fmt, o),
                all_in=all_in_text(fmt, o),
                **goodput_cells(fmt, o),
                network_note=network_note(fmt, o.offer),
                network_source=o.offer.measured.source_url if o.offer.measured else "",
                offer_id=o.offer.offer_id,
                node_count=o.nodes,
                launch_href=f"/{fmt.lang}/providers/{o.offer.provider}/?nodes={o.nodes}"
                f"#launch-{o.offer.offer_id}",
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class OnRequestRow:
    """An offer without a published price: time, GPU-hours and the market reference."""

    offer: OfferLink
    offer_id: str
    nodes: str
    time: str
    gpu_hours: str
    reference: str
    reference_cost: str
    assumed: str
    calibrated: bool


def on_request_rows(
    fmt: Formatter, result: PlanResult, providers: Mapping[str, Any]
) -> list[OnRequestRow]:
    """The price-on-request options, fewest GPU-hours first, each with its market reference."""
    rows = []
    for o in result.on_request:
        ref = result.market_references.get(o.offer.gpu)
        hours = o.gpus * o.time_hours
        best = duration(fmt, o.time_hours_best) if o.time_hours_best is not None else None
        reference = reference_cost = ""
        if ref:
            reference = fmt.gettext("%(median)s (%(low)s – %(high)s, %(num)s published prices)") % {
                "median": fmt.usd(float(ref["median_usd_per_gpu_hour"])),
                "low": fmt.usd(float(ref["low_usd_per_gpu_hour"])),
                "high": fmt.usd(float(ref["high_usd_per_gpu_hour"])),
                "num": fmt.number(int(ref["prices"])),
            }
            reference_cost = (
                f"{fmt.usd_whole(hours * float(ref['low_usd_per_gpu_hour']))} – "
                f"{fmt.usd_whole(hours * float(ref['high_usd_per_gpu_hour']))}"
            )
        rows.append(
            OnRequestRow(
                offer=offer_link(fmt, o.offer, providers),
                offer_id=o.offer.offer_id,
                nodes=fmt.number(o.nodes),
                time=_spread(best, duration(fmt, o.time_hours)),
                gpu_hours=fmt.number(round(hours)),
                reference=reference or fmt.gettext("too few published prices"),
                reference_cost=reference_cost,
                assumed=assumed_text(fmt, o.offer),
                calibrated=o.calibrated,
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class ExcludedRow:
    """An offer left out and why."""

    offer: OfferLink
    reason: str


def excluded_rows(
    fmt: Formatter, excluded: Sequence[Exclusion], providers: Mapping[str, Any]
) -> list[ExcludedRow]:
    """Exclusions with translated reasons."""
    return [
        ExcludedRow(
            offer_link(fmt, e.offer, providers),
            reason_text(fmt, e.reason),
        )
        for e in excluded
    ]


@dataclass(frozen=True, slots=True)
class GpuRow:
    """The one-node verdict for one GPU model."""

    gpu: str
    memory: str
    min_gpus: str
    one_node: str
    one_node_fits: bool
    one_node_time: str
    nodes_for_deadline: str = ""
    calibrated: bool = True


def gpu_rows(fmt: Formatter, verdicts: Sequence[GpuVerdict]) -> list[GpuRow]:
    """Per-GPU verdicts, largest memory first."""
    rows = []
    for v in sorted(verdicts, key=lambda v: (-v.memory_gib, v.gpu)):
        rows.append(
            GpuRow(
                gpu=v.gpu,
                memory=fmt.gettext("%(num)s GiB") % {"num": fmt.fixed(v.memory_gib, 1)},
                min_gpus=fmt.number(v.min_gpus_to_fit)
                if v.min_gpus_to_fit is not None
                else fmt.gettext("unknown"),
                one_node=fmt.gettext("yes") if v.one_node_fits else fmt.gettext("no"),
                one_node_fits=v.one_node_fits,
                one_node_time=duration(fmt, v.one_node_time_hours)
                if v.one_node_fits
                else fmt.gettext("does not fit"),
                nodes_for_deadline=_nodes_for_deadline(fmt, v),
                calibrated=v.calibrated,
            )
        )
    return rows


def _nodes_for_deadline(fmt: Formatter, v: GpuVerdict) -> str:
    if v.nodes_for_deadline is not None:
        return fmt.number(v.nodes_for_deadline)
    if not v.priced:
        # The real reason: nothing to cost, whatever the deadline (not a slow GPU).
        return fmt.gettext("no priced offer of this GPU")
    return fmt.gettext("none within the node limit")


def _names(fmt: Formatter, names: Sequence[str]) -> str:
    return fmt.join(names)


def deadline_text(fmt: Formatter, result: PlanResult) -> str:
    """``your deadline of 30.0 days`` or ``the default deadline of 90.0 days (none given)``."""
    when = duration(fmt, result.deadline_hours)
    if result.deadline_is_default:
        return fmt.gettext("the default deadline of %(time)s (none given)") % {"time": when}
    return fmt.gettext("your deadline of %(time)s") % {"time": when}


def verdict(fmt: Formatter, result: PlanResult) -> tuple[str, str]:
    """Headline and explanation of "do you need multi-node?": memory and time."""
    _ = fmt.gettext
    limit = result.deadline_hours or 0.0
    fitting = [v for v in result.per_gpu if v.one_node_fits]
    fits = [v.gpu for v in fitting]
    fails = [v.gpu for v in result.per_gpu if not v.one_node_fits]
    timely = [v.gpu for v in fitting if (v.one_node_time_hours or 0.0) <= limit]
    deadline = deadline_text(fmt, result)
    if result.needs_multi_node:
        title = _("Yes: this job needs more than one 8-GPU node.")
        if fitting:
            fastest = min(fitting, key=lambda v: v.one_node_time_hours or 0.0)
            text = _(
                "One node of %(gpus)s holds the job in memory, but the fastest (%(gpu)s) "
                "would take %(time)s, past %(deadline)s."
            ) % {
                "gpus": _names(fmt, fits),
                "gpu": fastest.gpu,
                "time": duration(fmt, fastest.one_node_time_hours),
                "deadline": deadline,
            }
        else:
            text = _("No single 8-GPU node of the GPU models considered holds it in memory.")
        if result.nodes_for_deadline is not None:
            text += " " + fmt.ngettext(
                "%(num)s node of a listed offer is the fewest that finishes within %(deadline)s.",
                "%(num)s nodes of a listed offer are the fewest that finish within %(deadline)s.",
                result.nodes_for_deadline,
            ) % {"num": fmt.number(result.nodes_for_deadline), "deadline": deadline}
        else:
            text += " " + _(
                "No listed offer finishes it within %(deadline)s up to the node limit."
            ) % {"deadline": deadline}
    else:
        title = _("No: one 8-GPU node can run this job.")
        text = _("It fits on one node of %(gpus)s and finishes within %(deadline)s.") % {
            "gpus": _names(fmt, timely),
            "deadline": deadline,
        }
        if fails:
            text += " " + _("It does not fit on one node of %(gpus)s.") % {
                "gpus": _names(fmt, fails)
            }
        text += " " + _("More nodes still finish sooner; see the options below.")
    return title, text


@dataclass(frozen=True, slots=True)
class ScalingTable:
    """The scaling chart as a table: node counts down, one column per fabric."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]


def curve_label(fmt: Formatter, curve: ScalingCurve, providers: Mapping[str, Any]) -> str:
    """``InfiniBand — Alpha Cloud, H100-SXM-80GB, 3,200 Gbit/s``."""
    link = offer_link(fmt, curve.offer, providers)
    gbps = curve.offer.per_node_gbps or 0
    return fmt.gettext("%(fabric)s — %(provider)s, %(gpu)s, %(gbps)s Gbit/s") % {
        "fabric": FABRIC_LABELS.get(curve.fabric, curve.fabric),
        "provider": link.provider_name,
        "gpu": curve.offer.gpu,
        "gbps": fmt.number(gbps),
    }


def scaling_lines(
    fmt: Formatter, curves: Sequence[ScalingCurve], providers: Mapping[str, Any]
) -> tuple[list[int], list[charts.Line]]:
    """Node counts and one chart line per fabric."""
    counts = [n for n, _e in curves[0].points] if curves else []
    lines = [
        charts.Line(curve_label(fmt, c, providers), tuple(e for _n, e in c.points)) for c in curves
    ]
    return counts, lines


def scaling_table(
    fmt: Formatter, curves: Sequence[ScalingCurve], providers: Mapping[str, Any]
) -> ScalingTable:
    """The scaling chart's data as text."""
    counts, lines = scaling_lines(fmt, curves, providers)

    def text(value: float | None) -> str:
        return fmt.gettext("does not fit") if value is None else fmt.percent(value, digits=1)

    rows = tuple(
        (fmt.number(n), tuple(text(line.values[i]) for line in lines)) for i, n in enumerate(counts)
    )
    return ScalingTable(tuple(line.label for line in lines), rows)


def cost_points(
    fmt: Formatter, options: Sequence[PlanOption], providers: Mapping[str, Any]
) -> tuple[list[charts.Point], list[charts.Point]]:
    """Options split into the Pareto front and the others, labelled for the chart."""
    front: list[charts.Point] = []
    others: list[charts.Point] = []
    for o in options:
        link = offer_link(fmt, o.offer, providers)
        label = fmt.ngettext(
            "%(provider)s, %(gpu)s, %(num)s node", "%(provider)s, %(gpu)s, %(num)s nodes", o.nodes
        ) % {"provider": link.provider_name, "gpu": o.offer.gpu, "num": fmt.number(o.nodes)}
        point = charts.Point(o.time_hours, o.cost_usd, label)
        (front if o.pareto else others).append(point)
    return front, others


def front_summary(
    fmt: Formatter, options: Sequence[PlanOption], providers: Mapping[str, Any]
) -> list[str]:
    """The Pareto options as sentences, fastest first (the cost/time chart's text)."""
    front = sorted((o for o in options if o.pareto), key=lambda o: o.time_hours)
    out = []
    for o in front:
        link = offer_link(fmt, o.offer, providers)
        out.append(
            fmt.gettext("%(offer)s: %(time)s, %(cost)s")
            % {
                "offer": fmt.ngettext(
                    "%(provider)s, %(gpu)s, %(num)s node",
                    "%(provider)s, %(gpu)s, %(num)s nodes",
                    o.nodes,
                )
                % {"provider": link.provider_name, "gpu": o.offer.gpu, "num": fmt.number(o.nodes)},
                "time": duration(fmt, o.time_hours),
                "cost": fmt.usd_whole(o.cost_usd),
            }
        )
    return out


def memory_facts(fmt: Formatter, result: PlanResult) -> list[tuple[str, str]]:
    """The memory arithmetic as (label, value) pairs."""
    _ = fmt.gettext
    m = result.memory

    def gib(value: float) -> str:
        return _("%(num)s GiB") % {"num": fmt.fixed(value, 1)}

    bytes_per_param = m.bytes_per_param
    return [
        (_("Parameters"), fmt.compact(m.params)),
        (_("Weights"), gib(m.weights_gib)),
        (_("Gradients"), gib(m.grads_gib)),
        (_("Optimizer state"), gib(m.optimizer_gib)),
        (
            _("Model state in total"),
            _("%(total)s (%(bytes)s bytes per parameter)")
            % {"total": gib(m.total_state_gib), "bytes": fmt.number(bytes_per_param)},
        ),
    ]


def assumption_texts(fmt: Formatter, result: PlanResult) -> list[str]:
    """The planner's assumptions, translated."""
    return [assumption_text(fmt, a) for a in result.assumptions]


@dataclass(frozen=True, slots=True)
class ServingRow:
    """One GPU model of an inference sizing, formatted."""

    gpu: str
    memory: str
    layout: str
    per_gpu: str
    fits_one_node: bool
    nodes: str
    tokens_per_s: str
    usd_per_hour: str
    usd_per_million: str
    ttft: str = ""
    evidence: str = ""
    calibrated: bool = True


def ttft_text(fmt: Formatter, seconds: float | None) -> str:
    """``850 ms`` below a second, else ``2.4 s``; empty when unknown."""
    if seconds is None:
        return ""
    if seconds < 1:
        return fmt.gettext("%(num)s ms") % {"num": fmt.fixed(seconds * 1e3, 0)}
    return fmt.gettext("%(num)s s") % {"num": fmt.fixed(seconds, 1)}


def evidence_text(fmt: Formatter, points: int, calibrated: bool) -> str:
    """How many published serving points stand behind a GPU's figures, flagged when few."""
    counted = fmt.ngettext("%(num)s published point", "%(num)s published points", points) % {
        "num": fmt.number(points)
    }
    if calibrated:
        return counted
    return fmt.gettext("little serving evidence (%(points)s)") % {"points": counted}


def serving_notices(fmt: Formatter, serving: ServingPlan) -> list[str]:
    """The error bands of the serving figures, and a warning when a GPU has little evidence."""
    _ = fmt.gettext
    notices = [
        _(
            "Output tokens/s (decoding at the full context) and the time to first token (one "
            "prompt that fills the context) are estimates: ±%(band)s and ±%(ttft_band)s on "
            "serving benchmarks held out by source."
        )
        % {
            "band": fmt.percent(serving.error_band_pct / 100),
            "ttft_band": fmt.percent(serving.ttft_band_pct / 100),
        }
    ]
    if any(not v.calibrated for v in serving.per_gpu):
        notices.append(
            _(
                "GPUs marked “little serving evidence” have fewer than %(min)s published "
                "serving measurements behind them: their figures come from constants fitted on "
                "other GPUs and may be further off than the band says."
            )
            % {"min": fmt.number(MIN_SERVING_POINTS)}
        )
    return notices


def serving_rows(fmt: Formatter, serving: ServingPlan) -> list[ServingRow]:
    """Per-GPU serving verdicts, largest memory first (unknown prices say so)."""
    _ = fmt.gettext

    def gib(value: float | None) -> str:
        return _("%(num)s GiB") % {"num": fmt.fixed(value or 0.0, 1)}

    rows = []
    for v in sorted(serving.per_gpu, key=lambda v: (-v.memory_gib, v.gpu)):
        fits = v.tp is not None
        rows.append(
            ServingRow(
                gpu=v.gpu,
                memory=gib(v.memory_gib),
                layout=f"TP {v.tp} × PP {v.pp}" if fits else _("does not fit"),
                per_gpu=_("%(weights)s weights + %(kv)s KV cache")
                % {"weights": gib(v.weights_gib_per_gpu), "kv": gib(v.kv_cache_gib_per_gpu)}
                if fits
                else "",
                fits_one_node=v.nodes_per_replica == 1,
                nodes=fmt.number(v.nodes)
                if v.nodes is not None
                else _("none within the node limit"),
                tokens_per_s=fmt.number(round(v.tokens_per_s)) if v.tokens_per_s else "",
                usd_per_hour=fmt.usd(v.usd_per_hour)
                if v.usd_per_hour is not None
                else _("unknown"),
                usd_per_million=fmt.usd(v.usd_per_million_tokens)
                if v.usd_per_million_tokens is not None
                else _("unknown"),
                ttft=ttft_text(fmt, v.ttft_s),
                evidence=evidence_text(fmt, v.serving_points, v.calibrated),
                calibrated=v.calibrated,
            )
        )
    return rows


def serving_facts(fmt: Formatter, serving: ServingPlan) -> list[tuple[str, str]]:
    """The serving memory sum as (label, value) pairs."""
    _ = fmt.gettext

    def gib(value: float) -> str:
        return _("%(num)s GiB") % {"num": fmt.fixed(value, 1)}

    return [
        (_("Weights"), gib(serving.weights_gib)),
        (_("KV cache of all concurrent sequences"), gib(serving.kv_cache_gib)),
        (_("Weights and KV cache in total"), gib(serving.weights_gib + serving.kv_cache_gib)),
    ]


def serving_verdict(fmt: Formatter, result: PlanResult) -> tuple[str, str]:
    """Headline and explanation of "do you need multi-node?" for serving a model."""
    _ = fmt.gettext
    one = [v.gpu for v in result.per_gpu if v.one_node_fits]
    more = [v.gpu for v in result.per_gpu if not v.one_node_fits]
    if result.needs_multi_node:
        return (
            _("Yes: one replica of this model needs more than one 8-GPU node."),
            _("No 8-GPU node of the GPU models considered holds the weights and the KV cache."),
        )
    text = _("One 8-GPU node holds a replica on %(gpus)s.") % {"gpus": fmt.join(one)}
    if more:
        text += " " + _("More than one node is needed on %(gpus)s.") % {"gpus": fmt.join(more)}
    return _("No, if you pick the right GPU: one node holds the model and its KV cache."), text


STEP_PARTS: Final = (
    ("compute", N_("Compute")),
    ("stage_imbalance", N_("Pipeline stage imbalance")),
    ("bubble", N_("Pipeline bubble")),
    ("tp_comm", N_("Tensor-parallel communication")),
    ("cp_comm", N_("Context-parallel communication")),
    ("pp_comm", N_("Pipeline sends")),
    ("dp_comm_exposed", N_("Data-parallel communication")),
    ("all_to_all", N_("All-to-all (expert parallelism)")),
    ("overlap_slowdown", N_("Compute slowed by overlapped communication")),
    ("straggler", N_("Waiting for the slowest node")),
)
"""The parts of one step (``StepBreakdown.as_dict`` keys) and their chart labels."""


def step_parts(fmt: Formatter, option: PlanOption) -> list[tuple[str, float]]:
    """Translated label and seconds of each non-zero part of one step of ``option``."""
    return [
        (fmt.gettext(label), option.breakdown[key])
        for key, label in STEP_PARTS
        if option.breakdown.get(key, 0.0) > 0
    ]
