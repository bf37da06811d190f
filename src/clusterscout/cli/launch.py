"""Launch commands: ``launch``, ``check-cluster`` and ``ingest-nccl-tests``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from clusterscout.app import launch as launching
from clusterscout.app import nccl
from clusterscout.app.errors import Operation
from clusterscout.app.fields import PLAN_FIELDS
from clusterscout.catalog.calibration import load_calibration
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
from clusterscout.cli.output import Column, err, out, print_json, print_table
from clusterscout.domain.models import Offer
from clusterscout.launch.request import LaunchFile, LaunchFormat
from clusterscout.launch.snippet import SnippetError, catalog_snippet
from clusterscout.launch.verdict import Comparison, human_bytes
from clusterscout.model.planner.results import PlanOption

F = TypeVar("F", bound=Callable[..., Any])
FORMATS = tuple(f.value for f in LaunchFormat)


def _data_dir_option(f: F) -> F:
    return click.option(
        "--data-dir",
        "--data",
        type=click.Path(path_type=Path),
        help="Catalog with launch.toml (default: the shipped catalog).",
    )(f)


def _output_dir_option(f: F) -> F:
    return click.option(
        "--output-dir",
        "-o",
        type=click.Path(path_type=Path, file_okay=False),
        help="Write the files into this directory instead of printing them.",
    )(f)


def _data(data_dir: Path | None) -> launching.LaunchData:
    return launching.launch_data(data_dir or settings_for(None).data_dir)


def _offer(data: launching.LaunchData, offer_id: str, flag: str) -> Offer:
    try:
        return data.offer(offer_id)
    except launching.UnknownOfferError as exc:
        raise fail(f"{flag}: {exc.message}") from None


def _emit(files: Sequence[LaunchFile], output_dir: Path | None) -> None:
    """Print the files (several as one YAML stream with a name comment each), or write them."""
    if output_dir is not None:
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
            for f in files:
                (output_dir / f.filename).write_text(f.content, encoding="utf-8")
        except OSError as exc:
            raise fail(f"--output-dir: cannot write {output_dir} ({exc.strerror})", 1) from None
        for f in files:
            click.echo(str(output_dir / f.filename))
        return
    for i, f in enumerate(files):
        if len(files) > 1:
            click.echo(("---\n" if i else "") + f"# file: {f.filename}")
        click.echo(f.content.rstrip("\n"))


@click.command()
@click.argument("offer_id")
@click.option("--nodes", type=int, help="Nodes to launch (default with --plan-option: its own).")
@format_option("skypilot", FORMATS)
@click.option(
    "--plan-option",
    type=int,
    metavar="K",
    help="Take the layout of option K (the # of `clusterscout plan`) of the plan for the "
    "plan options given here.",
)
@field_options(PLAN_FIELDS, plan=True)
@_output_dir_option
@_data_dir_option
@database_url_option
def launch(
    offer_id: str,
    nodes: int | None,
    fmt: str,
    plan_option: int | None,
    output_dir: Path | None,
    data_dir: Path | None,
    database_url: str | None,
    **fields: Any,
) -> None:
    """Write a SkyPilot task, a dstack fleet and task, or a Slurm batch script for an offer.

    Each file sets the NCCL environment the offer's fabric needs, with a link per variable.
    When the tool cannot target the offer, says why instead.
    """
    fmt = choice("--format", fmt, FORMATS)
    plan_body = field_values(fields, PLAN_FIELDS)
    if plan_body and plan_option is None:
        raise fail("plan options (--model, --tokens, ...) need --plan-option K")
    body: dict[str, Any] = {"offer_id": offer_id, "format": fmt, "nodes": nodes}
    if plan_option is not None:
        body.update(plan=plan_body, plan_option=plan_option)

    def option_of(plan: Any, k: Any) -> PlanOption:
        with engine_for(database_url).connect() as conn:
            return launching.plan_option(conn, plan, k)

    with reporting(Operation.LAUNCH):
        data = _data(data_dir)
        offer = _offer(data, offer_id, "OFFER_ID")
        answer = launching.run_launch(data, body, option_of)
    result = answer.formats[0]
    if result.reason is not None:
        raise fail(f"no {fmt} file for {offer.id}: {result.reason}", 1)
    _emit(result.files, output_dir)


@click.command("check-cluster")
@click.argument("offer_id")
@click.option("--nodes", type=int, required=True, help="Nodes in the cluster to check.")
@_output_dir_option
@_data_dir_option
def check_cluster(
    offer_id: str, nodes: int, output_dir: Path | None, data_dir: Path | None
) -> None:
    """Write a script that runs nccl-tests (all_reduce, all_gather, 8 B to 16 GiB) on the cluster.

    It uses the same NCCL environment as `clusterscout launch`; feed its logs to
    `clusterscout ingest-nccl-tests`.
    """
    with reporting(Operation.LAUNCH):
        data = _data(data_dir)
        offer = _offer(data, offer_id, "OFFER_ID")
        answer = launching.launch(data, offer, launching.parse_nodes(offer, nodes), ())
        check = launching.file_of(answer, launching.CHECK)
    _emit((check,), output_dir)


def _read_logs(paths: Sequence[Path]) -> list[tuple[str, str]]:
    logs = []
    for path in paths:
        try:
            logs.append((path.name, path.read_text(encoding="utf-8", errors="replace")))
        except OSError as exc:
            raise fail(f"{path}: cannot read ({exc.strerror})") from None
    return logs


_COLUMNS = (
    Column("size", right=True),
    Column("measured busbw GB/s", right=True),
    Column("predicted GB/s", right=True),
    Column("measured/predicted", right=True),
)


def _layout(c: Comparison) -> str:
    """``8`` for full nodes, ``4 of 8`` for a run on part of each node."""
    if c.ranks_per_node < c.gpus_per_node:
        return f"{c.ranks_per_node} of {c.gpus_per_node}"
    return str(c.gpus_per_node)


@click.command("ingest-nccl-tests")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--offer", "offer_id", required=True, metavar="OFFER_ID", help="Offer it ran on.")
@click.option("--nodes", type=int, help="Nodes of the run, when the log does not show them.")
@format_option("table", ("table", "json"))
@click.option(
    "--emit-toml",
    is_flag=True,
    help="Print the catalog's measured_fabric snippet for this run (TOML, to contribute it to "
    "data/providers/); the verdicts go to standard error.",
)
@click.option(
    "--source-url",
    metavar="URL",
    help="Public page where the log is published (the snippet's source; else the log's own).",
)
@_data_dir_option
def ingest_nccl_tests(
    logs: Sequence[Path],
    offer_id: str,
    nodes: int | None,
    fmt: str,
    emit_toml: bool,
    source_url: str | None,
    data_dir: Path | None,
) -> None:
    """Measured nccl-tests bus bandwidth against the model's prediction, with a verdict.

    --format json prints the results as data/measurements.json points (for check-model);
    --emit-toml prints the catalog snippet that adds the run to the offer (docs/data-format.md,
    measured_fabric). Either way the verdicts then go to standard error.
    """
    fmt = choice("--format", fmt, ("table", "json"))
    if emit_toml and fmt == "json":
        raise fail("--emit-toml and --format json each print data: choose one")
    if source_url is not None and not source_url.startswith("https://"):
        raise fail("--source-url: give the https:// address of the public page of the log")
    texts = _read_logs(logs)
    with reporting(Operation.LAUNCH):
        data = _data(data_dir)
        _offer(data, offer_id, "--offer")
        directory = data_dir or settings_for(None).data_dir
        results = nccl.ingest(data, load_calibration(directory), offer_id, texts, nodes)
    console = err if fmt == "json" or emit_toml else out
    for r in results:
        c = r.comparison
        version = f", NCCL {r.log.nccl_version}" if r.log.nccl_version else ""
        console.print(
            f"{r.log.name}: {c.op} on {c.nodes} × {_layout(c)} GPUs of {c.offer.id}{version}",
            highlight=False,
            markup=False,
        )
        for warning in r.log.warnings:
            console.print(f"  warning: {warning}", highlight=False, markup=False)
        if fmt == "table" and not emit_toml:
            print_table(
                "measured vs predicted (out-of-place)",
                _COLUMNS,
                [
                    [
                        human_bytes(p.size_bytes),
                        f"{p.measured_busbw_gbs:.2f}",
                        f"{p.predicted_busbw_gbs:.2f}",
                        f"{p.ratio:.0%}",
                    ]
                    for p in c.points
                ],
            )
        console.print(f"verdict: {c.verdict}", highlight=False, markup=False)
    if fmt == "json":
        print_json([record for r in results for record in r.records])
    if emit_toml:
        today = datetime.now(UTC).date()
        try:
            snippets = [catalog_snippet(r.log, r.comparison, today, source_url) for r in results]
        except SnippetError as exc:
            raise fail(str(exc)) from None
        out.print("\n".join(snippets), highlight=False, markup=False, end="")


COMMANDS: tuple[click.Command, ...] = (launch, check_cluster, ingest_nccl_tests)
