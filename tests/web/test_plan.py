"""The planner page and its charts in every language: verdict, table, errors, shareable URLs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from web_support import LANGS, TRANSLATED, TestClient, visible_text

from clusterscout.app.fields import FIELDS_BY_NAME
from clusterscout.catalog.calibration import parse_calibration
from clusterscout.model.planner.reasons import Assumption, ExclusionReason
from clusterscout.web import i18n, reasons

FIXTURE_CALIBRATION = Path(__file__).parents[1] / "fixtures" / "catalog" / "calibration.toml"
Q405 = "?max_nodes=64&model=405B&precision=bf16&tokens=4e11"
Q7 = "?max_nodes=16&model=7B&precision=bf16&tokens=1e11"
SVG_NS = "{http://www.w3.org/2000/svg}"
# Planner interface strings that must not leak into a translated page.
ENGLISH = (
    "Plan a training run",
    "Do you need multi-node",
    "The memory arithmetic",
    "Offers ranked by job cost",
    "Rank by cost",
    "Scaling efficiency",
    "Pareto front",
    "Where the time of one training step goes",
    "Assumptions",
    "These are estimates",
    "Mixed-precision Adam",
    "Time to train",
    "Hardware and limits",
    "Tokens to train",
    "offer left out",
    "does not fit",
    "Share this plan",
    "Fewest nodes that meet the deadline",
    "default deadline",
    "Times assume the",
    "Software stack",
    "Allow spot prices",
    "Without a deadline",
    "pre-empted node",
)


@pytest.mark.parametrize("lang", LANGS)
def test_empty_plan_page_shows_the_form(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/plan/")
    assert r.status_code == 200
    assert f'<html lang="{lang}">' in r.text
    assert 'id="plan-form"' in r.text
    assert 'method="get"' in r.text
    assert 'id="verdict"' not in r.text
    assert f'<link rel="canonical" href="http://testserver/{lang}/plan/">' in r.text


@pytest.mark.parametrize("lang", LANGS)
def test_405b_plan_needs_multi_node_with_ranked_options_and_charts(
    client: TestClient, lang: str
) -> None:
    r = client.get(f"/{lang}/plan/{Q405}")
    assert r.status_code == 200, r.text[:300]
    html = r.text
    assert f'<html lang="{lang}">' in html
    assert 'class="verdict verdict-multi"' in html
    assert html.count('<tr class="pareto">') >= 1
    assert len(re.findall(r"<tbody>\s*<tr", html)) >= 1
    assert f'src="/{lang}/plan/chart/scaling.svg{Q405.replace("&", "&amp;")}"' in html
    assert f'src="/{lang}/plan/chart/cost-time.svg{Q405.replace("&", "&amp;")}"' in html
    # Text alternatives: the scaling table and the Pareto list.
    assert 'class="scaling"' in html
    assert re.search(r"<figcaption>.*?<ul><li>", html, re.S)
    assert f"/{lang}/providers/beta/#offer-beta-mi300x-roce" in html
    # The excluded offer and the error band.
    assert 'class="excluded"' in html
    band = parse_calibration(FIXTURE_CALIBRATION.read_text(encoding="utf-8")).error_band_pct
    assert f"±{band:.0f}" in html


@pytest.mark.parametrize("lang", LANGS)
def test_uncalibrated_gpu_options_are_flagged_and_ranked_last(
    client: TestClient, lang: str
) -> None:
    html = client.get(f"/{lang}/plan/{Q405}").text
    badge = i18n.load_translations(lang).gettext("not calibrated")
    assert lang == "en" or badge != "not calibrated"
    rows = re.findall(
        r"<tr(?: class=\"pareto\")?>\s*<th scope=\"row\" class=\"first\">(.*?)</th>", html, re.S
    )
    flagged = [badge in row for row in rows]
    assert any(flagged) and not all(flagged)
    # every flagged option comes after every calibrated one, and the note explains the flag
    assert flagged == sorted(flagged)
    assert 'class="note uncalibrated-note"' in html
    if lang != "en":
        assert "rests on a prior" not in html


def test_7b_plan_says_one_node_is_enough_and_explains_per_gpu(client: TestClient) -> None:
    html = client.get(f"/en/plan/{Q7}").text
    text = visible_text(html)
    assert 'class="verdict verdict-single"' in html
    assert "No: one 8-GPU node can run this job." in text
    assert "288 GB GPUs but not on one node of 80 GB GPUs" in text
    assert "Fewest GPUs that hold the job" in text
    for gpu in ("H100-SXM-80GB", "A100-SXM-80GB"):
        assert f'<th scope="row">{gpu}</th>' in html
    # the MI300X family rests on a prior: its row says so
    assert '<th scope="row">MI300X-192GB <small class="detail uncalibrated">' in html


def test_70b_plan_explains_which_gpus_fit_one_node(client: TestClient) -> None:
    text = visible_text(client.get("/en/plan/?model=70B&tokens=5e10").text)
    assert "It fits on one node of MI300X-192GB and finishes within" in text
    assert "the default deadline of" in text
    assert re.search(r"It does not fit on one node of (A100|H100)-SXM-80GB and (A100|H100)", text)


def test_verdict_uses_time_and_names_the_nodes_that_meet_the_deadline(client: TestClient) -> None:
    # 70B on 1T tokens: one MI300X node holds it in memory, but not within 90 days (issue 8).
    text = visible_text(client.get("/en/plan/?model=70B&tokens=1e12").text)
    assert "Yes: this job needs more than one 8-GPU node." in text
    assert re.search(
        r"One node of MI300X-192GB holds the job in memory, but the fastest \(MI300X-192GB\) "
        r"would take [\d,.]+ days, past the default deadline of 90\.0 days \(none given\)",
        text,
    )
    assert re.search(r"\d+ nodes of a listed offer are the fewest that finish within", text)
    html = client.get("/en/plan/?deadline_hours=1&model=70B&tokens=1e12").text
    assert "your deadline of 1.0 hour" in visible_text(html)
    assert "misses the deadline" in html


def test_memory_arithmetic_is_shown(client: TestClient) -> None:
    text = visible_text(client.get(f"/en/plan/{Q405}").text)
    assert "Weights 756.0 GiB" in text
    assert "Optimizer state 4,536.3 GiB" in text
    assert "(16 bytes per parameter)" in text


@pytest.mark.parametrize("lang", TRANSLATED)
def test_translated_plan_pages_have_no_english_interface_strings(
    client: TestClient, lang: str
) -> None:
    text = visible_text(client.get(f"/{lang}/plan/{Q405}").text)
    leaked = [s for s in ENGLISH if s in text]
    assert not leaked, f"English on {lang} plan page: {leaked}"


@pytest.mark.parametrize("lang", LANGS)
def test_invalid_input_is_shown_next_to_the_field_with_400(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/plan/?model=70B&tokens=-5")
    assert r.status_code == 400
    assert f'<html lang="{lang}">' in r.text
    assert 'id="err-tokens"' in r.text
    assert 'aria-invalid="true" aria-describedby="err-tokens"' in r.text
    form = FIELDS_BY_NAME["tokens"].form
    assert form is not None
    advice = i18n.load_translations(lang).gettext(form.advice)
    assert advice in visible_text(r.text)
    assert 'id="verdict"' not in r.text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?tokens=1e12", "model"),
        ("?params=abc&tokens=1e12", "params"),
        ("?model=999B&tokens=1e12", "model"),
        ("?max_nodes=0&model=7B&tokens=1e12", "max_nodes"),
        ("?budget_usd=-1&model=7B&tokens=1e12", "budget_usd"),
        ("?gpu=TPU&model=7B&tokens=1e12", "gpu"),
        ("?model=7B&precision=fp4&tokens=1e12", "precision"),
        ("?fabric=carrier-pigeon&model=7B&tokens=1e12", "fabric"),
        ("?model=7B&provider=nobody&tokens=1e12", "provider"),
        ("?model=7B&price_tier=hourly&tokens=1e12", "price_tier"),
    ],
)
def test_every_bad_field_answers_400_never_5xx(client: TestClient, query: str, field: str) -> None:
    r = client.get(f"/en/plan/{query}")
    assert r.status_code == 400, r.text[:300]
    assert f'id="err-{field}"' in r.text


def test_unknown_parameter_is_400(client: TestClient) -> None:
    r = client.get("/en/plan/?model=7B&tokens=1e12&colour=red")
    assert r.status_code == 400
    assert '<html lang="en">' in r.text


def test_query_string_is_canonical_and_shareable(client: TestClient) -> None:
    r = client.get("/en/plan/?tokens=4e11&model=405B&budget_usd=&precision=bf16&max_nodes=64")
    assert r.status_code == 302
    assert r.headers["location"] == f"/en/plan/{Q405}"
    html = client.get(r.headers["location"]).text
    escaped = Q405.replace("&", "&amp;")
    assert f'<link rel="canonical" href="http://testserver/en/plan/{escaped}">' in html
    assert f'hreflang="de" href="http://testserver/de/plan/{escaped}"' in html
    # The form shows the state of the URL.
    assert '<option value="405B" selected>' in html
    assert 'name="tokens" type="text" inputmode="decimal" maxlength="40" value="4e11"' in html


def test_a_preset_drops_a_leftover_parameter_count(client: TestClient) -> None:
    r = client.get("/en/plan/?model=7B&params=3e10&tokens=1e11")
    assert r.headers["location"] == "/en/plan/?model=7B&tokens=1e11"


def test_filters_and_deadline_narrow_the_plan(client: TestClient) -> None:
    html = client.get("/en/plan/?fabric=infiniband&model=70B&tokens=1e12").text
    assert "beta-mi300x-roce" not in html
    assert "alpha-h100-ib" in html
    html = client.get("/en/plan/?deadline_hours=1&model=405B&tokens=1e12").text
    assert "No offer can run this job within your limits" in html
    assert "misses the deadline" in html


def test_navigation_links_to_the_planner_and_the_guide_link_resolves(client: TestClient) -> None:
    html = client.get("/fr/multi-node/").text
    assert 'href="/fr/plan/"' in html
    assert 'href="../plan/"' in html  # relative to /fr/multi-node/, i.e. /fr/plan/
    assert client.get("/fr/plan/").status_code == 200
    assert 'aria-current="page">Planificateur<' in client.get("/fr/plan/").text


def test_sitemap_lists_the_planner(client: TestClient) -> None:
    assert "http://testserver/pt/plan/" in client.get("/sitemap.xml").text


@pytest.mark.parametrize("name", ["scaling", "cost-time", "step"])
@pytest.mark.parametrize("lang", ["en", "de"])
def test_chart_routes_answer_valid_svg(client: TestClient, name: str, lang: str) -> None:
    r = client.get(f"/{lang}/plan/chart/{name}.svg{Q405}")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src" not in csp
    root = ET.fromstring(r.content)  # noqa: S314 - our own output
    assert root.tag == f"{SVG_NS}svg"
    assert "<script" not in r.text
    assert root.find(f".//{SVG_NS}style") is not None
    assert r.headers["etag"]


def test_charts_are_localized(client: TestClient) -> None:
    assert "Skalierungseffizienz" in client.get(f"/de/plan/chart/scaling.svg{Q405}").text
    assert "Jobkosten" in client.get(f"/de/plan/chart/cost-time.svg{Q405}").text
    assert "InfiniBand — Alpha Cloud" in client.get(f"/en/plan/chart/scaling.svg{Q405}").text


QMOE = "?max_nodes=64&model=deepseek-v3&precision=bf16&tokens=1e12"
ALL_TO_ALL = {
    "en": "All-to-all (expert parallelism)",
    "pt": "All-to-all (paralelismo de especialistas)",
    "es": "All-to-all (paralelismo de expertos)",
    "fr": "All-to-all (parallélisme d'experts)",
    "de": "All-to-all (Expertenparallelität)",
}


@pytest.mark.parametrize("lang", LANGS)
def test_moe_plan_shows_ep_and_the_all_to_all_bar(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/plan/{QMOE}")
    assert r.status_code == 200
    html = r.text
    assert re.search(r"TP \d+ · PP \d+ (· VP \d+ )?· EP \d+ · DP \d+", html)
    assert f'src="/{lang}/plan/chart/step.svg{QMOE.replace("&", "&amp;")}"' in html
    label = ALL_TO_ALL[lang].replace("'", "&#39;")
    assert label in html
    svg = client.get(f"/{lang}/plan/chart/step.svg{QMOE}").text
    assert ALL_TO_ALL[lang].replace("'", "&#39;") in svg or ALL_TO_ALL[lang] in svg


def test_dense_plan_has_no_all_to_all_bar(client: TestClient) -> None:
    html = client.get(f"/en/plan/{Q405}").text
    assert "chart/step.svg" in html
    assert ALL_TO_ALL["en"] not in html
    assert " · EP " not in html


def test_chart_errors_are_4xx(client: TestClient) -> None:
    assert client.get(f"/en/plan/chart/pie.svg{Q405}").status_code == 404
    assert client.get("/en/plan/chart/scaling.svg?model=7B&tokens=-1").status_code == 400
    assert client.get("/en/plan/chart/scaling.svg").status_code == 400


def test_every_reason_and_assumption_has_a_translation() -> None:
    # Totality: a new enum member without a message id would reach a page in English.
    assert set(reasons.ASSUMPTION_TEXTS) == set(Assumption)
    assert set(reasons.REASON_TEXTS) == set(ExclusionReason)
    for lang in TRANSLATED:
        tr = i18n.load_translations(lang)
        for text in (*reasons.ASSUMPTION_TEXTS.values(), *reasons.REASON_TEXTS.values()):
            assert tr.gettext(text) != text, (lang, text)


def test_plan_page_pays_the_chosen_price_tier(client: TestClient) -> None:
    html = client.get("/en/plan/?gpu=H100-SXM-80GB&model=70B&price_tier=reserved&tokens=1e10").text
    assert '<option value="reserved" selected>reserved</option>' in html
    options = html.split('id="options"')[1].split("</table>")[0]
    # alpha-h100-ib lists on-demand $2.99 and reserved $2.29; only the reserved price is paid.
    assert "$2.29" in options
    assert "$2.99" not in options
    de = client.get("/de/plan/?gpu=H100-SXM-80GB&model=70B&price_tier=reserved&tokens=1e10").text
    assert "Zu zahlender Preis" in de


def test_stack_and_spot_are_form_inputs_kept_in_the_url(client: TestClient) -> None:
    html = client.get("/en/plan/?allow_spot=true&model=8B&stack=pytorch&tokens=1e10").text
    assert re.search(
        r'<input type="checkbox" id="pf-allow_spot" name="allow_spot" value="true"[^>]* checked',
        html,
    )
    assert re.search(r'<option value="pytorch" selected>PyTorch FSDP / torchtitan</option>', html)
    assert "Times assume the PyTorch FSDP / torchtitan software stack." in visible_text(html)
    plain = client.get("/en/plan/?model=8B&stack=megatron&tokens=1e10").text
    assert not re.search(r'id="pf-allow_spot"[^>]* checked', plain)


QSERVE = "?concurrency=32&context=32768&job=inference&model=405B&precision=fp8"
SERVING_ENGLISH = (
    "Nodes, speed and cost per GPU model",
    "Smallest replica",
    "USD per million tokens",
    "Time to first token",
    "Serving evidence",
    "little serving evidence",
    "KV cache of all concurrent sequences",
    "Serving memory",
)


@pytest.mark.parametrize("lang", LANGS)
def test_inference_plan_shows_nodes_and_tokens_per_gpu_model(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/plan/{QSERVE}")
    assert r.status_code == 200, r.text
    assert 'class="per-gpu serving"' in r.text
    assert "TP 8 × PP" in r.text
    assert 'id="options"' not in r.text  # no training options for serving
    # every GPU row states its time to first token and the evidence behind its figures
    table = r.text.split('class="per-gpu serving"')[1].split("</table>")[0]
    rows = table.split("<tbody>")[1].count("<tr>")
    assert rows > 0 and table.count('class="num">') >= 6 * rows
    assert re.search(r"<td class=\"num\">[\d.,\s]+(ms|s)</td>", table)
    if lang in TRANSLATED:
        text = visible_text(r.text)
        leaked = [s for s in SERVING_ENGLISH if s in text]
        assert leaked == []


def test_gpus_without_serving_evidence_are_flagged_on_the_page(client: TestClient) -> None:
    # The fixture catalog's calibration counts no serving points for any GPU, so every row
    # says so and the notice explains what that means; the JSON answer says the same.
    html = client.get(f"/en/plan/{QSERVE}").text
    text = visible_text(html)
    assert "fewer than 5 published serving measurements" in text
    rows = html.split('class="per-gpu serving"')[1].split("</table>")[0]
    assert rows.count("little serving evidence (0 published points)") == rows.count("<tr>") - 1
    de = visible_text(client.get(f"/de/plan/{QSERVE}").text)
    assert "wenig Inferenz-Messdaten" in de
    body = client.post(
        "/api/v1/plan",
        json={
            "job": "inference",
            "model": "405B",
            "precision": "fp8",
            "context": 32768,
            "concurrency": 32,
        },
    ).json()
    assert all(v["calibrated"] is False for v in body["serving"]["per_gpu"])


def test_job_selector_marks_the_fields_each_job_uses(client: TestClient) -> None:
    r = client.get("/en/plan/")
    assert 'id="pf-job"' in r.text
    assert 'data-jobs="inference"' in r.text
    assert 'data-jobs="lora qlora"' in r.text


def test_lora_plan_names_its_job(client: TestClient) -> None:
    r = client.get("/en/plan/?job=lora&lora_rank=8&model=70B&tokens=1e9")
    assert r.status_code == 200
    assert "LoRA fine-tuning (BF16 weights)" in r.text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?job=sometimes&model=70B&tokens=1e9", "job"),
        ("?lora_rank=8&model=70B&tokens=1e9", "lora_rank"),
        ("?concurrency=0&job=inference&model=70B", "concurrency"),
        ("?model=70B&precision=int4&tokens=1e9", "precision"),
    ],
)
def test_job_inputs_that_do_not_apply_are_400_next_to_the_field(
    client: TestClient, query: str, field: str
) -> None:
    r = client.get(f"/en/plan/{query}")
    assert r.status_code == 400
    assert f'id="err-{field}"' in r.text


def test_inference_plans_have_no_charts(client: TestClient) -> None:
    r = client.get(f"/en/plan/chart/scaling.svg{QSERVE}")
    assert r.status_code == 404


@pytest.mark.parametrize("lang", LANGS)
def test_plan_shows_goodput_and_all_in_cost_in_every_language(
    client: TestClient, lang: str
) -> None:
    html = client.get(f"/{lang}/plan/{Q405}").text
    t = i18n.load_translations(lang)
    assert f'<th scope="col" class="num">{t.gettext("Goodput")}</th>' in html
    assert t.gettext("Cost added by interruptions") in html
    assert t.gettext("All-in cost") in html
    # Every option has a goodput figure (a percentage) and the note cites the failure rate.
    cells = re.findall(r'<td class="num goodput">([^<]*)</td>', html)
    assert cells and all("%" in c for c in cells)
    note = re.search(r'<p class="note goodput-note" id="goodput">(.*?)</p>', html, re.S)
    assert note is not None
    assert 'href="https://arxiv.org/abs/2407.21783"' in note.group(1)
    assert t.gettext("Source of the failure rate") in note.group(1)
    # The fixture providers publish no egress price: the all-in total is not given, and says so.
    all_in = re.findall(r'<td class="num all-in">([^<]*)</td>', html)
    assert all_in and all(t.gettext("egress price unknown") in c for c in all_in)
    if lang != "en":
        assert "Goodput is the share" not in html and "price unknown" not in html


def test_goodput_inputs_change_the_page_and_bad_ones_are_400(client: TestClient) -> None:
    base = client.get(f"/en/plan/{Q405}").text
    mine = client.get(
        f"/en/plan/{Q405}&restart_minutes=0&checkpoint_minutes=1", follow_redirects=True
    ).text
    assert "Figures you entered replace the defaults." in mine
    assert "Figures you entered" not in base
    first = re.findall(r'<td class="num goodput">([^<]*)</td>', base)
    better = re.findall(r'<td class="num goodput">([^<]*)</td>', mine)
    assert first != better
    bad = client.get(f"/en/plan/{Q405}&restart_minutes=-1", follow_redirects=True)
    assert bad.status_code == 400
