"""The "Launch files" panels (plan options, provider offers) and published nccl-tests results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from clusterscout.app import launch as launching
from clusterscout.app.database import CatalogInvalidError, Snapshot
from clusterscout.app.estimates import stored_calibration
from clusterscout.app.nccl import PublishedResult, published_results
from clusterscout.catalog.calibration import CalibrationError
from clusterscout.domain.messages import N_
from clusterscout.domain.models import Offer
from clusterscout.launch.request import TrainingLayout, Why
from clusterscout.launch.verdict import human_bytes
from clusterscout.model.planner.results import PlanOption
from clusterscout.web.cells import FABRIC_LABELS
from clusterscout.web.i18n import Formatter
from clusterscout.web.plan_view import layout_text
from clusterscout.web.runtime import AppState
from clusterscout.web.schemas import LaunchFormatOut, launch_out

PLAN_ROWS: Final = 10
"""Plan options that get launch files on the page; the CLI and API serve any option."""
FILE_LABELS: Final = {
    "skypilot": N_("SkyPilot task"),
    "dstack-fleet": N_("dstack fleet"),
    "dstack-task": N_("dstack task"),
    "slurm": N_("Slurm batch script"),
    "check": N_("Fabric check (nccl-tests)"),
}
TOOL_NAMES: Final = {"skypilot": "SkyPilot", "dstack": "dstack", "slurm": "Slurm", "check": ""}


@dataclass(frozen=True, slots=True)
class FileLink:
    """A download link: translated label, path and the file's name."""

    label: str
    href: str
    filename: str


@dataclass(frozen=True, slots=True)
class ToolCell:
    """One tool's files, or its reason when there are none: a sentence in the page's
    language and the curator's note from ``launch.toml`` (translated when the catalog has
    it; ``note_lang`` says which language it is in)."""

    tool: str
    links: tuple[FileLink, ...]
    reason: str | None
    note: str | None = None
    note_lang: str | None = None


@dataclass(frozen=True, slots=True)
class LaunchRow:
    """One cluster (an offer at a node count, perhaps with a plan layout) and its files."""

    anchor: str
    title: str
    href: str
    nodes: str
    layout: str | None
    tools: tuple[ToolCell, ...]


def _cell(fmt: Formatter, result: LaunchFormatOut, why: Why | None) -> ToolCell:
    links = tuple(
        FileLink(fmt.gettext(FILE_LABELS[f.kind]), f.download, f.filename) for f in result.files
    )
    tool = TOOL_NAMES[result.format]
    if why is None:
        return ToolCell(tool, links, result.reason)
    sentence = fmt.gettext(why.message).format(**dict(why.fields))
    if why.note is None:
        return ToolCell(tool, links, sentence)
    note = fmt.catalog.text(why.note)
    return ToolCell(tool, links, sentence, note, fmt.catalog.lang_of(note))


def _row(
    fmt: Formatter,
    data: launching.LaunchData,
    offer: Offer,
    nodes: int,
    layout: TrainingLayout | None,
    name: str,
    anchor: str,
    layout_label: str | None = None,
) -> LaunchRow:
    """``name`` leads the title: the localized offer name, or the provider's on the plan page."""
    raw = launching.launch(data, offer, nodes, layout=layout)
    answer = launch_out(raw)
    whys = [r.why for r in (*raw.formats, raw.check)]
    fabric = FABRIC_LABELS.get(offer.fabric.value, "") if offer.fabric else ""
    title = " · ".join(p for p in (name, offer.gpu, fabric) if p)
    results = (*answer.formats, answer.check)
    tools = tuple(_cell(fmt, r, w) for r, w in zip(results, whys, strict=True))
    href = f"/{fmt.lang}/providers/{offer.provider}/#offer-{offer.id}"
    return LaunchRow(anchor, title, href, fmt.number(nodes), layout_label, tools)


def _data(st: AppState) -> launching.LaunchData | None:
    """The launch data, or None when the catalog directory cannot be read (no panel then)."""
    try:
        return launching.launch_data(st.settings.data_dir)
    except (CatalogInvalidError, OSError):
        return None


