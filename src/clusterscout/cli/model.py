"""Model commands: ``estimate``, ``plan`` and ``check-model``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import click

from clusterscout.app import estimates, plans
from clusterscout.app.errors import Operation
from clusterscout.app.fields import PLAN_FIELDS
from clusterscout.cli.options import (
    choice,
    database_url_option,
    engine_for,
    fail,
    field_options,
    field_values,
    format_option,
    reporting,
    settings_for,
)
from clusterscout.cli.output import Column, out, print_json, print_table
from clusterscout.model.calibration import Calibration, ErrorFigures
from clusterscout.model.checkinference import KINDS, ServingCheck
from clusterscout.model.checkmodel import (
    CheckReport,
    RatioResult,
    ReferenceRatio,
    figures_by_family,
    figures_by_stack,
    ratio_checks,
    summarise,
)
from clusterscout.model.planner.results import MIN_SERVING_POINTS, PlanOption, PlanResult
from clusterscout.web.schemas import STALE_PRICE_DAYS, estimate_json, plan_json


def _read_json(source: str) -> Any:
    """Parsed JSON from a file or ``-`` (stdin); any problem is a one-line error naming it."""
    if not source.strip():
        raise fail("the JSON file name is empty (give a path, or - for stdin)")
    try:
        body = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot read {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise fail(f"{source}: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise fail(f"{source}: invalid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise fail(f"{source}: invalid JSON: nested too deeply") from None


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "unknown"
    return f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


@click.command()
@click.argument("scenario")
@format_option("json", ("json", "table"))
@database_url_option
def estimate(scenario: str, fmt: str, database_url: str | None) -> None:
    """Run the performance model on one scenario (SCENARIO.json, or - for stdin)."""
    fmt = choice("--format", fmt, ("json", "table"))
    body = _read_json(scenario)
    with (
        engine_for(database_url).connect() as conn,
        reporting(Operation.MODEL, flags=False, prefix=f"{scenario}: "),
    ):
        answer = estimates.run_estimate(conn, body)
    result = estimate_json(answer)
    if fmt == "json":
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    rows: list[list[str]] = []
    for key, value in result.items():
        if key in {"kind", "gpu"}:
            continue
        if isinstance(value, dict):
            rows.extend(
                [f"{key}.{sub}", _num(v) if isinstance(v, float) else str(v)]
                for sub, v in value.items()
            )
        else:
            rows.append([key, _num(value) if isinstance(value, float) else str(value)])
    print_table(
        f"{result['kind']} estimate on {result['gpu']}",
        [Column("quantity"), Column("value", right=True)],
        rows,
    )
    if result.get("calibrated") is False:
        out.print(
            f"Not calibrated: the {result['gpu_family']} family has fewer than 5 published "
            "measurements; this estimate rests on a prior (a measured ratio to another family).",
            highlight=False,
            markup=False,
        )


@click.command()
@field_options(PLAN_FIELDS, plan=True)
@click.option(
    "--limit", default=15, show_default=True, type=int, help="Options shown in the table."
)
@click.option(
    "--price",
    "prices",
    multiple=True,
    metavar="OFFER=USD_PER_GPU_HOUR",
    help="A price you were quoted for an offer (repeatable); it ranks the offer and is "
    "labelled as yours.",
)
@format_option("table", ("table", "json"))
@database_url_option
def plan(
    limit: int, prices: tuple[str, ...], fmt: str, database_url: str | None, **fields: Any
) -> None:
    """Do I need multi-node? And which offer finishes my job cheapest or fastest?

    Every field of POST /api/v1/plan is an option here, with the same name (dashes for
    underscores) and the same rules; --price fills the body's prices object.
    """
    fmt = choice("--format", fmt, ("table", "json"))
    if limit < 0:
        raise fail(f"--limit: must be at least 0 (got {limit})")
    body = field_values(fields, PLAN_FIELDS)
    if prices:
        body["prices"] = _prices(prices)
    with engine_for(database_url).connect() as conn, reporting(Operation.MODEL):
        result = plans.run_plan(conn, body)
    if fmt == "json":
        print_json(plan_json(result))
        return
    if result.serving is not None:
        print_serving(result, limit)
        return
    print_plan(result, limit)


def _prices(values: tuple[str, ...]) -> dict[str, str]:
    """``--price OFFER=USD`` values as the body's ``prices`` (the service checks the numbers)."""
    out: dict[str, str] = {}
    for value in values:
        offer_id, sep, usd = value.partition("=")
        if not sep or not offer_id.strip() or not usd.strip():
            raise fail(f"--price: {value!r} is not OFFER=USD_PER_GPU_HOUR")
        out[offer_id.strip()] = usd.strip()
    return out


