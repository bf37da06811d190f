"""Reference workloads in the listings: predicted scaling efficiency and effective price per offer.

The visitor picks one preset (``?ref=70b-fsdp-16``); each offer then gets one model call
(``app.insights.reference_estimate``), memoised per data version, so a page of 50 offers costs 50
small model evaluations once and nothing afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from clusterscout.app import insights
from clusterscout.app.database import Snapshot
from clusterscout.app.errors import FailureKind, failure_of
from clusterscout.app.insights import REFERENCE_WORKLOADS, ReferenceEstimate, ReferenceWorkload
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.web.cells import Cell, unknown
from clusterscout.web.i18n import N_, Formatter
from clusterscout.web.reasons import reason_text
from clusterscout.web.runtime import AppState

PARAM: Final = "ref"
LABELS: Final = {
    "8b-fsdp-4": N_("8B model, FSDP, 4 nodes"),
    "70b-fsdp-16": N_("70B model, FSDP, 16 nodes"),
    "70b-3d-32": N_("70B model, tensor + pipeline parallel, 32 nodes"),
    "405b-3d-64": N_("405B model, tensor + pipeline parallel, 64 nodes"),
}


def parse(values: Sequence[str]) -> ReferenceWorkload | None:
    """The reference workload named by the ``ref`` parameter, or None when not given.

    Raises:
        InputError: for an unknown name or a repeated parameter.
    """
    given = [v.strip().lower() for v in values if v.strip()]
    if not given:
        return None
    if len(given) > 1:
        raise InputError(PARAM, "may be given only once")
    ref = REFERENCE_WORKLOADS.get(given[0])
    if ref is None:
        known = ", ".join(REFERENCE_WORKLOADS)
        raise InputError(PARAM, f"unknown reference workload (known: {known})")
    return ref


def label(fmt: Formatter, ref: ReferenceWorkload) -> str:
    """The translated name of a reference workload."""
    return fmt.gettext(LABELS.get(ref.key, ref.key))


def choices(fmt: Formatter) -> list[tuple[str, str]]:
    """(value, label) pairs for a select, "none" first."""
    return [("", fmt.gettext("none")), *((k, fmt.gettext(v)) for k, v in LABELS.items())]


def _inputs(st: AppState, snap: Snapshot) -> tuple[tuple[GpuSpec, ...], Calibration] | None:
    def load() -> tuple[tuple[GpuSpec, ...], Calibration] | None:
        try:
            return insights.reference_inputs(snap.conn)
        except Exception as exc:
            # Without a calibration the columns stay unknown; anything else is a bug.
            failure = failure_of(exc)
            if failure is None or failure.kind is not FailureKind.MODEL_UNAVAILABLE:
                raise
            return None

    return st.memo.get(("model-inputs", snap.data_version), load)


def estimate(
    st: AppState,
    snap: Snapshot,
    ref: ReferenceWorkload,
    record: Mapping[str, Any],
    tier: str | None = None,
) -> ReferenceEstimate | None:
    """The offer record's estimate (memoised per data version, price tier and price); None
    when the model has no calibration."""
    inputs = _inputs(st, snap)
    if inputs is None:
        return None
    gpus, calibration = inputs

    def compute() -> ReferenceEstimate:
        return insights.reference_estimate(record, ref, gpus, calibration, tier)

    key = (
        "ref",
        snap.data_version,
        ref.key,
        record["id"],
        tier,
        record.get("from_usd_per_gpu_hour"),
    )
    return st.memo.get(key, compute)


def estimates(
    st: AppState,
    snap: Snapshot,
    ref: ReferenceWorkload,
    records: Sequence[Mapping[str, Any]],
    tier: str | None = None,
) -> dict[str, ReferenceEstimate]:
    """One estimate per offer record, by offer id (none without a calibration)."""
    found = {str(r["id"]): estimate(st, snap, ref, r, tier) for r in records}
    return {k: v for k, v in found.items() if v is not None}


def efficiency_cell(fmt: Formatter, est: ReferenceEstimate | None) -> Cell:
    """Predicted scaling efficiency, or "unknown" with the reason."""
    if est is None or est.scaling_efficiency is None:
        return _unknown(fmt, est)
    badge = None
    if est.max_nodes is not None:
        badge = fmt.ngettext(
            "sells up to %(num)s node", "sells up to %(num)s nodes", est.max_nodes
        ) % {"num": fmt.number(est.max_nodes)}
    return Cell(
        fmt.percent(est.scaling_efficiency, digits=1),
        badge=badge,
        sort_value=f"{est.scaling_efficiency:.4f}",
    )


def effective_cell(fmt: Formatter, est: ReferenceEstimate | None) -> Cell:
    """List price divided by efficiency, per useful GPU-hour, or "unknown" with the reason."""
    if est is None or est.effective_usd_per_gpu_hour is None:
        return _unknown(fmt, est)
    return Cell(
        fmt.gettext("%(price)s/GPU-h") % {"price": fmt.usd(est.effective_usd_per_gpu_hour)},
        detail=fmt.gettext("list %(price)s") % {"price": fmt.usd(est.usd_per_gpu_hour or 0.0)},
        sort_value=f"{est.effective_usd_per_gpu_hour:012.4f}",
    )


def _unknown(fmt: Formatter, est: ReferenceEstimate | None) -> Cell:
    cell = unknown(fmt)
    if est is not None and est.reason is not None:
        return Cell(cell.text, unknown=True, detail=reason_text(fmt, est.reason))
    return cell