def plan_rows(
    fmt: Formatter, st: AppState, options: Sequence[PlanOption], providers: Mapping[str, Any]
) -> list[LaunchRow]:
    """Launch files for the cheapest plan options, each with its nodes and layout."""
    data = _data(st)
    if data is None:
        return []
    rows = []
    for o in options[:PLAN_ROWS]:
        offer = data.offers.get(o.offer.offer_id)
        if offer is None:
            continue
        name = str((providers.get(offer.provider) or {}).get("name", offer.provider))
        anchor = f"launch-option-{o.rank_by_cost}"
        layout = TrainingLayout.of(o.layout)
        rows.append(_row(fmt, data, offer, o.nodes, layout, name, anchor, layout_text(o.layout)))
    return rows


def default_nodes(offer: Offer, asked: int | None = None) -> int | None:
    """``asked`` nodes (default: two, or the offer's minimum when larger); None when the offer
    does not sell that many, or sells fewer than two by default."""
    nodes = asked if asked is not None else max(2, offer.min_nodes or 2)
    if asked is not None and asked < (offer.min_nodes or 1):
        return None
    reach = max((n for n in (offer.max_nodes, offer.max_nodes_by_quote) if n), default=None)
    return None if reach is not None and reach < nodes else nodes


@dataclass(frozen=True, slots=True)
class MeasuredRow:
    """A published nccl-tests result on this hardware next to the model's prediction."""

    op: str
    cluster: str
    size: str
    measured: str
    predicted: str
    source: str
    source_url: str | None


def _value(fmt: Formatter, value: float, unit: str) -> str:
    return f"{fmt.fixed(value, 0 if value >= 100 else 1)} {unit}"


def _measured(fmt: Formatter, r: PublishedResult) -> MeasuredRow:
    gpus = fmt.number(r.gpus_per_node) if r.gpus_per_node else "?"
    size = (
        human_bytes(int(r.message_bytes))
        if r.message_bytes is not None
        else fmt.gettext("not stated (a large message)")
    )
    return MeasuredRow(
        op=r.op,
        cluster=fmt.gettext("%(nodes)s nodes × %(gpus)s GPUs")
        % {"nodes": fmt.number(r.nodes), "gpus": gpus},
        size=size,
        measured=_value(fmt, r.measured, r.unit),
        predicted=_value(fmt, r.predicted, r.unit),
        source=r.source,
        source_url=r.source_url,
    )


def _published(
    st: AppState, snap: Snapshot, data: launching.LaunchData
) -> dict[str, tuple[PublishedResult, ...]]:
    def compute() -> dict[str, tuple[PublishedResult, ...]]:
        try:
            calibration = stored_calibration(snap.conn)
        except CalibrationError:
            return {}
        return published_results(data, calibration)

    return st.memo.get(("published-nccl", snap.data_version, ""), compute)


@dataclass(frozen=True, slots=True)
class OfferLaunch:
    """An offer's launch files at its default node count and its published results."""

    row: LaunchRow
    measured: tuple[MeasuredRow, ...]


def provider_offers(
    fmt: Formatter,
    st: AppState,
    snap: Snapshot,
    records: Sequence[Mapping[str, Any]],
    nodes_asked: int | None = None,
) -> list[OfferLaunch]:
    """Per multi-node offer with a known fabric: files for ``nodes_asked`` nodes (default: its
    default node count; offers that cannot be that large are left out), and results."""
    data = _data(st)
    if data is None:
        return []
    published = _published(st, snap, data)
    out = []
    for record in records:
        offer = data.offers.get(str(record.get("id")))
        if offer is None or offer.fabric is None:
            continue
        nodes = default_nodes(offer, nodes_asked)
        if nodes is None:
            continue
        name = str(record.get("name") or offer.id)
        row = _row(fmt, data, offer, nodes, None, name, f"launch-{offer.id}")
        measured = tuple(_measured(fmt, r) for r in published.get(offer.id, ()))
        out.append(OfferLaunch(row, measured))
    return out