def _money(value: float | None, digits: int = 2) -> str:
    return "unknown" if value is None else f"{value:,.{digits}f}"


def _ttft(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1e3:,.0f} ms" if seconds < 1 else f"{seconds:,.1f} s"


def _evidence(points: int, calibrated: bool) -> str:
    return f"{points} points" if calibrated else f"few ({points})"


def print_serving(result: PlanResult, limit: int) -> None:
    """An inference sizing as text: the memory sum, nodes and tokens/s per GPU model, offers."""
    sp = result.serving
    if sp is None:  # pragma: no cover - print_plan handles training plans
        return
    fewest = result.min_gpus_to_fit if result.min_gpus_to_fit is not None else "none"
    out.print(
        f"[bold]Needs multi-node:[/bold] {_verdict(result)} — weights "
        f"{sp.weights_gib:,.0f} GiB ({sp.precision.value}) + KV cache {sp.kv_cache_gib:,.0f} GiB "
        f"({sp.concurrency} sequences x {sp.context:,} tokens); smallest GPU count that fits: "
        f"{fewest}",
        highlight=False,
    )
    target = f"; target {sp.target_tokens_per_s:,.0f} tokens/s" if sp.target_tokens_per_s else ""
    out.print(
        f"Estimates: decode tokens/s at the full context ±{sp.error_band_pct:.0f}%, time to "
        f"first token for one prompt that fills the context ±{sp.ttft_band_pct:.0f}% (p90 "
        f"errors on serving benchmarks held out by source){target}.",
        highlight=False,
    )
    if any(not v.calibrated for v in sp.per_gpu):
        out.print(
            f"GPUs marked 'few' have fewer than {MIN_SERVING_POINTS} published serving points "
            "behind them: their figures come from constants fitted on other GPUs.",
            highlight=False,
        )
    rows = []
    for v in sorted(sp.per_gpu, key=lambda v: (v.nodes or 10**9, -(v.tokens_per_s or 0))):
        fits = v.tp is not None
        rows.append(
            [
                v.gpu,
                f"tp{v.tp} pp{v.pp}" if fits else "does not fit",
                f"{(v.weights_gib_per_gpu or 0) + (v.kv_cache_gib_per_gpu or 0):,.0f}"
                if fits
                else "",
                str(v.replicas) if fits else "",
                str(v.nodes) if fits else "",
                f"{v.tokens_per_s:,.0f}" if v.tokens_per_s else "",
                _ttft(v.ttft_s),
                _money(v.usd_per_hour),
                _money(v.usd_per_million_tokens),
                _evidence(v.serving_points, v.calibrated),
            ]
        )
    print_table(
        "Per GPU model (8-GPU nodes; price: cheapest listed offer of that GPU)",
        [
            Column("GPU"),
            Column("replica"),
            Column("GiB/GPU", right=True),
            Column("replicas", right=True),
            Column("nodes", right=True),
            Column("tokens/s", right=True),
            Column("TTFT", right=True),
            Column("USD/h", right=True),
            Column("USD/Mtok", right=True),
            Column("evidence"),
        ],
        rows,
    )
    offer_rows = [
        [
            o.offer.offer_id,
            o.offer.gpu,
            str(o.nodes),
            f"tp{o.tp} pp{o.pp} x{o.replicas}",
            f"{o.tokens_per_s:,.0f}",
            _ttft(o.ttft_s),
            _money(o.usd_per_hour),
            _money(o.usd_per_million_tokens),
            _evidence(o.serving_points, o.calibrated),
        ]
        for o in sp.options[:limit]
    ]
    if offer_rows:
        print_table(
            "Offers by cost per million output tokens (GPUs with little serving evidence last)",
            [
                Column("offer"),
                Column("GPU"),
                Column("nodes", right=True),
                Column("layout"),
                Column("tokens/s", right=True),
                Column("TTFT", right=True),
                Column("USD/h", right=True),
                Column("USD/Mtok", right=True),
                Column("evidence"),
            ],
            offer_rows,
        )
    if result.excluded:
        out.print(f"left out ({len(result.excluded)}):", highlight=False)
        for e in result.excluded:
            out.print(f"  {e.offer.offer_id}: {e.reason.value}", highlight=False, markup=False)


