"""Commitment terms, access, regions with countries and independent ratings load as typed facts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterscout.catalog.filters import ClusterMaxChoice, clustermax_choice
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Severity
from clusterscout.domain.models import Access, CatalogData, PriceTier, RatingTier


@pytest.fixture
def catalog_copy(tmp_path: Path, fixture_data_dir: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(fixture_data_dir, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1))


def _load(data_dir: Path) -> tuple[CatalogData, list[str]]:
    result = load_catalog(data_dir)
    assert result.catalog is not None
    errors = [str(p) for p in result.problems if p.severity is Severity.ERROR]
    return result.catalog, errors


def _alpha(catalog: CatalogData):  # type: ignore[no-untyped-def]
    return next(p for p in catalog.providers if p.slug == "alpha")


def test_regions_may_name_their_country(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        'regions = ["us-east", "eu-west"]',
        'regions = [{ name = "us-east", country = "US" }, "eu-west",'
        ' { name = "us-west", country = "US" }, { name = "fi-1", country = "FI" }]',
    )
    _add_regions(catalog_copy, 'FI = { name = "Finland", area = "150" }', "[regions]")
    _add_regions(catalog_copy, '"us-west" = { country = "US" }\n"fi-1" = { country = "FI" }', None)
    catalog, errors = _load(catalog_copy)
    assert errors == []
    alpha = _alpha(catalog)
    assert alpha.regions == ("us-east", "eu-west", "us-west", "fi-1")
    assert alpha.countries == ("US", "FI")


def _add_regions(data_dir: Path, lines: str, before: str | None) -> None:
    """Add lines to regions.toml: before the line ``before``, else at the end."""
    path = data_dir / "regions.toml"
    text = path.read_text()
    path.write_text(text.replace(before, f"{lines}\n\n{before}") if before else f"{text}{lines}\n")


def test_a_region_missing_from_regions_toml_is_an_error_naming_file_and_key(
    catalog_copy: Path,
) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        'regions = ["us-east", "eu-west"]',
        'regions = ["us-east", "eu-west", "mars-1"]',
    )
    _, errors = _load(catalog_copy)
    assert any(
        e.startswith("data/providers/alpha.toml: location.regions[2]:") and "'mars-1'" in e
        for e in errors
    ), errors


def test_a_region_in_another_country_than_regions_toml_says_is_an_error(
    catalog_copy: Path,
) -> None:
    _edit(
        catalog_copy / "providers" / "beta.toml",
        '{ name = "sa-east-1", country = "BR" }',
        '{ name = "sa-east-1", country = "US" }',
    )
    _, errors = _load(catalog_copy)
    assert any(
        "beta.toml: offers[h100-eth].regions[0].country:" in e and "BR" in e for e in errors
    ), errors


def test_regions_toml_names_must_resolve_and_mean_one_thing(catalog_copy: Path) -> None:
    _add_regions(catalog_copy, 'XX = { name = "Germany", area = "999" }', "[regions]")
    _, errors = _load(catalog_copy)
    assert any("countries.XX.area: unknown area '999'" in e for e in errors), errors
    assert any("countries.XX" in e and "'Germany' also names countries.DE" in e for e in errors)


def test_offers_get_countries_and_places_from_regions_toml(catalog_copy: Path) -> None:
    catalog, errors = _load(catalog_copy)
    assert errors == []
    alpha = _alpha(catalog)
    # "us-east" is a bare name: its country comes from regions.toml.
    assert alpha.countries == ("US",)
    h100 = next(o for o in alpha.offers if o.local_id == "h100-ib")
    # Its region, country and the M49 areas above; "eu-west" names only Europe.
    assert set(h100.places) == {"r:us-east", "US", "021", "019", "r:eu-west", "150"}


def test_a_country_must_be_an_iso_code(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        'regions = ["us-east", "eu-west"]',
        'regions = [{ name = "us-east", country = "USA" }]',
    )
    _, errors = _load(catalog_copy)
    assert any("location.regions[0]" in e and "country" in e for e in errors), errors


def test_access_minimum_and_term_days_load(catalog_copy: Path) -> None:
    path = catalog_copy / "providers" / "alpha.toml"
    _edit(path, "waitlist = false\n", 'waitlist = false\naccess = "approval"\n')
    _edit(path, 'granularity = "per_minute"\n', 'granularity = "per_minute"\nminimum_hours = 336\n')
    _edit(path, 'term = "1 year"\n', 'term = "1 year"\nterm_days = 365\nprepay = true\n')
    catalog, errors = _load(catalog_copy)
    assert errors == []
    offer = next(o for o in _alpha(catalog).offers if o.local_id == "h100-ib")
    # Offers inherit provider-level access and billing like the other fact groups.
    assert offer.provisioning.access is Access.APPROVAL
    assert offer.billing.minimum_hours == 336
    reserved = next(p for p in offer.prices if p.tier is PriceTier.RESERVED)
    assert (reserved.term_days, reserved.prepay) == (365, True)


def test_unknown_access_value_lists_the_allowed_ones(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "alpha.toml", "waitlist = false\n", 'access = "instant"\n')
    _, errors = _load(catalog_copy)
    assert any("provisioning.access" in e and "self_serve" in e for e in errors), errors


DISCOUNT = """
[[discounts]]
term_days = 365
max_percent = 30
off = "on_demand"
sources = ["pricing"]
"""


def test_provider_discounts_apply_to_offers_unless_an_offer_has_its_own(
    catalog_copy: Path,
) -> None:
    path = catalog_copy / "providers" / "alpha.toml"
    _edit(path, "[[offers]]\n", DISCOUNT + "\n[[offers]]\n")
    text = path.read_text()
    # Give the second offer its own discount table.
    head, _, tail = text.rpartition("[[offers]]\n")
    tail = tail.replace(
        "[[offers.prices]]",
        "[[offers.discounts]]\nterm_days = 90\nmax_percent = 10\nmin_percent = 5\n"
        'sources = ["pricing"]\n\n[[offers.prices]]',
        1,
    )
    path.write_text(head + "[[offers]]\n" + tail)
    catalog, errors = _load(catalog_copy)
    assert errors == []
    by_id = {o.local_id: o for o in _alpha(catalog).offers}
    assert [(d.term_days, d.max_percent) for d in by_id["h100-ib"].discounts] == [(365, 30)]
    assert [(d.term_days, d.min_percent) for d in by_id["a100-ib"].discounts] == [(90, 5)]
    assert _alpha(catalog).field_sources["discounts"][0].id == "pricing"


def test_a_discount_range_must_be_ordered(catalog_copy: Path) -> None:
    path = catalog_copy / "providers" / "alpha.toml"
    bad = DISCOUNT.replace("max_percent = 30", "max_percent = 10\nmin_percent = 20")
    _edit(path, "[[offers]]\n", bad + "\n[[offers]]\n")
    _, errors = _load(catalog_copy)
    assert any("discounts[0]" in e and "min_percent is larger" in e for e in errors), errors


RATINGS = """
[[sources]]
id = "cm3"
url = "https://example.com/clustermax-3"
checked_on = 2026-09-23
kind = "secondary"

