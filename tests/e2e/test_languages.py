"""Every page type, crawled in Chromium in pt/es/fr/de, shows no sentence in another language.

Each visible text node goes through ``languages.other_language`` against the language it is
declared in: the page's ``lang``, or a ``lang`` on an element around it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import pytest
from babel.messages.pofile import read_po
from playwright.sync_api import Browser, Page
from tests.conftest import FIXTURE_DATA_DIR
from tests.e2e.languages import confidences, other_language

from clusterscout.domain.languages import TRANSLATED_LANGUAGES
from clusterscout.web.i18n import po_path

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]

# One URL per page type and state: home, listings (plain, filtered, empty, with a reference
# workload), providers (with offers, by quote, without multi-node), comparison (picker,
# table, reference), plan (form, answer, bad input), downloads, changes (all, one provider)
# and the error pages.
PAGES: Final = (
    "/{lang}/",
    "/{lang}/multi-node/",
    "/{lang}/multi-node/?ref=70b-fsdp-16",
    "/{lang}/offers/",
    "/{lang}/offers/?fabric=infiniband&gpu=H100",
    "/{lang}/offers/?min_gbps=999999",
    "/{lang}/providers/alpha/",
    "/{lang}/providers/beta/",
    "/{lang}/providers/gamma/",
    "/{lang}/compare/",
    "/{lang}/compare/?p=alpha&p=beta",
    "/{lang}/compare/?p=alpha&p=beta&ref=70b-fsdp-16",
    "/{lang}/plan/",
    "/{lang}/plan/?model=70B&tokens=1e11",
    "/{lang}/plan/?model=70B&tokens=-3",
    "/{lang}/quote/",
    "/{lang}/quote/?gpus=16&months=6&gpu=H100&currency=BRL",
    "/{lang}/quote/?gpus=0",
    "/{lang}/downloads/",
    "/{lang}/changes/",
    "/{lang}/changes/?provider=beta",
    "/{lang}/providers/no-such-provider/",
    "/{lang}/offers/?min_gbps=lots",
)

# Visible text nodes with the language they are declared in (closest [lang]).
TEXT_NODES_JS: Final = """
() => {
  const out = [];
  const skip = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"]);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    const text = node.textContent.replace(/\\s+/g, " ").trim();
    if (!el || !text || skip.has(el.tagName)) continue;
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const declared = el.closest("[lang]");
    out.push([text, declared ? declared.getAttribute("lang") : ""]);
  }
  return out;
}
"""
OPEN_DETAILS_JS: Final = "() => document.querySelectorAll('details').forEach(d => d.open = true)"


def _messages() -> list[tuple[str, str, str]]:
    """(language, English message, its translation) for every translated UI message."""
    out = []
    for lang in TRANSLATED_LANGUAGES:
        with po_path(lang).open("rb") as fh:
            catalog = read_po(fh, locale=lang)
        for m in catalog:
            ids = m.id if isinstance(m.id, tuple) else (m.id,)
            strings = m.string if isinstance(m.string, tuple) else (m.string,)
            out.extend((lang, i, s) for i, s in zip(ids, strings, strict=False) if i and s)
    return out


def test_the_rule_holds_on_the_sites_own_translations() -> None:
    """On the interface's real translations the rule raises no false alarm, and it catches
    nearly every English message long enough to judge shown on a translated page."""
    messages = _messages()
    assert len(messages) > 1000
    false_alarms = [(lang, s) for lang, _, s in messages if other_language(s, lang)]
    assert false_alarms == []
    judged = [(lang, en) for lang, en, _ in messages if confidences(en) is not None]
    missed = [(lang, en) for lang, en in judged if other_language(en, lang) is None]
    assert len(judged) > 400
    assert len(missed) <= 0.03 * len(judged), missed


def test_names_alone_are_not_judged() -> None:
    assert other_language("HGX H100 GPU cluster, 8x H100 SXM", "de") is None
    assert other_language("https://alpha.example.com/clusters", "fr") is None
    assert other_language("Propose des clusters InfiniBand de 2 à 64 nœuds.", "fr") is None
    assert other_language("Sells InfiniBand clusters of 2 to 64 nodes.", "pt") is not None


@pytest.fixture(scope="module")
def crawler(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("lang", TRANSLATED_LANGUAGES)
def test_no_page_shows_a_sentence_in_another_language(
    crawler: Page, live_server: str, lang: str
) -> None:
    found: list[str] = []
    judged: set[str] = set()
    for path in PAGES:
        url = path.format(lang=lang)
        response = crawler.goto(live_server + url)
        assert response is not None
        assert response.status in {200, 400, 404}, url
        assert crawler.locator("html").get_attribute("lang") == lang, url
        # Collapsed details (filters, storage products) hold text a reader opens: judge it.
        crawler.evaluate(OPEN_DETAILS_JS)
        for text, declared in crawler.evaluate(TEXT_NODES_JS):
            if confidences(text) is not None:
                judged.add(text)
            other = other_language(text, declared.split("-")[0])
            if other is not None:
                found.append(f"{url}: {other} text in a {declared} element: {text[:100]!r}")
    assert not found, "\n".join(found)
    # The crawl is not vacuous: it judged many texts, the catalog's among them.
    assert len(judged) > 100
    with (FIXTURE_DATA_DIR / "locale" / lang / "catalog.po").open("rb") as fh:
        gamma = read_po(fh, locale=lang)["Only single GPU virtual machines are listed."].string
    assert gamma in judged