def _verdict(result: PlanResult) -> str:
    fits = [v.gpu for v in result.per_gpu if v.one_node_fits]
    fails = [v.gpu for v in result.per_gpu if not v.one_node_fits]
    if result.needs_multi_node:
        return "yes"
    if fails:
        # The answer depends on the GPU model: say on which ones one node is not enough.
        return f"no on {', '.join(fits)}; yes on {', '.join(fails)}"
    return "no"


def _days(hours: float | None) -> str:
    return "unknown" if hours is None else f"{hours / 24:,.1f} days"


def _deadline_line(result: PlanResult) -> str:
    """The deadline applied, and the fewest nodes that meet it."""
    deadline = _days(result.deadline_hours)
    if result.deadline_is_default:
        deadline += " (default: no deadline given)"
    fewest = (
        f"{result.nodes_for_deadline} node(s) of a listed offer"
        if result.nodes_for_deadline is not None
        else "no listed offer within the node limit"
    )
    spot = "allowed" if result.allow_spot else "not used across nodes (--allow-spot to use them)"
    return (
        f"[bold]Deadline:[/bold] {deadline}; fewest nodes that meet it: {fewest}. "
        f"Stack: {result.stack.value}. Spot prices: {spot}."
    )


_OPTION_COLUMNS = (
    Column("#", right=True),
    Column("offer"),
    Column("GPU"),
    Column("price"),
    Column("nodes", right=True),
    Column("layout"),
    Column("hours", right=True),
    Column("cost USD", right=True),
    Column("scaling", right=True),
    Column("eff. $/GPU-h", right=True),
    Column("pareto"),
    Column("calibrated"),
    Column("goodput", right=True),
    Column("interrupts", right=True),
    Column("+ hours", right=True),
    Column("+ USD", right=True),
    Column("all-in USD", right=True),
    Column("network"),
)

UNCALIBRATED_NOTE = (
    "Calibrated 'no': the GPU's family has fewer than 5 published measurements, so its speed "
    "rests on a prior (a measured ratio to another family) and is less certain than the band "
    "says; such options are ranked after every calibrated one."
)


def _step_line(option: PlanOption) -> str:
    """One step of option 1 by cause (all-to-all shows for MoE layouts), seconds."""
    parts = ", ".join(f"{k} {v:.3g}" for k, v in option.breakdown.items() if v > 0)
    return f"Step of option #1 ({sum(option.breakdown.values()):.3g} s): {parts}"


def _goodput_cells(option: PlanOption) -> list[str]:
    """Goodput, expected interruptions and the hours and dollars they add."""
    g = option.goodput
    if g is None:
        return ["", "", "", ""]
    if g.time_hours is None or g.added_hours is None or g.added_usd is None:
        return ["0%", "never ends", "", ""]
    return [
        f"{g.goodput:.1%}",
        f"{g.expected_interruptions or 0:,.1f}",
        f"{g.added_hours:,.1f}",
        f"{g.added_usd:,.0f}",
    ]


def _all_in_cell(option: PlanOption) -> str:
    """Compute, storage and egress in one total, or which price is unknown."""
    a = option.all_in
    if a is None:
        return ""
    if a.total_usd is None:
        return "unknown: " + ", ".join(a.unknown)
    return f"{a.total_usd:,.0f}"


def _reliability_line(result: PlanResult) -> str | None:
    """What the goodput columns assume, and where it comes from."""
    r = result.reliability
    if r is None:
        return None
    restart = f"restart {r.restart_minutes:g} min" + (
        " (assumed)" if r.restart_assumed and "restart_minutes" not in r.given else ""
    )
    given = f"; given: {', '.join(r.given)}" if r.given else ""
    return (
        f"Goodput assumes {r.failures_per_million_gpu_hours:g} unplanned interruptions per "
        f"million GPU-hours ({r.source}, {r.source_url}), a checkpoint every "
        f"{r.checkpoint_minutes:g} min (half of it lost per interruption) and {restart}{given}. "
        "Hours and cost columns are failure-free; '+ hours' and '+ USD' are what "
        "interruptions add. 'all-in USD' adds shared storage for one checkpoint and the "
        "tokenized dataset over the run and moving the weights out, where the catalog knows "
        "both prices."
    )