[[ratings]]
provider = "alpha"
rater = "clustermax"
edition = "2.0"
tier = "silver"
published_on = 2025-11-01
sources = ["cm3"]

[[ratings]]
provider = "alpha"
rater = "clustermax"
edition = "3.0"
tier = "gold"
published_on = 2026-09-23
sources = ["cm3"]
"""


def test_ratings_attach_to_their_provider_newest_first(catalog_copy: Path) -> None:
    (catalog_copy / "ratings.toml").write_text(RATINGS)
    catalog, errors = _load(catalog_copy)
    assert errors == []
    ratings = _alpha(catalog).ratings
    assert [(r.edition, r.tier) for r in ratings] == [
        ("3.0", RatingTier.GOLD),
        ("2.0", RatingTier.SILVER),
    ]
    assert ratings[0].sources[0].url == "https://example.com/clustermax-3"


def test_a_rating_of_an_unknown_provider_or_twice_is_an_error(catalog_copy: Path) -> None:
    edition_3 = "[[ratings]]" + RATINGS.split("[[ratings]]")[2]
    text = RATINGS.replace(
        'provider = "alpha"\nrater = "clustermax"\nedition = "2.0"',
        'provider = "nobody"\nrater = "clustermax"\nedition = "2.0"',
    )
    text += edition_3  # the same rating of alpha a second time
    (catalog_copy / "ratings.toml").write_text(text)
    _, errors = _load(catalog_copy)
    assert any("ratings[0].provider" in e and "unknown provider 'nobody'" in e for e in errors)
    assert any("ratings[2]" in e and "duplicate rating of 'alpha'" in e for e in errors), errors


def test_a_rating_from_the_future_is_an_error(catalog_copy: Path) -> None:
    (catalog_copy / "ratings.toml").write_text(RATINGS.replace("2026-09-23", "2099-01-01"))
    _, errors = _load(catalog_copy)
    assert any("published_on 2099-01-01 is in the future" in e for e in errors), errors
    assert any("sources[cm3].checked_on" in e for e in errors), errors


def test_a_bad_ratings_file_is_reported_not_loaded(catalog_copy: Path) -> None:
    (catalog_copy / "ratings.toml").write_text(RATINGS.replace('"gold"', '"diamond"'))
    catalog, errors = _load(catalog_copy)
    assert any("ratings[1].tier" in e and "platinum" in e for e in errors), errors
    assert _alpha(catalog).ratings == ()
    (catalog_copy / "ratings.toml").write_text("[[ratings]\n")
    _, errors = _load(catalog_copy)
    assert any(e.startswith("data/ratings.toml: (file): malformed TOML") for e in errors), errors


def test_an_uncited_ratings_source_is_a_warning(catalog_copy: Path) -> None:
    extra = '[[sources]]\nid = "spare"\nurl = "https://example.com/x"\nchecked_on = 2026-01-01\n'
    (catalog_copy / "ratings.toml").write_text(extra + RATINGS)
    result = load_catalog(catalog_copy)
    assert any(
        p.severity is Severity.WARNING and p.path == "sources[spare]" for p in result.problems
    )


def test_a_source_is_not_read_before_it_is_published(catalog_copy: Path) -> None:
    path = catalog_copy / "providers" / "alpha.toml"
    text = path.read_text()
    head, sep, tail = text.partition("checked_on = ")
    day, newline, rest = tail.partition("\n")
    path.write_text(f"{head}{sep}{day}\npublished_on = 2026-01-01{newline}{rest}")
    catalog, errors = _load(catalog_copy)
    assert errors == []
    assert next(s for s in _alpha(catalog).sources).published_on is not None
    path.write_text(f"{head}{sep}{day}\npublished_on = {day.replace('2026', '2027')}\n{rest}")
    _, errors = _load(catalog_copy)
    assert any("published_on" in e and "after checked_on" in e for e in errors), errors


def test_every_provider_knows_the_editions_and_its_tier_in_the_newest(
    catalog_copy: Path,
) -> None:
    # beta is in 2.0 only: the newest edition (3.0) did not rate it.
    text = RATINGS.replace(
        'provider = "alpha"\nrater = "clustermax"\nedition = "2.0"',
        ('provider = "beta"\nrater = "clustermax"\nedition = "2.0"'),
    )
    (catalog_copy / "ratings.toml").write_text(text)
    catalog, errors = _load(catalog_copy)
    assert errors == []
    by_slug = {p.slug: p for p in catalog.providers}
    editions = by_slug["gamma"].rating_editions
    assert [(e.rater, e.edition, e.published_on.isoformat()) for e in editions] == [
        ("clustermax", "3.0", "2026-09-23"),
        ("clustermax", "2.0", "2025-11-01"),
    ]
    alpha = by_slug["alpha"].current_rating("clustermax")
    beta = by_slug["beta"].current_rating("clustermax")
    assert alpha is not None
    assert beta is not None
    assert (alpha[0].edition, alpha[1].tier if alpha[1] else None) == ("3.0", RatingTier.GOLD)
    assert (beta[0].edition, beta[1]) == ("3.0", None)
    assert by_slug["alpha"].current_rating("another-rater") is None
    assert clustermax_choice(by_slug["beta"]) is ClusterMaxChoice.NOT_RATED
    assert clustermax_choice(by_slug["alpha"]) is ClusterMaxChoice.GOLD


def test_the_rating_filter_offers_every_tier() -> None:
    # A tier missing from the filter's values could never be asked for.
    assert {t.value for t in RatingTier} | {"not_rated"} == {c.value for c in ClusterMaxChoice}


def test_every_problem_of_regions_toml_is_reported_with_its_key(catalog_copy: Path) -> None:
    _add_regions(
        catalog_copy, '"001" = { name = "World", slug = "world", parent = "000" }', "[countries]"
    )
    _add_regions(
        catalog_copy,
        '"both" = { country = "US", area = "150" }\n'
        '"lost" = { country = "ZZ" }\n'
        '"far" = { area = "999" }\n'
        '"cited" = { country = "US", sources = ["nowhere"] }\n'
        '"clash" = { country = "US", aliases = ["Deutschland"] }',
        None,
    )
    result = load_catalog(catalog_copy)
    errors = "\n".join(str(p) for p in result.problems if p.severity is Severity.ERROR)
    # One invalid entry makes the file unreadable as a whole: its key is named.
    assert "regions.both: Value error, give exactly one of country or area" in errors
    _edit(catalog_copy / "regions.toml", '"both" = { country = "US", area = "150" }\n', "")
    result = load_catalog(catalog_copy)
    errors = "\n".join(str(p) for p in result.problems if p.severity is Severity.ERROR)
    for expected in (
        "areas.001.parent: unknown area '000'",
        "regions.\"lost\".country: unknown country 'ZZ'",
        "regions.\"far\".area: unknown area '999'",
        "regions.\"cited\".sources: source 'nowhere' is not defined in [[sources]]",
        "regions.\"clash\".aliases: alias 'Deutschland' already names countries.DE",
    ):
        assert expected in errors, errors
