"""Every user-visible free-text value of a loaded catalog, with its file and key path.

These are the texts translated in ``data/locale`` (ADR 0011). Decided per field:

- translated: the ``launch.toml`` note of a SkyPilot or dstack target that cannot launch
  (pages show it as the reason); provider ``multi_node.evidence``; every ``note`` that
  reaches a page or the API (orchestration, provisioning, billing, storage, discounts,
  offers, prices, ratings, published fabric measurements); ``offers.topology.locality``;
  ``conflicts.topic`` and ``.note``; ``storage.products``; ``provisioning.reserved_terms``;
  ``billing.minimum``;
  ``prices.term``; an offer ``name`` when it is descriptive (see :func:`is_descriptive`).
- not translated: provider, GPU and fabric names, ids, URLs, regions, rating editions (names
  and codes); source titles and notes, GPU and fabric notes and calibration texts (curator
  notes that no page or API answer shows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from clusterscout.catalog.launch_data import LAUNCH_FILE
from clusterscout.catalog.load import RATINGS_FILE
from clusterscout.domain.languages import SOURCE_LANGUAGE
from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.models import (
    Billing,
    CatalogData,
    Discount,
    Offer,
    Orchestration,
    Provider,
    Provisioning,
)


@dataclass(frozen=True, slots=True, order=True)
class CatalogText:
    """One free-text value: the file it is in (relative to the data directory), its key path
    and the English text, which is also its message id in the translations."""

    file: str
    path: str
    text: str


# Outside parentheses, a lowercase word of three letters or more ("with", "instances",
# "cluster") marks a description; product names are capitalised or codes ("A3 High",
# "BM.GPU.H100.8", "EC2 P5 (p5.48xlarge)").
_PARENTHESISED = re.compile(r"\([^)]*\)")
_PLAIN_WORD = re.compile(r"(?<![\w.-])[a-z]{3,}(?![\w.-])")


def is_descriptive(name: str) -> bool:
    """True when an offer name describes the offer rather than naming a product.

    >>> is_descriptive("H100 nodes with RDMA networking"), is_descriptive("BM.GPU.H100.8")
    (True, False)
    >>> is_descriptive("A3 Mega (a3-megagpu-8g)"), is_descriptive("GB300 NVL72 reservation")
    (False, True)
    """
    return _PLAIN_WORD.search(_PARENTHESISED.sub(" ", name)) is not None


def _orchestration(o: Orchestration, at: str) -> Iterator[tuple[str, str | None]]:
    yield f"{at}orchestration.note", o.note


def _provisioning(p: Provisioning, at: str) -> Iterator[tuple[str, str | None]]:
    for i, term in enumerate(p.reserved_terms):
        yield f"{at}provisioning.reserved_terms[{i}]", term
    yield f"{at}provisioning.note", p.note


def _billing(b: Billing, at: str) -> Iterator[tuple[str, str | None]]:
    yield f"{at}billing.minimum", b.minimum
    yield f"{at}billing.note", b.note


def _discounts(items: tuple[Discount, ...], at: str) -> Iterator[tuple[str, str | None]]:
    for i, d in enumerate(items):
        yield f"{at}discounts[{i}].note", d.note


def _offer(offer: Offer, provider: Provider) -> Iterator[tuple[str, str | None]]:
    at = f"offers[{offer.local_id}]."
    if offer.name and is_descriptive(offer.name):
        yield f"{at}name", offer.name
    yield f"{at}note", offer.note
    yield f"{at}topology.locality", offer.topology.locality
    # An offer without its own group inherits the provider's (equal records): that text is
    # listed once, at the provider's key.
    if offer.orchestration != provider.orchestration:
        yield from _orchestration(offer.orchestration, at)
    if offer.provisioning != provider.provisioning:
        yield from _provisioning(offer.provisioning, at)
    if offer.billing != provider.billing:
        yield from _billing(offer.billing, at)
    if offer.discounts != provider.discounts:
        yield from _discounts(offer.discounts, at)
    for i, price in enumerate(offer.prices):
        yield f"{at}prices[{i}].term", price.term
        yield f"{at}prices[{i}].note", price.note
    for i, m in enumerate(offer.measured_fabric):
        yield f"{at}measured_fabric[{i}].note", m.note


def _provider(p: Provider) -> Iterator[tuple[str, str | None]]:
    yield "multi_node.evidence", p.multi_node_evidence
    yield from _orchestration(p.orchestration, "")
    yield from _provisioning(p.provisioning, "")
    yield from _billing(p.billing, "")
    for i, product in enumerate(p.storage.products):
        yield f"storage.products[{i}]", product
    yield "storage.note", p.storage.note
    yield from _discounts(p.discounts, "")
    for i, c in enumerate(p.conflicts):
        yield f"conflicts[{i}].topic", c.topic
        yield f"conflicts[{i}].note", c.note
    for offer in p.offers:
        yield from _offer(offer, p)


def catalog_texts(catalog: CatalogData) -> list[CatalogText]:
    """Every translatable text of ``catalog`` where it is written, in file order."""
    out: list[CatalogText] = []
    for p in catalog.providers:
        file = f"providers/{p.slug}.toml"
        out.extend(CatalogText(file, path, text) for path, text in _provider(p) if text)
    for p in catalog.providers:
        for r in p.ratings:
            if r.note:
                path = f"ratings[{p.slug}/{r.rater}/{r.edition}].note"
                out.append(CatalogText(RATINGS_FILE, path, r.note))
    return out


def launch_texts(knowledge: LaunchKnowledge) -> list[CatalogText]:
    """The notes of SkyPilot and dstack targets that refuse a cluster: pages show them as the
    reason a tool cannot launch it. Notes of targets that work only annotate the files."""
    out: list[CatalogText] = []
    for t in knowledge.skypilot:
        if t.note and (t.cloud is None or not t.multi_node):
            out.append(CatalogText(LAUNCH_FILE, f"skypilot[{t.provider}].note", t.note))
    for d in knowledge.dstack:
        if d.note and (d.backend is None or not d.multi_node):
            out.append(CatalogText(LAUNCH_FILE, f"dstack[{d.provider}].note", d.note))
    return out


# Where those texts sit in the public records (catalog.records) and price observations: keys
# holding one text, and keys holding a list of texts. Every other value (ids, names of
# products, enums, numbers, URLs) is never translated.
TEXT_KEYS: Final = frozenset(
    {"multi_node_evidence", "note", "locality", "topic", "minimum", "term", "name"}
)
TEXT_LIST_KEYS: Final = frozenset({"products", "reserved_terms"})


def _walk(value: Any, table: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in TEXT_KEYS and isinstance(item, str):
                out[key] = table.get(item, item)
            elif key in TEXT_LIST_KEYS and isinstance(item, list):
                out[key] = [table.get(x, x) if isinstance(x, str) else x for x in item]
            else:
                out[key] = _walk(item, table)
        return out
    if isinstance(value, list):
        return [_walk(item, table) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class Translation:
    """The catalog's free text in one language: English text -> translation."""

    lang: str = SOURCE_LANGUAGE
    table: Mapping[str, str] = field(default_factory=dict)
    # The translated texts, to tell a translation from an English fallback on the page.
    outputs: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "outputs", frozenset(self.table.values()))

    def text(self, english: str) -> str:
        """``english`` in this language, or as written when it has no translation.

        >>> Translation("fr", {"1 year": "1 an"}).text("1 year")
        '1 an'
        """
        return self.table.get(english, english)

    def localize(self, record: Any) -> Any:
        """A copy of ``record`` (a dict or list of public records) with every free-text value
        in this language; keys, enums, names and numbers stay as they are.

        >>> Translation("fr", {"Weekly": "Hebdomadaire"}).localize(
        ...     {"name": "Acme", "tier": "Weekly", "billing": {"note": "Weekly"}})
        {'name': 'Acme', 'tier': 'Weekly', 'billing': {'note': 'Hebdomadaire'}}
        """
        return _walk(record, self.table) if self.table else record

    def lang_of(self, *texts: str | None) -> str:
        """The language ``texts`` are shown in: this one when every text is a translation,
        else English (the catalog's untranslated text).

        >>> fr = Translation("fr", {"1 year": "1 an"})
        >>> fr.lang_of("1 an"), fr.lang_of("1 an", "6 months"), Translation().lang_of("x")
        ('fr', 'en', 'en')
        """
        shown = [t for t in texts if t]
        if shown and all(t in self.outputs for t in shown):
            return self.lang
        return SOURCE_LANGUAGE