def _measured_lines(options: Sequence[PlanOption]) -> list[str]:
    """One line per offer whose network figure rests on a published run (ADR 0028)."""
    lines, seen = [], set()
    for o in options:
        m = o.offer.measured
        if m is None or o.offer.offer_id in seen:
            continue
        seen.add(o.offer.offer_id)
        lines.append(
            f"Network 'measured': {o.offer.offer_id} uses {m.factor:.0%} of its advertised "
            f"{o.offer.advertised_gbps:,.0f} Gbit/s: {m.collective} on {m.nodes} x "
            f"{m.gpus_per_node} GPUs measured {m.busbw_gbs:.1f} GB/s bus bandwidth, the model "
            f"{m.predicted_busbw_gbs:.1f} ({m.source_url})"
        )
    return lines


def print_plan(result: PlanResult, limit: int) -> None:
    """The plan as text: the verdict, the options table and what was left out."""
    mem = result.memory
    fewest = result.min_gpus_to_fit if result.min_gpus_to_fit is not None else "none"
    rank = f", adapter rank {result.lora_rank}" if result.lora_rank else ""
    out.print(
        f"[bold]Needs multi-node:[/bold] {_verdict(result)} — job {result.job.value}{rank}: "
        f"model states (weights, gradients, Adam) {mem.total_state_gib:,.0f} GiB; smallest GPU "
        f"count that fits: {fewest}",
        highlight=False,
    )
    out.print(_deadline_line(result), highlight=False)
    for v in result.per_gpu:
        one = (
            f"one node: {v.one_node_time_hours:,.0f} h ({_days(v.one_node_time_hours)})"
            if v.one_node_fits and v.one_node_time_hours is not None
            else "does not fit one node"
        )
        if v.nodes_for_deadline is not None:
            timely = f"{v.nodes_for_deadline} node(s) meet the deadline"
        elif not v.priced:
            timely = "no priced offer of this GPU"
        else:
            timely = "no offer meets the deadline"
        prior = "" if v.calibrated else "; not calibrated (prior)"
        out.print(
            f"  {v.gpu}: min {v.min_gpus_to_fit} GPUs; {one}; {timely}{prior}", highlight=False
        )
    rows = []
    for o in result.options[:limit]:
        lay = o.layout
        rows.append(
            [
                str(o.rank_by_cost),
                o.offer.offer_id,
                o.offer.gpu,
                _price_cell(o),
                str(o.nodes),
                f"tp{lay.tp} pp{lay.pp}{f' ep{lay.ep}' if lay.ep > 1 else ''} dp{lay.dp} "
                f"{lay.sharding.value}"
                + (f" batch {lay.global_batch}" if o.steps not in (0, result.steps) else ""),
                _spread(o.time_hours_best, o.time_hours, "{:,.1f}"),
                _spread(o.cost_usd_best, o.cost_usd, "{:,.0f}"),
                f"{o.scaling_efficiency:.1%}",
                f"{o.effective_usd_per_gpu_hour:.2f}",
                "★" if o.pareto else "",
                "yes" if o.calibrated else "no (prior)",
                *_goodput_cells(o),
                _all_in_cell(o),
                f"measured {o.offer.measured.factor:.0%}" if o.offer.measured else "advertised",
            ]
        )
    title = (
        f"Options by cost (estimates, ±{result.error_band_pct:.0f}%: "
        "p90 error on held-out measurements)"
    )
    if rows:
        print_table(title, _OPTION_COLUMNS, rows)
        out.print(_step_line(result.options[0]), highlight=False, markup=False)
        line = _reliability_line(result)
        if line:
            out.print(line, highlight=False, markup=False)
        if any(not o.calibrated for o in result.options[:limit]):
            out.print(UNCALIBRATED_NOTE, highlight=False, markup=False)
        _print_assumed(result.options[:limit])
        for line in _measured_lines(result.options[:limit]):
            out.print(line, highlight=False, markup=False)
    else:
        out.print(
            "No option finishes within the deadline and budget; the offers left out say why.",
            highlight=False,
        )
    _print_on_request(result, limit)
    if result.excluded:
        out.print(f"left out ({len(result.excluded)}):", highlight=False)
        for e in result.excluded:
            out.print(f"  {e.offer.offer_id}: {e.reason.value}", highlight=False, markup=False)


