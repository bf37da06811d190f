"""Catalog free text in the reader's language on pages (by URL) and in the API (by ?lang=)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from clusterscout.domain.languages import LANGUAGES, TRANSLATED_LANGUAGES
from clusterscout.web.i18n import DEFAULT_LOCALE, KNOWN_LOCALES, TRANSLATED_LOCALES

EVIDENCE = {
    "en": "Sells InfiniBand clusters of 2 to 64 nodes.",
    "pt": "Vende clusters InfiniBand de 2 a 64 nós.",
    "es": "Vende clústeres InfiniBand de 2 a 64 nodos.",
    "fr": "Propose des clusters InfiniBand de 2 à 64 nœuds.",
    "de": "Verkauft InfiniBand-Cluster mit 2 bis 64 Knoten.",
}


def test_the_site_languages_are_declared_once() -> None:
    assert tuple(KNOWN_LOCALES) == LANGUAGES
    assert (DEFAULT_LOCALE, *TRANSLATED_LOCALES) == (LANGUAGES[0], *TRANSLATED_LANGUAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_provider_page_shows_catalog_text_in_the_page_language(
    client: TestClient, lang: str
) -> None:
    html = client.get(f"/{lang}/providers/alpha/").text
    assert f'<p class="evidence" lang="{lang}">{EVIDENCE[lang]}</p>' in html
    for other, text in EVIDENCE.items():
        if other != lang:
            assert text not in html


def test_offer_names_terms_and_compare_cells_are_translated(client: TestClient) -> None:
    offers = client.get("/pt/offers/").text
    assert "Clusters de H100" in offers
    assert "H100 clusters" not in offers
    compare = client.get("/es/compare/?p=alpha&p=beta").text
    assert "Sistema de archivos paralelo" in compare
    assert re.search(r'lang="es">[^<]*Sistema de archivos paralelo', compare)
    assert "Parallel file system" not in compare


def test_api_is_english_by_default(client: TestClient) -> None:
    response = client.get("/api/v1/providers/alpha")
    assert response.status_code == 200
    assert response.json()["multi_node_evidence"] == EVIDENCE["en"]
    assert response.headers["content-language"] == "en"


@pytest.mark.parametrize("lang", TRANSLATED_LANGUAGES)
def test_api_lang_translates_free_text_only(client: TestClient, lang: str) -> None:
    english = client.get("/api/v1/providers/alpha").json()
    body = client.get(f"/api/v1/providers/alpha?lang={lang}").json()
    assert body["multi_node_evidence"] == EVIDENCE[lang]
    assert body["provisioning"]["reserved_terms"] != english["provisioning"]["reserved_terms"]
    # Keys, ids, enums, names and numbers are the reference English ones.
    assert body["slug"] == english["slug"]
    assert body["name"] == english["name"]
    assert body["multi_node"] == english["multi_node"]
    assert [o["id"] for o in body["offers"]] == [o["id"] for o in english["offers"]]
    assert body["offers"][0]["fabric"] == english["offers"][0]["fabric"]


def test_accept_language_chooses_the_language_and_lang_wins(client: TestClient) -> None:
    fr = client.get("/api/v1/providers/alpha", headers={"Accept-Language": "fr-CA,fr;q=0.9"})
    assert fr.json()["multi_node_evidence"] == EVIDENCE["fr"]
    assert fr.headers["content-language"] == "fr"
    assert "Accept-Language" in fr.headers["vary"]
    both = client.get("/api/v1/providers/alpha?lang=de", headers={"Accept-Language": "fr"})
    assert both.json()["multi_node_evidence"] == EVIDENCE["de"]
    unknown = client.get("/api/v1/providers/alpha", headers={"Accept-Language": "ja"})
    assert unknown.json()["multi_node_evidence"] == EVIDENCE["en"]


def test_cached_api_answers_differ_by_accept_language(client: TestClient) -> None:
    en = client.get("/api/v1/providers", headers={"Accept-Language": "en"})
    de = client.get("/api/v1/providers", headers={"Accept-Language": "de"})
    assert en.headers["etag"] != de.headers["etag"]
    evidence = {r["slug"]: r["multi_node_evidence"] for r in de.json()["data"]}
    assert evidence["alpha"] == EVIDENCE["de"]


def test_every_catalog_endpoint_takes_lang(client: TestClient) -> None:
    offers = client.get("/api/v1/offers?lang=pt&gpu=H100").json()
    assert "Clusters de H100" in [o["name"] for o in offers["data"]]
    # The CSV has no free text: lang is an unknown filter there.
    assert client.get("/api/v1/offers.csv?lang=fr").status_code == 400
    listed = client.get("/api/v1/providers?multi_node=yes&lang=es").json()["data"]
    assert EVIDENCE["es"] in [p["multi_node_evidence"] for p in listed]
    offer_id = offers["data"][0]["id"]
    history = client.get(f"/api/v1/offers/{offer_id}/prices?lang=de")
    assert history.status_code == 200
    assert history.headers["content-language"] == "de"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/api/v1/providers/alpha?lang=xx", "'xx' is not a site language (en, pt, es, fr, de)"),
        ("/api/v1/offers?lang=pt-BR", "'pt-BR' is not a site language (en, pt, es, fr, de)"),
        ("/api/v1/providers?lang=fr&lang=de", "may be given only once"),
        ("/api/v1/offers?lang=", "'' is not a site language (en, pt, es, fr, de)"),
    ],
)
def test_bad_lang_is_a_400_naming_lang(client: TestClient, url: str, message: str) -> None:
    response = client.get(url)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "lang"
    assert error["message"] == f"lang: {message}"


def test_other_parameters_are_still_refused(client: TestClient) -> None:
    response = client.get("/api/v1/providers/alpha?lang=fr&foo=1")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "foo"


def test_openapi_documents_lang_on_every_catalog_endpoint(client: TestClient) -> None:
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    for path in (
        "/api/v1/offers",
        "/api/v1/providers",
        "/api/v1/providers/{slug}",
        "/api/v1/offers/{offer_id}/prices",
    ):
        params = {p["name"]: p for p in paths[path]["get"]["parameters"]}
        assert params["lang"]["schema"]["enum"] == list(LANGUAGES), path
