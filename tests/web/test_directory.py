"""The provider directory, the checklist filters, offer comparison and launch node counts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner
from web_support import LANGS, TestClient, visible_text

from clusterscout.cli import app as cli_main
from clusterscout.resources import content_dir
from clusterscout.settings import Settings
from clusterscout.web import i18n
from clusterscout.web.scorecard import scorecard


def _slugs(client: TestClient, query: str) -> list[str]:
    r = client.get(f"/api/v1/providers{query}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == len(body["data"])
    return [p["slug"] for p in body["data"]]


def _page_slugs(client: TestClient, lang: str, query: str) -> list[str]:
    r = client.get(f"/{lang}/providers/{query}")
    if r.status_code == 302:  # to the canonical address of the same view
        r = client.get(r.headers["location"])
    assert r.status_code == 200, r.text[:300]
    body = r.text.split("<tbody>", 1)[1] if "<tbody>" in r.text else ""
    return re.findall(rf'<th scope="row"><a href="/{lang}/providers/([a-z0-9-]+)/">', body)


@pytest.mark.parametrize("lang", LANGS)
def test_directory_lists_every_provider_and_filters_on_multi_node(
    client: TestClient, lang: str
) -> None:
    assert _page_slugs(client, lang, "") == ["alpha", "beta", "gamma"]
    assert _page_slugs(client, lang, "?multi_node=yes") == ["alpha", "beta"]
    assert _page_slugs(client, lang, "?multi_node=no") == ["gamma"]
    r = client.get(f"/{lang}/providers/?multi_node=unknown")
    assert _page_slugs(client, lang, "?multi_node=unknown") == []
    # An empty answer says what to change, in the page's language.
    assert 'class="empty"' in r.text
    assert f'href="/{lang}/providers/"' in r.text


def test_directory_form_has_every_checklist_filter_ticked_as_asked(client: TestClient) -> None:
    html = client.get("/en/providers/?nccl=true&topology=locality").text
    for name in ("multi_node", "fabric", "clustermax", "orchestration", "provisioning"):
        assert f'name="{name}"' in html
    assert 'name="nccl" value="true" checked' in html
    assert 'name="topology" value="locality" checked' in html
    assert 'name="shared_storage" value="true">' in html
    assert 'name="billing" value="per_second">' in html


def test_directory_is_in_the_navigation(client: TestClient) -> None:
    html = client.get("/pt/").text
    assert '<a href="/pt/providers/"' in html.split("</nav>", 1)[0]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["alpha", "beta", "gamma"]),
        ("?multi_node=yes&multi_node=no", ["alpha", "beta", "gamma"]),
        ("?multi_node=false", ["gamma"]),
        ("?multi_node=no,unknown", ["gamma"]),
        ("?fabric=roce", ["beta"]),
        ("?nccl=true", ["alpha"]),
        ("?nccl=false", ["beta"]),
        ("?shared_storage=true", ["alpha"]),
        ("?billing=per_month", ["beta"]),
        ("?topology=non_blocking,rail_optimized", ["alpha"]),
        ("?topology=locality", ["beta"]),
        ("?clustermax=gold", ["alpha"]),
        ("?clustermax=unavailable&multi_node=no", ["gamma"]),
        ("?clustermax=not_rated", ["beta"]),  # beta is rated in 2.0 only
        ("?sort=facts", ["alpha", "beta", "gamma"]),
        # alpha from 1.79 (A100 on-demand), beta from 1.99 (reserved), gamma unpriced.
        ("?sort=price", ["alpha", "beta", "gamma"]),
    ],
)
def test_api_page_and_cli_agree(
    client: TestClient, fixture_settings: Settings, query: str, expected: list[str]
) -> None:
    assert _slugs(client, query) == expected
    assert _page_slugs(client, "en", query) == expected
    args = ["providers", "--format", "json", "--database-url", fixture_settings.database_url]
    for key, value in re.findall(r"([a-z_]+)=([^&]+)", query):
        args += ["--" + key.replace("_", "-"), value]
    result = CliRunner().invoke(cli_main, args)
    assert result.exit_code == 0, result.output
    assert [r["slug"] for r in json.loads(result.output)] == expected


def test_directory_records_carry_the_summary(client: TestClient) -> None:
    rows = {r["slug"]: r for r in client.get("/api/v1/providers").json()["data"]}
    alpha = rows["alpha"]
    assert alpha["fabrics"] == ["infiniband"]
    assert alpha["clustermax"] == "gold"
    # alpha: on-demand 2.99 (H100) and 1.79 (A100), reserved 2.29: the A100's 1.79 is lowest.
    assert alpha["cheapest"]["usd_per_gpu_hour"] == 1.79
    assert alpha["cheapest"]["offer"] == "alpha-a100-ib"
    assert rows["gamma"]["cheapest"] is None
    assert rows["gamma"]["facts_known"]["known"] == 0
    detail = client.get("/api/v1/providers/alpha").json()
    assert detail["facts_known"] == alpha["facts_known"]


def test_facts_known_agrees_with_the_provider_page_scorecard(client: TestClient) -> None:
    fmt = i18n.formatter("en", i18n.load_translations("en"))
    for slug in ("alpha", "beta", "gamma"):
        record = client.get(f"/api/v1/providers/{slug}").json()
        shown = sum(d.known for d in scorecard(fmt, record))
        assert record["facts_known"]["known"] == shown, slug


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?multi_node=maybe", "multi_node"),
        ("?fabric=carrier-pigeon", "fabric"),
        ("?sort=cheapest", "sort"),
        ("?nccl=perhaps", "nccl"),
        ("?billing=hourly", "billing"),
        ("?topology=flat", "topology"),
        ("?colour=blue", "colour"),
    ],
)
def test_bad_directory_input_is_a_400_naming_the_field(
    client: TestClient, query: str, field: str
) -> None:
    r = client.get(f"/api/v1/providers{query}")
    assert r.status_code == 400
    assert r.json()["error"]["field"] == field
    assert client.get(f"/en/providers/{query}").status_code == 400


def test_guide_checklist_links_lead_to_the_checklist_filters(client: TestClient) -> None:
    for lang in LANGS:
        guide = (content_dir() / lang / "guides" / "multi-node.md").read_text(encoding="utf-8")
        links = re.findall(r"\]\((\?[^)]+)\)", guide)
        for needed in ("topology=", "nccl=", "billing=", "shared_storage="):
            assert any(needed in link for link in links), (lang, needed)
        for link in links:
            r = client.get(f"/{lang}/multi-node/{link}")
            assert r.status_code in (200, 302), (lang, link)


def test_listing_offers_compare_and_the_first_three(client: TestClient) -> None:
    html = client.get("/en/multi-node/?min_nodes=2").text
    assert 'form="offer-compare"' in html
    assert '<form id="offer-compare"' in html
    top = re.search(r'href="(/en/compare/offers/\?[^"]+)"', html)
    assert top is not None
    link = top.group(1).replace("&amp;", "&")
    assert link.endswith("&nodes=2")
    assert link.count("o=") >= 2
    assert client.get(link).status_code == 200


def test_compare_offers_shows_prices_by_tier_with_dates(client: TestClient) -> None:
    r = client.get("/en/compare/offers/?o=alpha-h100-ib&o=beta-mi300x-roce&nodes=4")
    assert r.status_code == 200
    text = visible_text(r.text)
    # alpha-h100-ib: on-demand 2.99 and reserved 2.29; beta-mi300x-roce: reserved 1.99.
    for price in ("$2.99", "$2.29", "$1.99"):
        assert price in text
    assert "On-demand, per GPU-hour" in text
    assert "Launch files for 4 nodes" in text
    assert "/en/providers/alpha/?nodes=4#launch-alpha-h100-ib" in r.text
    # Removing one keeps the other and the node count.
    assert "/en/compare/offers/?o=beta-mi300x-roce&amp;nodes=4" in r.text


@pytest.mark.parametrize(
    "query",
    [
        "?o=nope",
        "?" + "&".join(f"o=x{i}" for i in range(7)),
        "?o=alpha-h100-ib&nodes=0",
        "?o=alpha-h100-ib&p=alpha",
    ],
)
def test_compare_offers_refuses_bad_input(client: TestClient, query: str) -> None:
    assert client.get(f"/en/compare/offers/{query}").status_code == 400


def _launch_nodes(html: str) -> set[str]:
    section = html.split('id="launch"', 1)[1]
    return set(re.findall(r'<td class="num">(\d+)</td>', section))


def test_provider_page_writes_launch_files_for_the_asked_nodes(client: TestClient) -> None:
    assert _launch_nodes(client.get("/en/providers/alpha/").text) == {"2"}
    assert _launch_nodes(client.get("/en/providers/alpha/?nodes=16").text) == {"16"}
    # alpha sells up to 256 nodes by quote: more than that leaves no launch row, and says so.
    big = client.get("/en/providers/alpha/?nodes=300").text
    assert _launch_nodes(big) == set()
    assert "No offer of this provider sells a cluster of 300 nodes" in visible_text(big)
    for bad in ("0", "two", "100001"):
        assert client.get(f"/en/providers/alpha/?nodes={bad}").status_code == 400


def _plan(client: TestClient, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/plan", json=body)


def test_plan_deadline_in_days_is_the_deadline_in_hours(client: TestClient) -> None:
    base = {"model": "7B", "tokens": 1e10}
    days = _plan(client, {**base, "deadline_days": 2}).json()
    hours = _plan(client, {**base, "deadline_hours": 48}).json()
    assert days["deadline_hours"] == hours["deadline_hours"] == 48
    assert days["options"] == hours["options"]
    both = _plan(client, {**base, "deadline_days": 2, "deadline_hours": 48})
    assert both.status_code == 400
    assert both.json()["error"]["field"] == "deadline_days"
    assert _plan(client, {**base, "deadline_days": -1}).status_code == 400


def test_plan_rows_link_to_launch_files_and_compare(client: TestClient) -> None:
    html = client.get("/en/plan/?model=7B&tokens=1e10").text
    assert 'form="offer-compare"' in html
    assert re.search(r'href="(#launch-option-\d+|/en/providers/[a-z]+/\?nodes=\d+#launch-)', html)