def _spread(best: float | None, worst: float, fmt: str) -> str:
    """``worst`` alone, or ``best-worst`` when the option rests on an assumed network."""
    if best is None or fmt.format(best) == fmt.format(worst):
        return fmt.format(worst)
    return f"{fmt.format(best)}-{fmt.format(worst)}"


def _price_cell(o: PlanOption) -> str:
    """The price, its tier or "buyer", and "stale" when observed over 30 days ago."""
    label = "buyer" if o.offer.price_source == "buyer" else o.offer.price_tier or ""
    age = _age_days(o.offer.price_as_of)
    stale = " stale" if age is not None and age > STALE_PRICE_DAYS else ""
    return f"{o.offer.usd_per_gpu_hour or 0:.2f} {label}{stale}".strip()


def _age_days(as_of: str | None) -> int | None:
    return None if as_of is None else (datetime.now(UTC).date() - date.fromisoformat(as_of)).days


def _assumption(o: PlanOption) -> str | None:
    parts = [o.offer.assumed.label] if o.offer.assumed else []
    if o.offer.gpus_per_node_assumed:
        parts.append(f"assumed {o.offer.gpus_per_node} GPUs per node")
    return ", ".join(parts) or None


def _print_assumed(options: Sequence[PlanOption]) -> None:
    """One line per offer whose option rests on an assumed value, naming it."""
    seen: set[str] = set()
    lines = []
    for o in options:
        label = _assumption(o)
        if label and o.offer.offer_id not in seen:
            seen.add(o.offer.offer_id)
            lines.append(f"  {o.offer.offer_id}: {label}")
    if lines:
        out.print(
            "Ranges: unknown network facts, evaluated at both ends of data/fabric_brackets.toml "
            "and ranked by the slower one:",
            highlight=False,
            markup=False,
        )
        for line in lines:
            out.print(line, highlight=False, markup=False)


def _print_on_request(result: PlanResult, limit: int) -> None:
    """Offers without a published price: time, GPU-hours and the market reference."""
    if not result.on_request:
        return
    rows = []
    for o in result.on_request[:limit]:
        ref = result.market_references.get(o.offer.gpu)
        hours = o.gpus * o.time_hours
        reference = (
            f"{ref['median_usd_per_gpu_hour']:.2f} ({ref['low_usd_per_gpu_hour']:.2f}-"
            f"{ref['high_usd_per_gpu_hour']:.2f}, {ref['prices']} prices, {ref['tier']})"
            if ref
            else "none"
        )
        rows.append(
            [
                o.offer.offer_id,
                o.offer.gpu,
                str(o.nodes),
                _spread(o.time_hours_best, o.time_hours, "{:,.1f}"),
                f"{hours:,.0f}",
                reference,
                _assumption(o) or "",
            ]
        )
    print_table(
        f"Price on request ({len({o.offer.offer_id for o in result.on_request})} offers; "
        "market reference: median (range) of "
        "other offers' published prices per GPU-hour, not the provider's price; --price "
        "OFFER=USD ranks one)",
        [
            Column("offer"),
            Column("GPU"),
            Column("nodes", right=True),
            Column("hours", right=True),
            Column("GPU-hours", right=True),
            Column("market reference $/GPU-h"),
            Column("assumed"),
        ],
        rows,
    )


@click.command("check-model")
@click.argument("measurements", required=False, type=click.Path(path_type=Path))
@click.option(
    "--data-dir",
    "--data",
    type=click.Path(path_type=Path),
    help="Catalog with gpus.toml and calibration.toml (default: the shipped catalog).",
)
def check_model(measurements: Path | None, data_dir: Path | None) -> None:
    """Predicted vs measured for every point the model can express; median and p90 last.

    MEASUREMENTS defaults to measurements.json of the catalog.
    """
    data_dir = data_dir or settings_for(None).data_dir
    measurements = measurements or data_dir / "measurements.json"
    raw = _read_json(str(measurements))
    points = raw.get("points") if isinstance(raw, dict) else raw
    if not isinstance(points, list):
        raise fail(f"{measurements}: expected a list of points or an object with 'points'")
    with reporting():
        report, calibration = estimates.check_model(points, data_dir)
        references = estimates.check_references(data_dir)
    _print_points("predicted vs measured", report, "\nnot expressed", stack=True)
    _print_error_figures(report, calibration)
    ratios = raw.get("ratios", []) if isinstance(raw, dict) else []
    _print_ratio_checks(*ratio_checks(ratios if isinstance(ratios, list) else [], report.results))
    _print_references(references)
    with reporting():
        serving, _ = estimates.check_serving(points, data_dir)
    _print_serving_check(serving, calibration)
    out.print(
        f"expressed {len(report.results)} of {report.total} points; "
        f"median abs error {report.median_abs_error_pct:.1f}%, "
        f"p90 abs error {report.p90_abs_error_pct:.1f}%",
        highlight=False,
    )


