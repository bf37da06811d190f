"""Model commands: ``estimate``, ``plan`` and ``check-model``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from clusterscout.catalog.calibration import CalibrationError, load_calibration
from clusterscout.catalog.load import load_gpus
from clusterscout.catalog.problems import has_errors
from clusterscout.commands.common import fail, out
from clusterscout.model.checkmodel import check
from clusterscout.model.planner import PlanResult
from clusterscout.model.scenario import ScenarioError
from clusterscout.planning import run_estimate, run_plan


def _format(value: str, allowed: tuple[str, ...]) -> str:
    value = value.lower()
    if value not in allowed:
        raise fail(f"--format: {value!r} is not one of: {', '.join(allowed)}")
    return value


def _read_json(source: str) -> Any:
    """Parsed JSON from a file or ``-`` (stdin); any problem is a one-line error naming it."""
    if not source.strip():
        raise fail("the JSON file name is empty (give a path, or - for stdin)")
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot read {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise fail(f"{source}: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"{source}: invalid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise fail(f"{source}: invalid JSON: nested too deeply") from None


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "unknown"
    return f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def register(app: typer.Typer, engine_for: Any) -> None:
    """Attach the model commands to ``app``; ``engine_for(url)`` opens the database."""

    @app.command()
    def estimate(
        scenario: Annotated[str, typer.Argument(help="Scenario JSON file, or - for stdin.")],
        fmt: Annotated[str, typer.Option("--format", help="json or table.")] = "json",
        database_url: Annotated[str | None, typer.Option("--database-url")] = None,
    ) -> None:
        """Run the performance model on one scenario (collective or training)."""
        fmt = _format(fmt, ("json", "table"))
        body = _read_json(scenario)
        with engine_for(database_url).connect() as conn:
            try:
                result = run_estimate(conn, body)
            except ScenarioError as exc:
                raise fail(f"{exc.field}: {exc.message}") from None
            except CalibrationError as exc:
                raise fail(str(exc), 1) from None
            except (ValueError, ArithmeticError) as exc:
                # Inputs the validators let through but the formulas cannot use (as the API).
                raise fail(f"{scenario}: cannot evaluate: {exc}") from None
        if fmt == "json":
            sys.stdout.write(json.dumps(result, indent=2) + "\n")
            return
        table = Table(title=f"{result['kind']} estimate on {result['gpu']}", header_style="bold")
        table.add_column("quantity")
        table.add_column("value", justify="right")
        for key, value in result.items():
            if key in {"kind", "gpu"}:
                continue
            if isinstance(value, dict):
                for sub, v in value.items():
                    table.add_row(f"{key}.{sub}", _num(v) if isinstance(v, float) else str(v))
            else:
                table.add_row(key, _num(value) if isinstance(value, float) else str(value))
        out.print(table)

    @app.command()
    def plan(
        model: Annotated[
            str | None, typer.Option("--model", help="Preset: 1B, 7B, 8B, 13B, 70B, 405B.")
        ] = None,
        params: Annotated[float | None, typer.Option(help="Parameter count, e.g. 7e9.")] = None,
        tokens: Annotated[float | None, typer.Option(help="Tokens to train, e.g. 1e12.")] = None,
        steps: Annotated[
            int | None, typer.Option(help="Optimizer steps (instead of tokens).")
        ] = None,
        precision: Annotated[str, typer.Option(help="bf16 or fp8.")] = "bf16",
        gpu: Annotated[str | None, typer.Option(help="Only this GPU model.")] = None,
        max_nodes: Annotated[int | None, typer.Option(help="Largest cluster to consider.")] = None,
        budget_usd: Annotated[
            float | None, typer.Option(help="Drop options above this cost.")
        ] = None,
        deadline_hours: Annotated[
            float | None, typer.Option(help="Drop options slower than this.")
        ] = None,
        provider: Annotated[list[str] | None, typer.Option(help="Only these providers.")] = None,
        fabric: Annotated[list[str] | None, typer.Option(help="Only these fabrics.")] = None,
        limit: Annotated[int, typer.Option(help="Options shown in the table.")] = 15,
        fmt: Annotated[str, typer.Option("--format", help="json or table.")] = "table",
        database_url: Annotated[str | None, typer.Option("--database-url")] = None,
    ) -> None:
        """Do I need multi-node? And which offer finishes my job cheapest or fastest?"""
        fmt = _format(fmt, ("json", "table"))
        if limit < 0:
            raise fail(f"--limit: must be at least 0 (got {limit})")
        body: dict[str, Any] = {
            "model": model,
            "params": params,
            "tokens": tokens,
            "steps": steps,
            "precision": precision,
            "gpu": gpu,
            "max_nodes": max_nodes,
            "budget_usd": budget_usd,
            "deadline_hours": deadline_hours,
            "provider": provider or None,
            "fabric": fabric or None,
        }
        with engine_for(database_url).connect() as conn:
            try:
                result = run_plan(conn, {k: v for k, v in body.items() if v is not None})
            except ScenarioError as exc:
                raise fail(f"--{exc.field.replace('_', '-')}: {exc.message}") from None
            except CalibrationError as exc:
                raise fail(str(exc), 1) from None
            except (ValueError, ArithmeticError) as exc:
                raise fail(f"cannot evaluate this plan: {exc}") from None
        if fmt == "json":
            sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
            return
        _print_plan(result, limit)

    @app.command("check-model")
    def check_model(
        measurements: Annotated[
            Path, typer.Argument(help="Measurements JSON (default: data/measurements.json).")
        ] = Path("data/measurements.json"),
        data_dir: Annotated[
            Path, typer.Option(help="Catalog with gpus.toml and calibration.toml.")
        ] = Path("data"),
    ) -> None:
        """Predicted vs measured for every point the model can express; median and p90 last."""
        raw = _read_json(str(measurements))
        points = raw.get("points") if isinstance(raw, dict) else raw
        if not isinstance(points, list):
            raise fail(f"{measurements}: expected a list of points or an object with 'points'")
        problems: list[Any] = []
        gpus = load_gpus(data_dir, problems)
        if has_errors(problems) or not gpus:
            raise fail(f"{data_dir}/gpus.toml: cannot load GPU figures", 1)
        try:
            calibration = load_calibration(data_dir)
        except CalibrationError as exc:
            raise fail(str(exc), 1) from None
        report = check(points, gpus, calibration)
        table = Table(title="predicted vs measured", header_style="bold")
        for col in ("point", "metric", "measured", "predicted", "error %"):
            table.add_column(col, justify="left" if col in {"point", "metric"} else "right")
        for r in report.results:
            table.add_row(
                r.id,
                f"{r.metric} ({r.unit})",
                _num(r.measured),
                _num(r.predicted),
                f"{r.abs_error_pct:.1f}",
            )
        out.print(table)
        out.print(f"\nnot expressed ({len(report.unexpressed)}):", highlight=False)
        for u in report.unexpressed:
            out.print(f"  {u.id}: {u.reason}", highlight=False, markup=False)
        if calibration.holdout_p90_abs_error_pct is not None:
            # The fitted constants saw these points; the held-out figures did not (see
            # scripts/calibrate.py --holdout). They are the honest error for a new job.
            out.print(
                "out of sample at calibration time (each point predicted by constants fitted "
                f"without its source): median {calibration.holdout_median_abs_error_pct:.1f}%, "
                f"p90 {calibration.holdout_p90_abs_error_pct:.1f}%",
                highlight=False,
            )
        out.print(
            f"expressed {len(report.results)} of {report.total} points; "
            f"median abs error {report.median_abs_error_pct:.1f}%, "
            f"p90 abs error {report.p90_abs_error_pct:.1f}%",
            highlight=False,
        )


def _print_plan(result: PlanResult, limit: int) -> None:
    mem = result.memory
    fits = [v.gpu for v in result.per_gpu if v.one_node_fits]
    fails = [v.gpu for v in result.per_gpu if not v.one_node_fits]
    if result.needs_multi_node:
        verdict = "yes"
    elif fails:
        # The answer depends on the GPU model: say on which ones one node is not enough.
        verdict = f"no on {', '.join(fits)}; yes on {', '.join(fails)}"
    else:
        verdict = "no"
    out.print(
        f"[bold]Needs multi-node:[/bold] {verdict} — model states (weights, gradients, Adam) "
        f"{mem.total_state_gib:,.0f} GiB; smallest GPU count that fits: "
        f"{result.min_gpus_to_fit if result.min_gpus_to_fit is not None else 'none'}",
        highlight=False,
    )
    for v in result.per_gpu:
        one = (
            f"one node: {v.one_node_time_hours:,.0f} h"
            if v.one_node_fits and v.one_node_time_hours is not None
            else "does not fit one node"
        )
        out.print(f"  {v.gpu}: min {v.min_gpus_to_fit} GPUs; {one}", highlight=False)
    table = Table(
        title=(
            f"Options by cost (estimates, ±{result.error_band_pct:.0f}%: "
            "p90 error on held-out measurements)"
        ),
        header_style="bold",
    )
    for col in (
        "#",
        "offer",
        "GPU",
        "price",
        "nodes",
        "layout",
        "hours",
        "cost USD",
        "scaling",
        "eff. $/GPU-h",
        "pareto",
    ):
        # Offer ids are what users copy into other commands, and a tier cut in two
        # ("on_dem/and") misleads: never break either.
        table.add_column(col, no_wrap=col in {"offer", "price"}, overflow="fold")
    for o in result.options[:limit]:
        lay = o.layout
        table.add_row(
            str(o.rank_by_cost),
            o.offer.offer_id,
            o.offer.gpu,
            f"{o.offer.usd_per_gpu_hour:.2f} {o.offer.price_tier or ''}".strip(),
            str(o.nodes),
            f"tp{lay.tp} pp{lay.pp} dp{lay.dp} {lay.sharding.value}",
            f"{o.time_hours:,.1f}",
            f"{o.cost_usd:,.0f}",
            f"{o.scaling_efficiency:.1%}",
            f"{o.effective_usd_per_gpu_hour:.2f}",
            "★" if o.pareto else "",
        )
    out.print(table)
    if result.excluded:
        out.print(f"left out ({len(result.excluded)}):", highlight=False)
        for e in result.excluded:
            out.print(f"  {e.offer.offer_id}: {e.reason}", highlight=False, markup=False)
