#!/usr/bin/env python3
"""Draw a seeded random sample of catalog facts, with their cited sources, for a blind spot-check.

Usage::

    .venv/bin/python scripts/spot_check_sample.py --seed 20261201 -n 30
    .venv/bin/python scripts/spot_check_sample.py --seed 20261201 -n 30 --format json

A fact is one known value with the sources it cites: a provider's multi-node status, location,
each known key of its orchestration, provisioning, billing and storage tables, each discount and
rating; an offer's fields (GPU, GPUs per node, fabric, Gbit/s per node, RDMA, node limits,
regions), its topology claims, each key of an orchestration/provisioning/billing table the offer
sets itself (inherited tables are counted once, on the provider), and each price. Free-text
notes and names are our own words, not facts, and are left out.

The catalog is read with clusterscout's own loader, every fact is listed in a fixed order and
``random.Random(seed).sample`` picks N of them, so the same seed on the same data gives the same
sample. The sample is printed in the order drawn.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from clusterscout.catalog.load import load_catalog  # noqa: E402
from clusterscout.catalog.schema import OFFER_FACT_FIELDS  # noqa: E402
from clusterscout.domain.models import (  # noqa: E402
    Billing,
    Offer,
    Orchestration,
    Provider,
    Provisioning,
    Sources,
    Storage,
)

GROUP_KEYS: dict[str, tuple[str, ...]] = {
    "orchestration": ("managed_slurm", "managed_kubernetes", "nccl_preconfigured", "raw_vms"),
    "provisioning": ("on_demand_clusters", "reserved", "reserved_terms", "waitlist", "access"),
    "billing": ("granularity", "minimum", "minimum_hours"),
    "storage": ("shared_filesystem", "products", "throughput_gbs", "usd_per_gib_month"),
}
# The schema's offer facts in its order (the seeded draw depends on it), names not sampled.
OFFER_FIELDS = tuple(f for f in OFFER_FACT_FIELDS if f != "name")


@dataclass(frozen=True, slots=True)
class Fact:
    """One sampled value and where the catalog says it comes from."""

    provider: str
    offer: str  # local offer id, "" for a provider-level fact
    field: str
    value: str
    sources: tuple[str, ...]  # "kind url" of each cited source


def _show(value: Any) -> str:
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, tuple):
        return ", ".join(_show(v) for v in value)
    return str(value)


def _known(value: Any) -> bool:
    return value is not None and value != ()


def _refs(sources: Sources) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f"{s.kind.value} {s.url}" for s in sources))


def _group(
    provider: str, offer: str, name: str, group: Orchestration | Provisioning | Billing | Storage
) -> Iterator[Fact]:
    for key in GROUP_KEYS[name]:
        value = getattr(group, key)
        if _known(value):
            yield Fact(provider, offer, f"{name}.{key}", _show(value), _refs(group.sources))


def _offer_facts(p: Provider, o: Offer) -> Iterator[Fact]:
    for name in OFFER_FIELDS:
        value = getattr(o, name)
        if _known(value):
            srcs = o.field_sources.get(name, ())
            yield Fact(p.slug, o.local_id, name, _show(value), _refs(srcs))
    for key in ("non_blocking", "rail_optimized"):
        value = getattr(o.topology, key)
        if value is not None:
            refs = _refs(o.topology.sources)
            yield Fact(p.slug, o.local_id, f"topology.{key}", _show(value), refs)
    # An offer's table equal to the provider's was inherited: it is counted once, on the provider.
    for name, own, inherited in (
        ("orchestration", o.orchestration, p.orchestration),
        ("provisioning", o.provisioning, p.provisioning),
        ("billing", o.billing, p.billing),
    ):
        if own != inherited:
            yield from _group(p.slug, o.local_id, name, own)
    for price in o.prices:
        term = f" ({price.term})" if price.term else ""
        value = f"{price.tier.value}{term} ${price.usd_per_gpu_hour}/GPU-h as of {price.as_of}"
        yield Fact(p.slug, o.local_id, "price", value, _refs((price.source,)))


def facts(p: Provider) -> Iterator[Fact]:
    """Every fact of one provider and its offers, in file order."""
    yield Fact(p.slug, "", "multi_node", p.multi_node.value, _refs(p.field_sources["multi_node"]))
    if p.hq_country:
        yield Fact(p.slug, "", "hq_country", p.hq_country, _refs(p.field_sources["hq_country"]))
    if p.regions:
        yield Fact(p.slug, "", "regions", _show(p.regions), _refs(p.field_sources["regions"]))
    yield from _group(p.slug, "", "orchestration", p.orchestration)
    yield from _group(p.slug, "", "provisioning", p.provisioning)
    yield from _group(p.slug, "", "billing", p.billing)
    yield from _group(p.slug, "", "storage", p.storage)
    for d in p.discounts:
        low = f"{d.min_percent}-" if d.min_percent is not None else "up to "
        value = f"{low}{d.max_percent}% off {d.off.value} for {d.term_days} days"
        yield Fact(p.slug, "", "discount", value, _refs(d.sources))
    for r in p.ratings:
        value = f"{r.rater} {r.edition}: {r.tier.value} ({r.published_on})"
        yield Fact(p.slug, "", "rating", value, _refs(r.sources))
    for o in p.offers:
        yield from _offer_facts(p, o)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, load the catalog, print the sample."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("-n", type=int, default=30)
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    result = load_catalog(args.data)
    if result.catalog is None:
        for problem in result.problems:
            print(problem, file=sys.stderr)
        return 1
    population = [f for p in result.catalog.providers for f in facts(p)]
    if args.n > len(population):
        parser.error(f"-n {args.n} is larger than the {len(population)} facts in the catalog")
    # A seeded, reproducible draw is the point here; nothing about it needs to be secret.
    sample = random.Random(args.seed).sample(population, args.n)  # noqa: S311
    if args.format == "json":
        facts_out = [asdict(f) for f in sample]
        out = {"seed": args.seed, "population": len(population), "facts": facts_out}
        print(json.dumps(out, indent=2))
        return 0
    print(f"seed {args.seed}: {args.n} of {len(population)} facts")
    for i, f in enumerate(sample, 1):
        where = f"{f.provider}/{f.offer}" if f.offer else f.provider
        print(f"{i:2}. {where} {f.field} = {f.value}")
        for ref in f.sources:
            print(f"      {ref}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
