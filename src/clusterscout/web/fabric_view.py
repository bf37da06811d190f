"""Published fabric measurements beside the advertised Gbit/s and the model's figure, for pages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from clusterscout.catalog.measured import headline, human_bytes
from clusterscout.web.cells import SourceLink, source_links
from clusterscout.web.i18n import N_, Formatter

Record = Mapping[str, Any]

COLLECTIVE_LABELS: Final = {
    "all_reduce": N_("all-reduce"),
    "all_gather": N_("all-gather"),
    "reduce_scatter": N_("reduce-scatter"),
}


@dataclass(frozen=True, slots=True)
class MeasuredRow:
    """One published measurement, formatted: run, measured and predicted bus bandwidth."""

    offer_id: str
    offer_label: str
    run: str
    measured: str
    predicted: str
    ratio: str
    nccl: str
    flags: tuple[str, ...]
    note: str | None
    note_lang: str
    """Language of ``note`` (catalog prose): the reader's when translated, else English."""
    sources: tuple[SourceLink, ...]


def gbs(fmt: Formatter, value: float) -> str:
    """``467.5 GB/s`` in the reader's number format (one decimal)."""
    return fmt.gettext("%(num)s GB/s") % {"num": fmt.number(round(value, 1))}


def run_text(fmt: Formatter, m: Record) -> str:
    """``all-reduce, 2 × 8 GPUs, 8 GiB``: collective, nodes × GPUs per node, message size."""
    return fmt.gettext("%(collective)s, %(nodes)s × %(gpn)s GPUs, %(size)s") % {
        "collective": fmt.gettext(
            COLLECTIVE_LABELS.get(str(m["collective"]), str(m["collective"]))
        ),
        "nodes": fmt.number(m["nodes"]),
        "gpn": fmt.number(m["gpus_per_node"]),
        "size": human_bytes(int(m["message_bytes"])),
    }


def summary(fmt: Formatter, r: Record, *, with_run: bool = True) -> str | None:
    """The one-line figure under the advertised Gbit/s: measured, then the model's.

    ``with_run`` adds the run (collective, nodes x GPUs, size); table cells leave it to the
    row's disclosure to stay narrow. None when the offer has no published measurement.
    """
    m = headline(r.get("measured_fabric") or [])
    if m is None:
        return None
    values = {"measured": gbs(fmt, m["busbw_gbs"]), "run": run_text(fmt, m)}
    if m["predicted_busbw_gbs"] is not None:
        values["model"] = gbs(fmt, m["predicted_busbw_gbs"])
    if not with_run:
        if "model" in values:
            return fmt.gettext("measured %(measured)s, model %(model)s") % values
        return fmt.gettext("measured %(measured)s") % values
    if "model" in values:
        return fmt.gettext("measured %(measured)s, model %(model)s (%(run)s)") % values
    return fmt.gettext("measured %(measured)s (%(run)s)") % values


def flags(fmt: Formatter, m: Record) -> tuple[str, ...]:
    """Short warnings that change how the figure reads."""
    out: list[str] = []
    if m["in_network_reduction"]:
        out.append(fmt.gettext("in-network reduction (SHARP)"))
    if m["degraded"]:
        out.append(fmt.gettext("not the documented setup"))
    if m["tool"] and not str(m["tool"]).startswith("nccl-tests"):
        out.append(fmt.gettext("not nccl-tests"))
    return tuple(out)


def measured_rows(fmt: Formatter, offers: Sequence[Record]) -> list[MeasuredRow]:
    """Every published measurement of ``offers``, in catalog order."""
    rows: list[MeasuredRow] = []
    for o in offers:
        label = str(o.get("name") or o["gpu"])
        for m in o.get("measured_fabric") or ():
            predicted = m["predicted_busbw_gbs"]
            rows.append(
                MeasuredRow(
                    offer_id=o["id"],
                    offer_label=label,
                    run=run_text(fmt, m),
                    measured=gbs(fmt, m["busbw_gbs"]),
                    predicted=gbs(fmt, predicted) if predicted else fmt.gettext("unknown"),
                    ratio=fmt.number(round(m["ratio"], 2)) if m["ratio"] else "",
                    nccl=m["nccl_version"] or fmt.gettext("unknown"),
                    flags=flags(fmt, m),
                    note=m["note"],
                    note_lang=fmt.catalog.lang_of(m["note"]),
                    sources=source_links(fmt, m["sources"]),
                )
            )
    return rows
