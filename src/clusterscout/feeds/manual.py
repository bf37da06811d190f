"""``file``: hand-written price updates in the CSV or JSON format documented in docs/feeds.md."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from clusterscout.feeds.base import (
    TIERS,
    FeedBatch,
    FeedError,
    FeedHeldError,
    FeedItem,
    positive_price,
)
from clusterscout.feeds.tabular import read_rows, read_text, reject_duplicates

REQUIRED_FIELDS = ("offer_id", "tier", "usd_per_gpu_hour", "as_of", "source_url")
OPTIONAL_FIELDS = ("term", "note", "source_checked_on", "source_kind")
SOURCE_KINDS = ("primary", "secondary", "catalog")


def _text(value: Any, field: str, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        msg = f"{where}: {field} must be text, got {value!r}"
        raise FeedError(msg)
    return value.strip()


def _date(raw: str, field: str, where: str, today: date) -> date:
    try:
        value = date.fromisoformat(raw)
    except ValueError:
        msg = f"{where}: {field} {raw!r} is not an ISO date (YYYY-MM-DD)"
        raise FeedError(msg) from None
    if value > today:
        msg = f"{where}: {field} {value} is in the future"
        raise FeedError(msg)
    return value


def record_to_item(record: dict[str, Any], where: str, today: date) -> FeedItem:
    """Validate one record (a CSV row or JSON object) into a feed item.

    Raises:
        FeedError: for a missing field, an unknown tier, a price that is not positive, a date
            that is malformed or in the future, or a source that is not an http(s) URL.
    """
    values = {k: _text(record.get(k), k, where) for k in REQUIRED_FIELDS if k != "usd_per_gpu_hour"}
    for field, value in values.items():
        if not value:
            msg = f"{where}: {field} is required"
            raise FeedError(msg)
    raw_price = record.get("usd_per_gpu_hour")
    if isinstance(raw_price, bool) or raw_price is None or raw_price == "":
        msg = f"{where}: usd_per_gpu_hour is required and must be a number"
        raise FeedError(msg)
    price = positive_price(raw_price, "usd_per_gpu_hour", where) or 0.0  # never None here
    tier = values["tier"].lower()
    if tier not in TIERS:
        msg = f"{where}: tier {values['tier']!r} is not one of {', '.join(TIERS)}"
        raise FeedError(msg)
    url = values["source_url"]
    if not url.startswith(("https://", "http://")):
        msg = f"{where}: source_url {url!r} is not an http(s) URL"
        raise FeedError(msg)
    as_of = _date(values["as_of"], "as_of", where, today)
    checked_raw = _text(record.get("source_checked_on"), "source_checked_on", where)
    checked = _date(checked_raw, "source_checked_on", where, today) if checked_raw else None
    # A hand-written row vouches for nothing by default: unless it says its URL is the
    # provider's own page, it counts as a third-party source.
    kind = _text(record.get("source_kind"), "source_kind", where).lower() or "secondary"
    if kind not in SOURCE_KINDS:
        msg = f"{where}: source_kind {kind!r} is not one of {', '.join(SOURCE_KINDS)}"
        raise FeedError(msg)
    return FeedItem(
        tier=tier,
        usd_per_gpu_hour=price,
        source_url=url,
        as_of=as_of,
        offer_id=values["offer_id"],
        term=_text(record.get("term"), "term", where) or None,
        note=_text(record.get("note"), "note", where) or None,
        source_checked_on=checked,
        source_kind=kind,
    )


def _json_records(text: str, where: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{where}: not valid JSON ({exc}); the file looks truncated or malformed"
        raise FeedError(msg) from None
    except RecursionError:
        msg = f"{where}: not valid JSON (nested too deeply)"
        raise FeedError(msg) from None
    if isinstance(data, dict):
        extra = sorted(set(data) - {"prices"})
        if extra or "prices" not in data:
            msg = f'{where}: unknown layout: expected {{"prices": [...]}}, got keys {sorted(data)}'
            raise FeedError(msg)
        data = data["prices"]
    if not isinstance(data, list):
        msg = f"{where}: unknown layout: expected a list of price objects"
        raise FeedError(msg)
    known = set(REQUIRED_FIELDS) | set(OPTIONAL_FIELDS)
    out: list[tuple[str, dict[str, Any]]] = []
    for i, record in enumerate(data):
        at = f"{where}: prices[{i}]"
        if not isinstance(record, dict):
            msg = f"{at}: expected an object, got {type(record).__name__}"
            raise FeedError(msg)
        unknown = sorted(set(record) - known)
        if unknown:
            msg = f"{at}: unknown column layout: unknown field(s) {', '.join(unknown)}"
            raise FeedError(msg)
        out.append((at, record))
    return out


def parse(
    text: str, where: str, *, json_format: bool, today: date, allow_missing_newline: bool = False
) -> tuple[list[FeedItem], int]:
    """Items from a price file, and the number of records read.

    Raises:
        FeedHeldError: for a CSV file whose last line has no newline (unless allowed): it may
            have been cut short, and a price cut from 4.25 to 4.2 still parses.
        FeedError: for any other problem, including two records for the same offer, tier
            and term.
    """
    if json_format:
        records = _json_records(text, where)  # a cut-off JSON document does not parse
    else:
        if text and not text.endswith("\n") and not allow_missing_newline:
            msg = (
                f"held: {where} does not end with a newline, so its last line may have been "
                "cut short; nothing was applied. If the file is complete, add the newline or "
                "run again with --allow-missing-newline"
            )
            raise FeedHeldError(msg)
        rows = read_rows(text, where, required=REQUIRED_FIELDS, optional=OPTIONAL_FIELDS)
        records = [(f"{where}: line {r.line}", dict(r.values)) for r in rows]
    located = [(at, record_to_item(rec, at, today)) for at, rec in records]

    def key(pair: tuple[str, FeedItem]) -> tuple[str | None, str, str | None]:
        return (pair[1].offer_id, pair[1].tier, pair[1].term)

    reject_duplicates(located, key, lambda pair: pair[0])
    return [item for _, item in located], len(records)


@dataclass(frozen=True, slots=True)
class FileFeed:
    """Reads a price file given with ``--input`` (``.csv`` or ``.json``)."""

    name: str = "file"
    needs_input: bool = True
    summary: str = "hand-written prices per offer (CSV or JSON, see docs/feeds.md)"
    allow_missing_newline: bool = False

    def fetch(self, source: Path | None, *, today: date) -> FeedBatch:
        """Read and validate the whole file; see :func:`parse`."""
        if source is None:
            msg = "file needs --input PATH (a .csv or .json price file, see docs/feeds.md)"
            raise FeedError(msg)
        suffix = source.suffix.lower()
        if suffix not in {".csv", ".json"}:
            shown = suffix or "no suffix"
            msg = f"{source}: the file feed reads .csv or .json files, not {shown!r}"
            raise FeedError(msg)
        text = read_text(source)
        items, rows = parse(
            text,
            source.name,
            json_format=suffix == ".json",
            today=today,
            allow_missing_newline=self.allow_missing_newline,
        )
        return FeedBatch(tuple(items), rows, str(source))