def _print_points(title: str, report: CheckReport, not_expressed: str, *, stack: bool) -> None:
    """Predicted vs measured per point (with its software stack if ``stack``), then the points
    the model cannot express and why."""
    columns = [Column("point"), *([Column("stack")] if stack else []), Column("metric")]
    columns += [Column(h, right=True) for h in ("measured", "predicted", "error %")]
    rows = [
        [
            r.id,
            *([r.stack or "-"] if stack else []),
            f"{r.metric} ({r.unit})",
            _num(r.measured),
            _num(r.predicted),
            f"{r.signed_error_pct:+.1f}",
        ]
        for r in report.results
    ]
    print_table(title, columns, rows)
    out.print(f"{not_expressed} ({len(report.unexpressed)}):", highlight=False)
    for u in report.unexpressed:
        out.print(f"  {u.id}: {u.reason}", highlight=False, markup=False)


def _print_serving_check(check: ServingCheck, calibration: Calibration) -> None:
    """The inference points apart: the serving model, its in-sample and held-out error, split
    into decode, time to first token and mixture-of-experts points, and per GPU."""
    report = check.report
    _print_points(
        "serving (inference) points: serving model, predicted vs measured",
        report,
        "inference points not expressed",
        stack=False,
    )
    out.print("serving, in sample (these points, current constants):", highlight=False)
    out.print(_figure_line("all", summarise(report.results)), highlight=False)
    for kind, fig in check.by_kind.items():
        out.print(_figure_line(kind, fig), highlight=False)
    out.print("serving, in sample per GPU (median signed: + is optimistic):", highlight=False)
    for name, fig in check.by_gpu.items():
        out.print(_figure_line(name, fig, width=16), highlight=False)
    figures = calibration.inference.figures if calibration.inference else {}
    held = figures.get("holdout")
    if held is not None:
        out.print(
            "serving, held out by source (each source predicted by constants fitted on the "
            "others):",
            highlight=False,
        )
        out.print(_figure_line("all", held), highlight=False)
        for kind in KINDS:
            if f"holdout.{kind}" in figures:
                out.print(_figure_line(kind, figures[f"holdout.{kind}"]), highlight=False)
        for key, fig in figures.items():
            if key.startswith("holdout.gpu."):
                out.print(_figure_line(key.removeprefix("holdout.gpu."), fig, 16), highlight=False)
    errors = summarise(report.results)
    out.print(
        f"serving: expressed {len(report.results)} inference points; median abs error "
        f"{errors.median_abs_error_pct:.1f}%, p90 abs error {errors.p90_abs_error_pct:.1f}%\n",
        highlight=False,
    )


COMMANDS: tuple[click.Command, ...] = (estimate, plan, check_model)


def _figure_line(label: str, fig: ErrorFigures, width: int = 10) -> str:
    return (
        f"  {label:{width}s} {fig.points:4d} points  median {fig.median_abs_error_pct:5.1f}%  "
        f"p90 {fig.p90_abs_error_pct:5.1f}%  optimistic {fig.optimistic_share:4.0%}  "
        f"median signed {fig.median_signed_error_pct:+5.1f}%"
    )


