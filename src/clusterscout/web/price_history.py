"""Price history on the provider page: one chart per offer (an SVG route) and its data table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from clusterscout.app import offers, prices
from clusterscout.web import charts, viewmodels
from clusterscout.web.api_error import ApiError
from clusterscout.web.cells import TIER_LABELS, SourceLink, source_link
from clusterscout.web.i18n import Formatter
from clusterscout.web.pages_common import Lang, known_lang
from clusterscout.web.runtime import reading, snapshot_of, state_of

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True, slots=True)
class ObservationRow:
    """One observed price, formatted."""

    day: str
    tier: str
    price: str
    feed: str
    age: str
    stale: bool
    source: SourceLink


@dataclass(frozen=True, slots=True)
class OfferHistory:
    """What the provider page shows under an offer: chart link and observations."""

    offer_id: str
    title: str
    chart_href: str
    alt: str
    rows: tuple[ObservationRow, ...]


def tier_text(fmt: Formatter, tier: str, term: str | None) -> str:
    """``reserved, 1 year`` (tier translated; durations in the catalog term localized)."""
    label = fmt.gettext(TIER_LABELS.get(tier, tier))
    return f"{label}, {fmt.term(term)}" if term else label


def age_text(fmt: Formatter, days: int) -> str:
    """``today`` or ``12 days``."""
    if days <= 0:
        return fmt.gettext("today")
    return fmt.ngettext("%(num)s day", "%(num)s days", days) % {"num": fmt.number(days)}


def observation_rows(
    fmt: Formatter, observations: Sequence[Mapping[str, Any]]
) -> list[ObservationRow]:
    """Observations (newest first) as table rows."""
    return [
        ObservationRow(
            day=fmt.day(str(p["as_of"])),
            tier=tier_text(fmt, str(p["tier"]), p.get("term")),
            price=fmt.usd(float(p["usd_per_gpu_hour"])),
            feed=str(p.get("feed") or ""),
            age=age_text(fmt, int(p["age_days"])),
            stale=bool(p["stale"]),
            source=source_link(fmt, p["source"]),
        )
        for p in observations
    ]


def offer_history(
    fmt: Formatter, slug: str, offer: Mapping[str, Any], view: Mapping[str, Any]
) -> OfferHistory:
    """Chart link, alt text and rows for one offer."""
    name = offer.get("name") or f"{offer['gpu']}"
    return OfferHistory(
        offer_id=str(offer["id"]),
        title=fmt.gettext("Price history: %(offer)s") % {"offer": name},
        chart_href=f"/{fmt.lang}/providers/{slug}/prices/{offer['id']}.svg",
        alt=fmt.gettext(
            "Line chart of the observed prices of %(offer)s over time, one line per price "
            "tier; the table below lists every observation."
        )
        % {"offer": name},
        rows=tuple(observation_rows(fmt, view["observations"])),
    )


def series(fmt: Formatter, view: Mapping[str, Any]) -> list[charts.PriceSeries]:
    """Chart lines from a price history view."""
    return [
        charts.PriceSeries(
            tier_text(fmt, s["tier"], s["term"]),
            tuple(
                (date.fromisoformat(str(p["as_of"])), float(p["usd_per_gpu_hour"]))
                for p in s["points"]
            ),
        )
        for s in view["series"]
    ]


@router.get("/{lang}/providers/{slug}/prices/{offer_id}.svg")
def price_chart(
    request: Request,
    lang: Lang,
    slug: Annotated[str, Path(max_length=200)],
    offer_id: Annotated[str, Path(max_length=200)],
) -> Response:
    """The price history of one offer as an SVG line chart."""
    lang = known_lang(lang)
    st = state_of(request)
    with reading(request) as conn:
        record = offers.provider(conn, slug)
        ids = {o["id"] for o in record["offers"]} if record else set()
        view = None
        if offer_id in ids:
            day = viewmodels.today()
            view = prices.history(conn, offer_id, day, st.settings.stale_after_days)
    if view is None:
        raise ApiError(404, "not_found", "unknown offer", "offer_id")
    fmt = st.formatter(snapshot_of(request), lang)
    view = fmt.catalog.localize(view)  # the legend names each price's term
    return charts.svg_response(charts.price_history_svg(fmt, series(fmt, view)))
