"""A buyer's own nccl-tests run as the catalog's ``measured_fabric`` snippet (TOML text).

The snippet is what a contribution adds to ``data/providers/<provider>.toml``: one
``[[sources]]`` entry for the public page of the log and one ``[[offers.measured_fabric]]``
block for the offer, with the out-of-place bus bandwidth at the log's largest message size
(the plateau a training job's gradients see). Without a public page the ``url`` line is left
commented out, so ``clusterscout validate`` refuses the snippet until one is given: the
catalog only holds facts a reader can check.
"""

from __future__ import annotations

import json
import re
from datetime import date

from clusterscout.launch.nccllog import NcclLog
from clusterscout.launch.verdict import Comparison, human_bytes

_SLUG = re.compile(r"[^a-z0-9]+")
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")


class SnippetError(ValueError):
    """The run cannot become a catalog measurement; the message says why."""


def _q(text: str) -> str:
    # A JSON string is a valid TOML basic string for the characters logs contain.
    return json.dumps(text, ensure_ascii=False)


def source_id(comparison: Comparison) -> str:
    """``nccl-<offer>-<op>-<nodes>n``: the snippet's source id (a catalog slug)."""
    offer = comparison.offer
    raw = f"nccl-{offer.local_id}-{comparison.op}-{comparison.nodes}n"
    return _SLUG.sub("-", raw.lower()).strip("-")


def catalog_snippet(
    log: NcclLog, comparison: Comparison, checked_on: date, source_url: str | None = None
) -> str:
    """TOML text adding this run to the offer's ``measured_fabric`` list.

    Raises:
        SnippetError: for a one-node run (it measures NVLink, not the offer's fabric).
    """
    if comparison.nodes < 2:
        msg = f"{log.name}: a one-node run measures NVLink, not the fabric; run on 2 nodes or more"
        raise SnippetError(msg)
    offer = comparison.offer
    top = max(comparison.points, key=lambda p: p.size_bytes)
    sid = source_id(comparison)
    url = source_url or log.source_url
    url_line = (
        f"url = {_q(url)}"
        if url
        else '# url = "https://..."  # required: the public page where this log is published'
    )
    lines = [
        f"# Catalog snippet for data/providers/{offer.provider}.toml, offer {offer.local_id!r}.",
        "# Put the [[sources]] entry with the provider's other sources and the",
        "# [[offers.measured_fabric]] block at the end of that [[offers]] entry, then run",
        "# `clusterscout validate` (docs/data-format.md, section measured_fabric).",
        "",
        "[[sources]]",
        f"id = {_q(sid)}",
        url_line,
        f"checked_on = {checked_on.isoformat()}",
        'kind = "primary"',
        "title = "
        + _q(
            f"nccl-tests {comparison.op}_perf on {comparison.nodes} x {comparison.gpus_per_node} "
            f"GPUs of {offer.id}"
        ),
        "",
        "[[offers.measured_fabric]]",
        f"collective = {_q(comparison.op)}",
        f"message_bytes = {top.size_bytes}",
        f"nodes = {comparison.nodes}",
        f"gpus_per_node = {comparison.gpus_per_node}",
        f"busbw_gbs = {top.measured_busbw_gbs:g}",
    ]
    version = _VERSION.match(log.nccl_version or "")
    if version:  # "2.26.2+cuda12.8" -> "2.26.2": the catalog keeps the NCCL release only
        lines.append(f"nccl_version = {_q(version.group(0))}")
    lines += [
        f"tool = {_q(f'nccl-tests {comparison.op}_perf')}",
        # A note is catalog prose that pages show, so it is translated in data/locale: left
        # as a comment for the contributor to keep (and translate) or drop.
        "# note = "
        + _q(
            f"Out-of-place bus bandwidth at the largest size of the log "
            f"({human_bytes(top.size_bytes)}); the model predicted "
            f"{top.predicted_busbw_gbs:.2f} GB/s for the same run."
        )
        + "  # optional: translate it (make i18n-catalog)",
        f"sources = [{_q(sid)}]",
    ]
    return "\n".join(lines) + "\n"
