"""Independent ratings as sourced facts: the provider page's table and the compare rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from clusterscout.web.cells import RATING_LABELS, Cell, SourceLink, source_links
from clusterscout.web.i18n import Formatter
from clusterscout.web.scorecard import CompareRow, CompareSection

Record = Mapping[str, Any]
RATER_NAMES: Final = {"clustermax": "SemiAnalysis ClusterMAX"}
"""Display names of raters (proper names: not translated)."""
NOT_RATED: Final = "not_rated"


@dataclass(frozen=True, slots=True)
class RatingRow:
    """One edition of a rating for one provider: its tier, or "not rated" when absent."""

    label: str
    """Rater and edition, e.g. "SemiAnalysis ClusterMAX 3.0" (a proper name)."""
    tier_key: str
    """The tier value, or ``not_rated``: a CSS hook."""
    tier: str
    published: str
    note: str | None
    sources: tuple[SourceLink, ...]

    @property
    def rated(self) -> bool:
        """False when the provider is absent from the edition."""
        return self.tier_key != NOT_RATED


def editions_of(editions: Sequence[Record], providers: Sequence[Record]) -> list[Record]:
    """The catalog's editions, else (a build from before they were stored) the providers' own."""
    if editions:
        return list(editions)
    found: dict[tuple[str, str], Record] = {}
    for p in providers:
        for r in p.get("ratings") or ():
            found.setdefault((r["rater"], r["edition"]), r)
    return sorted(found.values(), key=lambda e: str(e["published_on"]), reverse=True)


def rating_rows(fmt: Formatter, provider: Record, editions: Sequence[Record]) -> list[RatingRow]:
    """Every edition the catalog knows, newest first, with this provider's tier in it.

    A rated edition cites the rating's sources; "not rated" cites the edition's own list,
    which is the evidence that the provider is not in it.
    """
    ratings = {(r["rater"], r["edition"]): r for r in provider.get("ratings") or ()}
    rows = []
    for e in editions_of(editions, [provider]):
        key = (e["rater"], e["edition"])
        rating = ratings.get(key)
        label = f"{RATER_NAMES.get(key[0], key[0])} {key[1]}"
        tier_key = str(rating["tier"]) if rating else NOT_RATED
        shown = rating or e
        rows.append(
            RatingRow(
                label=label,
                tier_key=tier_key,
                tier=fmt.gettext(RATING_LABELS.get(tier_key, tier_key)),
                published=fmt.day(str(shown["published_on"])),
                note=rating.get("note") if rating else None,
                sources=source_links(fmt, shown.get("sources") or ()),
            )
        )
    return rows


def _cell(fmt: Formatter, row: RatingRow) -> Cell:
    detail = fmt.gettext("published %(date)s") % {"date": row.published}
    return Cell(row.tier, sources=row.sources, detail=detail)


def ratings_section(
    fmt: Formatter, providers: Sequence[Record], editions: Sequence[Record]
) -> CompareSection:
    """One row per rating edition, one column per provider."""
    known = editions_of(editions, providers)
    table = [rating_rows(fmt, p, known) for p in providers]
    rows = tuple(
        CompareRow(table[0][i].label, tuple(_cell(fmt, t[i]) for t in table))
        for i in range(len(known))
    )
    summaries = tuple(
        fmt.ngettext(
            "rated in %(num)s of %(total)s editions",
            "rated in %(num)s of %(total)s editions",
            sum(r.rated for r in t),
        )
        % {"num": fmt.number(sum(r.rated for r in t)), "total": fmt.number(len(known))}
        for t in table
    )
    return CompareSection("ratings", fmt.gettext("Independent ratings"), rows, summaries)
