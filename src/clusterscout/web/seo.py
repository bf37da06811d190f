"""What search engines and link previews read: schema.org JSON-LD for listings, providers and data.

Pages embed the result of :func:`script_json` in ``<script type="application/ld+json">``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from clusterscout.web.viewmodels import OfferRow

CONTEXT: Final = "https://schema.org"
SITE_NAME: Final = "clusterscout"
OG_LOCALES: Final = {"en": "en_US", "pt": "pt_BR", "es": "es_ES", "fr": "fr_FR", "de": "de_DE"}
"""Open Graph wants a language and a region; our ``pt`` is Brazilian Portuguese (ADR 0004)."""


def script_json(value: Mapping[str, Any]) -> str:
    """JSON for a ``<script>`` element: ``<``, ``>`` and ``&`` escaped so no text can close it.

    >>> script_json({"name": "</script><b>"})
    '{"name": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def item_list(origin: str, name: str, rows: Iterable[OfferRow], url: str) -> dict[str, Any]:
    """``ItemList`` of the offers a listing shows, each linking to its provider page."""
    items = [
        {
            "@type": "ListItem",
            "position": i,
            "name": f"{row.provider_name}: {row.offer_name or row.gpu.text}",
            "url": f"{origin}{row.provider_href}",
        }
        for i, row in enumerate(rows, start=1)
    ]
    return {
        "@context": CONTEXT,
        "@type": "ItemList",
        "name": name,
        "url": url,
        "numberOfItems": len(items),
        "itemListElement": items,
    }


def organization(record: Mapping[str, Any], page_url: str, description: str) -> dict[str, Any]:
    """``Organization`` of a provider: its name and own site; the page is its description."""
    out: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "Organization",
        "@id": f"{page_url}#organization",
        "name": record["name"],
        "url": record["url"],
        "description": description,
        "mainEntityOfPage": page_url,
    }
    if record.get("hq_country"):
        out["address"] = {"@type": "PostalAddress", "addressCountry": record["hq_country"]}
    return out


def dataset(
    *,
    name: str,
    description: str,
    page_url: str,
    origin: str,
    version: str,
    date_modified: str,
    license_url: str,
    distributions: Iterable[tuple[str, str]],
    lang: str,
) -> dict[str, Any]:
    """``Dataset`` of the downloadable catalog; ``distributions`` are (path, media type) pairs."""
    return {
        "@context": CONTEXT,
        "@type": "Dataset",
        "name": name,
        "description": description,
        "url": page_url,
        "inLanguage": lang,
        "version": version,
        "dateModified": date_modified,
        "license": license_url,
        "isAccessibleForFree": True,
        "creator": {"@type": "Organization", "name": SITE_NAME, "url": origin},
        "distribution": [
            {"@type": "DataDownload", "contentUrl": f"{origin}{path}", "encodingFormat": media}
            for path, media in distributions
        ],
    }