def _print_error_figures(report: CheckReport, calibration: Calibration) -> None:
    """In-sample error and signed bias (overall, per stack), then the calibration's held-out
    and test-set figures: the constants saw the in-sample points, not the others."""
    out.print(
        "\nin sample (these points, current constants; signed: predicted over measured "
        "speed - 1, positive = optimistic):",
        highlight=False,
    )
    out.print(_figure_line("all", report.figures), highlight=False)
    for stack, fig in figures_by_stack(report.dense_results).items():
        out.print(_figure_line(stack, fig), highlight=False)
    figures = calibration.figures
    titles = {
        "holdout": "held out by source at calibration time (constants refitted without each "
        "source's points)",
        "test": "test sources never used for fitting (" + ", ".join(calibration.test_sources) + ")",
    }
    for key, title in titles.items():
        if key not in figures:
            continue
        out.print(f"{title}:", highlight=False, markup=False)
        out.print(_figure_line("all", figures[key]), highlight=False)
        for stack in ("megatron", "pytorch", "deepspeed"):
            if f"{key}.{stack}" in figures:
                out.print(_figure_line(stack, figures[f"{key}.{stack}"]), highlight=False)
        for family in (*calibration.families, calibration.default_family.name):
            by_family = figures.get(f"{key}.family.{family}")
            if by_family is not None:
                out.print(_figure_line(family, by_family), highlight=False)
    _print_families(report, calibration)
    _print_moe_figures(report, calibration)


def _print_families(report: CheckReport, calibration: Calibration) -> None:
    """Each GPU family: its calibration state and level, and its in-sample error."""
    out.print(
        "\nGPU families (level: best share of dense BF16 peak under Megatron; calibrated: "
        "fitted on at least 5 of the family's own points, else a prior that every answer "
        "flags):",
        highlight=False,
    )
    rows = figures_by_family(report.dense_results, calibration)
    for fam in (*calibration.families.values(), calibration.default_family):
        state = "calibrated" if fam.calibrated else "NOT calibrated (prior)"
        out.print(
            f"  {fam.name:10s} level {fam.level:.3f}  {state}, {fam.points} fitted points "
            f"from {fam.source_groups} sources; GPUs: {', '.join(fam.gpus) or 'any other'}",
            highlight=False,
            markup=False,
        )
        if fam.name in rows:
            out.print(_figure_line("  in sample", rows[fam.name]), highlight=False)


def _print_ratio_checks(checked: tuple[RatioResult, ...], skipped: tuple[Any, ...]) -> None:
    """Published same-benchmark cross-GPU speed ratios against the model's."""
    out.print(
        "\ncross-GPU ratios: the same benchmark on two GPU families, published against "
        "predicted (error: predicted over published ratio - 1):",
        highlight=False,
    )
    for r in checked:
        out.print(
            f"  {r.id:55s} {r.gpu_a}/{r.gpu_b}: published {r.published:.2f}, predicted "
            f"{r.predicted:.2f}, error {r.error_pct:+.1f}% ({r.confidence})",
            highlight=False,
            markup=False,
        )
    for u in skipped:
        out.print(f"  {u.id}: not checked, {u.reason}", highlight=False, markup=False)
    if checked:
        errors = sorted(abs(r.error_pct) for r in checked)
        out.print(
            f"  {len(checked)} ratios; median abs error {errors[len(errors) // 2]:.1f}%",
            highlight=False,
        )


def _print_references(references: tuple[ReferenceRatio, ...]) -> None:
    """The model's per-GPU speed ratios on the reference jobs, per stack."""
    out.print(
        "\nthe same job on two GPUs (Llama 3 shapes, BF16, sequence 8,192, 256 sequences, "
        "InfiniBand 3,200 Gbit/s, default layout), per-GPU speed ratio by stack:",
        highlight=False,
    )
    for r in references:
        flag = "" if r.calibrated_a and r.calibrated_b else "  (a GPU is not calibrated)"
        out.print(
            f"  {r.job:12s} {r.stack:9s} {r.gpu_a}/{r.gpu_b}: {r.ratio:.2f}{flag}",
            highlight=False,
            markup=False,
        )


def _print_moe_figures(report: CheckReport, calibration: Calibration) -> None:
    """The MoE section: its points are fitted and counted apart from the dense ones."""
    out.print(
        f"\nmixture-of-experts training ({len(report.moe_results)} points, reported apart "
        "from the figures above and from the last line's dense and collective error):",
        highlight=False,
    )
    out.print(_figure_line("in sample", report.moe_figures), highlight=False)
    for stack, fig in figures_by_stack(report.moe_results).items():
        out.print(_figure_line(stack, fig), highlight=False)
    held = calibration.moe.figures.get("holdout")
    if held is not None:
        out.print(
            "held out by source (the five MoE constants refitted without each source):",
            highlight=False,
        )
        out.print(_figure_line("held out", held), highlight=False)
